"""The commit on its own, on real files: what it publishes, what it refuses, what it removes."""
import json
import os
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from beam_chunking.schema import CHUNKS_SCHEMA, DOCUMENTS_SCHEMA
from beam_chunking.transforms._commit import commit
from beam_chunking.transforms.write import SCHEMAS
from beam_chunking.transforms._shards import ShardRef
from beam_chunking.transforms.manifest import new_run_id, read_manifest, read_table, run_folder, table_files



def document_file(output, run_id, ids, name="part-a.parquet"):
    rows = [{"document_id": i, "uri": f"{i}.txt", "status": "ok"} for i in ids]
    path = f"{run_folder(output, 'documents', run_id)}/{name}"
    os.makedirs(os.path.dirname(path), exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=DOCUMENTS_SCHEMA), path)
    return ShardRef("documents", path)


def files_under(folder):
    return sorted(os.path.relpath(os.path.join(d, f), folder) for d, _, fs in os.walk(folder) for f in fs)


def test_commit_publishes_reported_files_and_an_empty_chunks_table(tmp_path):
    out, run_id = str(tmp_path), new_run_id()
    orphan = document_file(out, run_id, ["x"], "part-orphan.parquet")  # a failed attempt's file
    tables = commit(out, run_id, [document_file(out, run_id, ["a", "b"])], SCHEMAS, "zstd")
    assert read_table(out, "documents").column("document_id").to_pylist() == ["a", "b"]
    assert read_table(out, "chunks").num_rows == 0
    assert read_table(out, "parents").num_rows == 0
    assert read_manifest(out)["rows"] == {"chunks": 0, "documents": 2, "parents": 0, "changes": 0}
    assert not os.path.exists(orphan.path)
    assert files_under(out) == sorted(["_manifest.json", *(p for files in tables.values() for p in files)])


def test_missing_or_truncated_file_publishes_nothing(tmp_path):
    out = str(tmp_path)
    first = new_run_id()
    commit(out, first, [document_file(out, first, ["a"])], SCHEMAS, "zstd")
    before = read_manifest(out)
    second = new_run_id()
    gone = ShardRef("documents", f"{run_folder(out, 'documents', second)}/part-gone.parquet")
    with pytest.raises(RuntimeError, match="missing or incomplete"):
        commit(out, second, [gone], SCHEMAS, "zstd")
    truncated = document_file(out, second, ["b"])
    with open(truncated.path, "r+b") as f:
        f.truncate(20)
    with pytest.raises(RuntimeError, match="missing or incomplete"):
        commit(out, second, [truncated], SCHEMAS, "zstd")
    assert read_manifest(out) == before
    assert read_table(out, "documents").column("document_id").to_pylist() == ["a"]


def test_repeated_commit_is_idempotent(tmp_path):
    out, run_id = str(tmp_path), new_run_id()
    refs = [document_file(out, run_id, ["a"])]
    commit(out, run_id, refs, SCHEMAS, "zstd")
    files = files_under(out)
    commit(out, run_id, refs, SCHEMAS, "zstd")  # a runner retrying the commit step
    assert files_under(out) == files
    assert read_table(out, "documents").num_rows == 1


def test_garbage_collection_touches_only_what_runs_wrote(tmp_path):
    out = str(tmp_path)
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / "chunks").mkdir()
    (tmp_path / "chunks" / "README.md").write_text("mine too")
    legacy = tmp_path / "chunks" / "part-00000-of-00001.parquet"  # the old layout's shard
    pq.write_table(CHUNKS_SCHEMA.empty_table(), legacy)
    old, crashed = new_run_id(), new_run_id()
    commit(out, old, [document_file(out, old, ["a"])], SCHEMAS, "zstd")
    old_files = [p for t in ("chunks", "documents") for p in table_files(out, t)]
    document_file(out, crashed, ["c"])  # started, never committed
    time.sleep(0.01)
    current = new_run_id()
    time.sleep(0.01)  # run ids order by start time, to the millisecond
    later = new_run_id()
    document_file(out, later, ["l"])  # a run that started after this one: not ours to remove
    commit(out, current, [document_file(out, current, ["b"])], SCHEMAS, "zstd")
    assert not any(os.path.exists(p) for p in old_files)
    assert not os.path.exists(run_folder(out, "documents", crashed)) and not legacy.exists()
    assert os.path.isdir(run_folder(out, "documents", later))
    assert (tmp_path / "notes.txt").read_text() == "mine" and (tmp_path / "chunks" / "README.md").exists()


def test_fixed_shard_count_fills_missing_shards(tmp_path):
    out, run_id = str(tmp_path), new_run_id()
    ref = document_file(out, run_id, ["a"])
    tables = commit(out, run_id, [ShardRef("documents", ref.path, 1)], SCHEMAS, "zstd", num_shards=4)
    assert len(tables["documents"]) == 4 and len(tables["chunks"]) == 4
    assert read_table(out, "documents").num_rows == 1
    with pytest.raises(RuntimeError, match="reported twice"):
        commit(out, new_run_id(), [ShardRef("documents", ref.path, 1), ShardRef("documents", ref.path + "x", 1)],
               SCHEMAS, "zstd", num_shards=4)


