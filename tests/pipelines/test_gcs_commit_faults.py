"""On ``gs://`` too, a kill at each step of the commit leaves the old output or the new one, whole.

The storage-emulator twin of ``tests/transforms/test_commit_faults.py``: a child process
(started fresh, so that it shares no HTTP connection with this one) commits a new run over a
committed one on gcp-storage-emulator and is killed with SIGKILL at one step; this process
then reads the output through its manifest and runs a third commit, which must take over the
dead run's lease and remove every leftover object.
"""
import json
import os
import signal
import subprocess
import sys

import pytest

pytest.importorskip("gcp_storage_emulator")

from apache_beam.io.filesystems import FileSystems  # noqa: E402

from beam_chunking.transforms._commit import commit  # noqa: E402
from beam_chunking.transforms.lease import acquire, read_lease  # noqa: E402
from beam_chunking.transforms.manifest import MANIFEST, read_manifest  # noqa: E402
from beam_chunking.transforms.write import SCHEMAS  # noqa: E402
from tests.pipelines.gcs_emulator import gcs_emulator  # noqa: E402
from tests.transforms.test_commit_faults import COMMIT_STEPS, NEW, OLD, expect_whole, new_run  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUCKET = "beam-chunking-faults"

# The child: take the lease, arm the kill at the step, commit (see test_commit_faults._kill_at).
CHILD = """
import json, sys
from tests.transforms.test_commit_faults import _kill_at
from beam_chunking.transforms._commit import commit
from beam_chunking.transforms._shards import ShardRef
from beam_chunking.transforms.lease import acquire
from beam_chunking.transforms.write import SCHEMAS
out, run_id, step, refs = json.loads(sys.argv[1])
acquire(out, run_id)
_kill_at(step)
commit(out, run_id, [ShardRef(*r) for r in refs], SCHEMAS, "zstd", leased=True)
sys.exit(3)  # reached only if the kill did not happen
"""


@pytest.fixture(scope="module")
def gcs(tmp_path_factory):
    with gcs_emulator(tmp_path_factory.mktemp("gcs"), BUCKET) as root:
        yield root


def objects(out):
    return sorted(m.path[len(out) + 1:] for m in FileSystems.match([f"{out}/**"])[0].metadata_list)


@pytest.mark.parametrize("step, published", COMMIT_STEPS)
def test_a_kill_at_each_commit_step_on_gcs_leaves_one_whole_output(gcs, step, published):
    out = f"{gcs}/{step.replace(' ', '-')}"
    old, refs = new_run(out, OLD)
    commit(out, old, refs, SCHEMAS, "zstd")
    new, refs = new_run(out, NEW)
    child = subprocess.run([sys.executable, "-c", CHILD, json.dumps([out, new, step, [list(r) for r in refs]])],
                           cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT), capture_output=True, text=True,
                           timeout=120)
    assert child.returncode == -signal.SIGKILL, f"the child was not killed {step}: {child.stderr[-2000:]}"
    expect_whole(out, NEW if published else OLD, new if published else old)
    third, refs = new_run(out, {"documents": [1]})
    acquire(out, third)
    commit(out, third, refs, SCHEMAS, "zstd", leased=True)
    expect_whole(out, {"documents": [1]}, third)
    named = [p[len(out) + 1:] if p.startswith(out) else p for files in read_manifest(out)["tables"].values()
             for p in files]
    assert objects(out) == sorted([MANIFEST, *named])
    assert read_lease(out) is None
