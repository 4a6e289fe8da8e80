"""A full disk, for real: the output lies on a 1 MiB tmpfs mounted in a private mount namespace.

``unshare --user --map-root-user --mount`` lets an unprivileged process mount its own tmpfs
(where the kernel allows user namespaces); elsewhere the test is skipped. Each run is a
``beam-chunking run`` through :func:`~beam_chunking.pipelines.cli.main` in a child process
that sees the tmpfs; nothing is simulated: the writes fail with the kernel's ENOSPC.
"""
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DISK_BYTES = 1024 * 1024
#: A run that started long before any real one and was killed: its folder sorts first.
CRASHED = "run-20000101T000000000Z-0badc0de"

# Text that compresses poorly (random base32 words), so the tables are about as large as the input.
_WRITE_INPUTS = """
import base64, os, random, sys
def words(n, seed):
    r = random.Random(seed)
    return " ".join(base64.b32encode(r.randbytes(5)).decode() for _ in range(n // 9))
for folder, size in (("big", 2_000_000), ("small", 250_000)):
    os.makedirs(os.path.join(sys.argv[1], folder))
    for k in range(4):
        with open(os.path.join(sys.argv[1], folder, f"d{k}.txt"), "w") as f:
            f.write(words(size // 4, f"{folder}-{k}"))
"""

# One child process: the runs of argv[3:] ("big" or "small", "+" for --overwrite) into the tmpfs.
_RUNS = """
import json, os, sys
from beam_chunking.pipelines.cli import main
from beam_chunking.transforms.manifest import read_manifest
inputs, out = sys.argv[1], os.path.join(sys.argv[2], "out")
report = []
for run in sys.argv[3:]:
    name, overwrite = run.rstrip("+"), run.endswith("+")
    code = main(["run", "--input", f"{inputs}/{name}/*", "--output", out] + (["--overwrite", "--max-deletions", "100%"] if overwrite else []))
    files = sorted(os.path.relpath(os.path.join(d, f), out) for d, _, fs in os.walk(out) for f in fs)
    manifest = read_manifest(out) if os.path.exists(os.path.join(out, "_manifest.json")) else None
    report.append({"code": code, "files": files, "documents": manifest and manifest["rows"]["documents"]})
print("REPORT " + json.dumps(report), flush=True)
os._exit(0)  # the runner's threads of a failed job need not be waited for
"""


def _can_mount_tmpfs(tmp_path) -> bool:
    if not shutil.which("unshare"):
        return False
    probe = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
                            f"mount -t tmpfs -o size=64k tmpfs {tmp_path}"], capture_output=True)
    return probe.returncode == 0


def _in_tmpfs(tmp_path, disk, steps):
    """Mount a fresh 1 MiB tmpfs at ``disk`` and run ``steps`` (shell commands) there."""
    script = f"mount -t tmpfs -o size={DISK_BYTES} tmpfs {disk} && " + " && ".join(steps)
    done = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": REPO}, cwd=REPO)
    reports = [json.loads(line[len("REPORT "):]) for line in done.stdout.splitlines() if line.startswith("REPORT ")]
    assert reports, done.stdout + done.stderr
    return [run for report in reports for run in report], done.stderr


def _python(tmp_path, runs):
    return f"{sys.executable} {tmp_path / 'runs.py'} {tmp_path / 'in'} {tmp_path / 'disk'} {' '.join(runs)}"


@pytest.fixture
def disk(tmp_path):
    if os.name != "posix" or not _can_mount_tmpfs(tmp_path):
        pytest.skip("cannot mount a tmpfs in a user namespace here")
    subprocess.run([sys.executable, "-c", _WRITE_INPUTS, str(tmp_path / "in")], check=True)
    (tmp_path / "runs.py").write_text(_RUNS)
    (tmp_path / "disk").mkdir()
    return tmp_path


def test_a_run_that_fills_the_disk_leaves_nothing_behind_so_the_next_one_fits(disk):
    # Each run in its own process, as from a shell; then two in one process (a notebook),
    # where a failed bundle's open files would keep their bytes on disk after removal.
    runs, stderr = _in_tmpfs(disk, disk / "disk", [
        _python(disk, ["big"]),
        _python(disk, ["small+"]),
        _python(disk, ["big+", "small+"]),
    ])
    failed, fits, failed_again, fits_again = runs
    assert failed["code"] == 1 and "No space left on device" in stderr
    assert failed["files"] == []  # the failed run removed its own files (its lease too)
    assert (fits["code"], fits["documents"]) == (0, 4)
    assert failed_again["code"] == 1 and failed_again["documents"] == 4  # the previous output is intact
    assert (fits_again["code"], fits_again["documents"]) == (0, 4)


def test_a_killed_runs_leftovers_are_removed_before_the_next_run_writes(disk):
    # A run killed mid-write (nothing of it can clean up) left 850 KB in the 1 MiB disk.
    filler = f"{disk / 'disk' / 'out' / 'chunks' / CRASHED}"
    lease_leftover = f"{disk / 'disk' / 'out' / '_lease.json'}.{CRASHED}.tmp"
    runs, stderr = _in_tmpfs(disk, disk / "disk", [
        f"mkdir -p {filler}", f"head -c 870000 /dev/urandom > {filler}/part-x.parquet",
        f"touch {lease_leftover}",
        _python(disk, ["small+"]),
    ])
    (fits,) = runs
    assert (fits["code"], fits["documents"]) == (0, 4), stderr
    assert not any(CRASHED in f for f in fits["files"])