def test_only_folders_named_exactly_like_run_ids_are_runs(tmp_path):
    out = str(tmp_path)
    mine = [tmp_path / "chunks" / "run-2020-old" / "notes.txt", tmp_path / "documents" / "run-notes" / "a.txt",
            tmp_path / "chunks" / "deep" / "er" / "still-mine.parquet", tmp_path / "documents" / "part-a.parquet"]
    for path in mine:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("mine")
    for _ in range(2):  # the second commit removes the first run's files, and nothing of the user's
        run_id = new_run_id()
        commit(out, run_id, [document_file(out, run_id, ["a"])], SCHEMAS, "zstd")
    assert all(p.read_text() == "mine" for p in mine)
    assert files_under(out) == sorted([*(os.path.relpath(p, out) for p in mine), "_manifest.json",
                                       *(p for files in read_manifest(out)["tables"].values() for p in files)])


def test_sweep_removes_what_failed_runs_left_and_nothing_the_manifest_names(tmp_path):
    from beam_chunking.transforms._commit import sweep

    out = str(tmp_path)
    committed = new_run_id()
    commit(out, committed, [document_file(out, committed, ["a"])], SCHEMAS, "zstd")
    kept = files_under(out)
    crashed = new_run_id()
    document_file(out, crashed, ["c"])
    os.makedirs(run_folder(out, "chunks", crashed))
    (tmp_path / f"_manifest.json.{crashed}.tmp").write_text("{")
    (tmp_path / "chunks" / "run-notes").mkdir()
    time.sleep(0.01)
    current = new_run_id()
    assert sweep(out, current) == 3  # two run folders and the temporary manifest
    assert files_under(out) == kept and (tmp_path / "chunks" / "run-notes").is_dir()
    assert sweep(out, current) == 0
    assert read_table(out, "documents").num_rows == 1


def test_discard_removes_a_failed_runs_files_unless_it_was_published(tmp_path):
    from beam_chunking.transforms._commit import discard

    out = str(tmp_path)
    published = new_run_id()
    refs = [document_file(out, published, ["a"])]
    commit(out, published, refs, SCHEMAS, "zstd")
    assert discard(out, published) == 0 and read_table(out, "documents").num_rows == 1
    failed = new_run_id()
    document_file(out, failed, ["b"])
    (tmp_path / f"_manifest.json.{failed}.tmp").write_text("{")
    assert discard(out, failed) == 2
    assert not os.path.exists(run_folder(out, "documents", failed))
    assert not (tmp_path / f"_manifest.json.{failed}.tmp").exists()
    assert read_table(out, "documents").num_rows == 1


def test_the_emptiness_check_looks_at_every_depth(tmp_path):
    from beam_chunking.errors import OutputExistsError
    from beam_chunking.transforms.write import WriteChunkTable

    deep = tmp_path / "out" / "a" / "b" / "c" / "d" / "e" / "f.txt"
    deep.parent.mkdir(parents=True)
    deep.write_text("mine")
    with pytest.raises(OutputExistsError, match="f.txt"):
        WriteChunkTable(str(tmp_path / "out")).plan()


def test_read_table_reads_the_columns_asked_for_and_names_one_that_is_missing(tmp_path):
    out, run_id = str(tmp_path), new_run_id()
    commit(out, run_id, [document_file(out, run_id, ["a", "b"])], SCHEMAS, "zstd")
    assert read_table(out, "documents", columns=["uri", "status"]).to_pydict() == {
        "uri": ["a.txt", "b.txt"], "status": ["ok", "ok"]}
    with pytest.raises(ValueError, match="part-a.parquet: no column statsu"):
        read_table(out, "documents", columns=["uri", "statsu"])


def test_a_manifest_naming_files_outside_the_output_never_makes_a_commit_delete_them(tmp_path, caplog):
    # The attack: a manifest (written by anyone who can write the output, or copied from an
    # older output with absolute paths) names another output's files, by absolute path, by
    # '..' and through a link; the next run's commit must leave them all in place.
    victim = tmp_path / "victim"
    (victim / "chunks").mkdir(parents=True)
    files = {name: victim / "chunks" / name for name in ("abs.parquet", "dots.parquet", "link.parquet")}
    for f in files.values():
        f.write_bytes(b"precious")
    out = tmp_path / "out"
    first = new_run_id()
    commit(str(out), first, [document_file(str(out), first, ["a"])], SCHEMAS, "zstd")
    os.symlink(victim / "chunks", out / "chunks" / "elsewhere")
    manifest = read_manifest(str(out))
    manifest["tables"]["chunks"] += [str(files["abs.parquet"]), "chunks/../../victim/chunks/dots.parquet",
                                     "chunks/elsewhere/link.parquet"]
    (out / "_manifest.json").write_text(json.dumps(manifest))
    second = new_run_id()
    with caplog.at_level("WARNING"):
        commit(str(out), second, [document_file(str(out), second, ["b"])], SCHEMAS, "zstd")
    assert all(f.read_bytes() == b"precious" for f in files.values())
    assert read_table(str(out), "documents").column("document_id").to_pylist() == ["b"]
    assert "names 3 file(s) outside" in caplog.text and "left in place" in caplog.text
    assert not os.path.exists(run_folder(str(out), "documents", first))  # its own files still go


@pytest.mark.parametrize("path, inside", [
    ("gs://bucket/out/chunks/run-1/part-a.parquet", True),
    ("gs://bucket/out/chunks/../../other/chunks/part.parquet", False),
    ("gs://bucket/other/chunks/part.parquet", False),
    ("gs://bucket/out/notes.txt", False),
    ("gs://bucket/outer/chunks/part.parquet", False),
    ("/local/out/chunks/part.parquet", False),
])
def test_on_an_object_store_only_paths_under_the_table_folders_are_owned(path, inside):
    from beam_chunking.transforms._commit import owned

    assert owned("gs://bucket/out", path) is inside
