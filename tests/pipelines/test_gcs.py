"""``gs://`` input and output end to end, against gcp-storage-emulator on 127.0.0.1."""
import io
import os
import time

import pyarrow.parquet as pq
import pytest

pytest.importorskip("gcp_storage_emulator")

from apache_beam.io.filesystems import FileSystems  # noqa: E402

from beam_chunking.pipelines.cli import main  # noqa: E402
from beam_chunking.transforms.manifest import read_manifest, read_table  # noqa: E402
from tests.helpers import parsed_text  # noqa: E402
from tests.pipelines.gcs_emulator import gcs_emulator  # noqa: E402

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "examples")
BUCKET = "beam-chunking-test"


@pytest.fixture(scope="module")
def gcs(tmp_path_factory):
    with gcs_emulator(tmp_path_factory.mktemp("gcs"), BUCKET) as root:
        yield root


def _upload(root, names):
    for name in names:
        with open(os.path.join(EXAMPLES, name), "rb") as src, FileSystems.create(f"{root}/{name}") as dst:
            dst.write(src.read())


def _objects(prefix):
    return sorted(m.path for m in FileSystems.match([f"{prefix}/**"])[0].metadata_list)


def _table(paths):
    tables = []
    for path in paths:
        with FileSystems.open(path) as f:
            tables.append(pq.read_table(io.BytesIO(f.read())).to_pylist())
    return [row for t in tables for row in t]


def test_gs_input_and_output_end_to_end(gcs):
    names = sorted(os.listdir(EXAMPLES))
    started = time.monotonic()
    _upload(f"{gcs}/in", names)
    assert time.monotonic() - started < 10, "GCS access stalled (credentials lookup)"
    out = f"{gcs}/out"
    assert main(["run", "--input", f"{gcs}/in/*", "--output", out, "--num-shards", "2"]) == 0
    objects = _objects(out)
    docs = _table([p for p in objects if "/documents/" in p])
    assert sorted(d["status"] for d in docs) == ["ok"] * len(names)
    chunks = _table([p for p in objects if "/chunks/" in p])
    sources = {n: parsed_text(os.path.join(EXAMPLES, n)) for n in names}
    for c in chunks:
        assert c["uri"].startswith(f"{gcs}/in/")
        assert c["text"] == sources[c["uri"].rsplit("/", 1)[1]][c["start"]:c["end"]]
    assert not [p for p in objects if ".staging-" in p]

    # Overwrite with fewer documents and one shard: nothing of the first run survives.
    FileSystems.delete([f"{gcs}/in/{n}" for n in names[1:]])
    assert main(["run", "--input", f"{gcs}/in/*", "--output", out]) == 2  # refused without --overwrite
    assert main(["run", "--input", f"{gcs}/in/*", "--output", out, "--overwrite", "--num-shards", "1",
                 "--max-deletions", "100%"]) == 0
    objects = _objects(out)
    manifest = read_manifest(out)
    committed = {f"{out}/{p}" for files in manifest["tables"].values() for p in files}
    assert objects == sorted(committed | {f"{out}/_manifest.json"})  # nothing of the first run survives
    assert all(f"/{manifest['run_id']}/" in p for p in committed) and len(committed) == 4  # one file per table
    assert len(_table([p for p in objects if "/documents/" in p])) == 1
    assert read_table(out, "documents").num_rows == 1

    # Incremental: the unchanged document's rows are copied on the object store.
    chunks = sorted(read_table(out, "chunks").to_pylist(), key=lambda r: r["chunk_id"])
    assert main(["run", "--input", f"{gcs}/in/*", "--output", out, "--incremental"]) == 0
    assert read_table(out, "changes").column("change").to_pylist() == ["unchanged"]
    assert sorted(read_table(out, "chunks").to_pylist(), key=lambda r: r["chunk_id"]) == chunks


CRASHED = "run-20000101T000000000Z-0badc0de"  # a run killed long ago: its id sorts first


def _put(paths, data=b"x"):
    for path in paths:
        with FileSystems.create(path) as f:
            f.write(data)


def test_gs_leftovers_are_removed_and_the_users_objects_stay(gcs):
    _upload(f"{gcs}/in-left", ["release-notes.txt"])
    out = f"{gcs}/left"
    mine = [f"{out}/a/b/c/d/deep.txt", f"{out}/chunks/user-notes.txt", f"{out}/documents/mine/deep/x.txt",
            f"{out}/chunks/run-notes/x.txt"]
    _put(mine[:1])
    # The emptiness check sees an object four folders down.
    assert main(["run", "--input", f"{gcs}/in-left/*", "--output", out]) == 2
    _put(mine[1:])
    # What killed runs left: a run's folders (600 objects in issue 16; 60 here) and the
    # old layout's staging, whose files lay two levels down.
    orphans = [f"{out}/{t}/{CRASHED}/part-{i}.parquet" for t in ("chunks", "documents") for i in range(30)]
    orphans += [f"{out}/.staging-1a2b/chunks/part-0.parquet", f"{out}/.staging-1a2b/documents/part-0.parquet"]
    _put(orphans)
    for _ in range(2):
        assert main(["run", "--input", f"{gcs}/in-left/*", "--output", out, "--overwrite"]) == 0
        manifest = read_manifest(out)
        committed = {f"{out}/{p}" for files in manifest["tables"].values() for p in files}
        assert _objects(out) == sorted(committed | {f"{out}/_manifest.json", *mine})


def test_gs_sweep_and_discard_list_every_object_under_a_run(gcs):
    from beam_chunking.transforms._commit import discard, sweep
    from beam_chunking.transforms.manifest import new_run_id

    out = f"{gcs}/sweep"
    crashed = [f"{out}/{t}/{CRASHED}/part-{i}.parquet" for t in ("chunks", "changes") for i in range(5)]
    _put(crashed + [f"{out}/_manifest.json.{CRASHED}.tmp", f"{out}/chunks/run-notes/mine.txt"])
    assert sweep(out, new_run_id()) == 11
    assert _objects(out) == [f"{out}/chunks/run-notes/mine.txt"]
    failed = new_run_id()
    _put([f"{out}/documents/{failed}/part-a.parquet", f"{out}/_manifest.json.{failed}.tmp"])
    assert discard(out, failed) == 2
    assert _objects(out) == [f"{out}/chunks/run-notes/mine.txt"]
