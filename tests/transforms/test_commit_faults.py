"""A kill at each step of the commit leaves the old output or the new one, whole, never a mix.

Each case forks a child that commits a new run over a committed one and is killed with
SIGKILL at one step (a real kill: no ``finally``, no clean-up). The parent then reads the
output through its manifest, as a reader would, and runs a third commit, which must remove
the leftovers and take over the dead run's lease.
"""
import io
import os
import signal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from apache_beam.io.filesystems import FileSystems

from beam_chunking.transforms._commit import commit
from beam_chunking.transforms._shards import ShardRef
from beam_chunking.transforms.lease import LEASE, acquire, read_lease
from beam_chunking.transforms.manifest import MANIFEST, new_run_id, read_manifest, read_table, run_folder, table_files
from beam_chunking.transforms.write import SCHEMAS

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork and SIGKILL")


def _value(type_):
    if pa.types.is_string(type_):
        return "x"
    if pa.types.is_integer(type_) or pa.types.is_floating(type_):
        return 0
    if pa.types.is_boolean(type_):
        return False
    return []  # lists and maps


def table_file(out, table, run_id, name, rows):
    """A Parquet file of ``rows`` rows in ``table``'s run folder (non-nullable columns filled),
    written through Beam's file systems: a local folder or ``gs://`` alike."""
    schema = SCHEMAS[table]
    data = [{f.name: (f"{run_id}-{name}-{i}" if f.name in ("chunk_id", "document_id") else
                      None if f.nullable else _value(f.type)) for f in schema} for i in range(rows)]
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(data, schema=schema), buffer)
    path = f"{run_folder(out, table, run_id)}/{name}"
    with FileSystems.create(path) as f:
        f.write(buffer.getvalue())
    return ShardRef(table, path)


def new_run(out, sizes):
    run_id = new_run_id()
    refs = [table_file(out, table, run_id, f"part-{k}.parquet", n)
            for table, counts in sizes.items() for k, n in enumerate(counts)]
    return run_id, refs


OLD = {"chunks": [4, 3], "documents": [2, 1]}
NEW = {"chunks": [5], "documents": [2, 2, 1], "parents": [1]}


def _kill():
    os.kill(os.getpid(), signal.SIGKILL)


def _kill_at(step):
    """Patch the file-system calls of the commit so that the child dies at ``step``."""
    rename, delete, create = FileSystems.rename, FileSystems.delete, FileSystems.create

    def killing_rename(sources, destinations):
        if step == "before the manifest rename":
            _kill()
        rename(sources, destinations)
        if step == "right after the manifest rename":
            _kill()

    def killing_delete(paths):
        paths = sorted(paths)
        if step == "during garbage removal" and len(paths) > 1:
            delete(paths[:len(paths) // 2])
            _kill()
        delete(paths)
        if step == "before the lease is released" and not any(p.endswith(LEASE) for p in paths):
            _kill()

    def killing_create(path, *args, **kwargs):
        handle = create(path, *args, **kwargs)
        if step == "while writing the manifest" and path.endswith(".tmp"):
            handle.write(b'{"format": 2, "tab')  # half a manifest on disk, then the kill
            handle.flush()
            _kill()
        return handle

    FileSystems.rename, FileSystems.delete, FileSystems.create = (
        staticmethod(killing_rename), staticmethod(killing_delete), staticmethod(killing_create))


def expect_whole(out, sizes, run_id):
    manifest = read_manifest(out)
    assert manifest["run_id"] == run_id
    for table in ("chunks", "documents", "parents"):
        rows = sum(sizes.get(table, []))
        assert read_table(out, table).num_rows == manifest["rows"][table] == rows, table
        assert all(FileSystems.exists(p) for p in table_files(out, table))


#: Each commit step a kill is injected at (see :func:`_kill_at`), and whether the new run is
#: published once the kill has happened there.
COMMIT_STEPS = [
    ("while writing the manifest", False),
    ("before the manifest rename", False),
    ("right after the manifest rename", True),
    ("during garbage removal", True),
    ("before the lease is released", True),
]


@pytest.mark.parametrize("step, published", COMMIT_STEPS)
def test_a_kill_at_each_commit_step_leaves_one_whole_output(tmp_path, step, published):
    out = str(tmp_path / "out")
    old, refs = new_run(out, OLD)
    commit(out, old, refs, SCHEMAS, "zstd")
    new, refs = new_run(out, NEW)
    child = os.fork()
    if child == 0:  # pragma: no cover - the child never returns
        try:
            acquire(out, new)
            _kill_at(step)
            commit(out, new, refs, SCHEMAS, "zstd", leased=True)
        finally:
            os._exit(3)  # reached only if the kill did not happen
    _, status = os.waitpid(child, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, f"the child was not killed {step}"
    if published:
        expect_whole(out, NEW, new)
    else:
        expect_whole(out, OLD, old)
    # The next run takes over the dead run's lease and removes every leftover.
    third, refs = new_run(out, {"documents": [1]})
    acquire(out, third)
    commit(out, third, refs, SCHEMAS, "zstd", leased=True)
    expect_whole(out, {"documents": [1]}, third)
    left = sorted(os.path.relpath(os.path.join(d, f), out) for d, _, fs in os.walk(out) for f in fs)
    assert left == sorted([MANIFEST, *(p for files in read_manifest(out)["tables"].values() for p in files)])
    assert read_lease(out) is None
