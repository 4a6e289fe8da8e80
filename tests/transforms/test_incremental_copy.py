"""The step that carries an incremental run's unchanged rows over, on real Parquet files."""
import errno
import os

import pyarrow as pa
import pytest
import pyarrow.parquet as pq
from apache_beam.pvalue import TaggedOutput

from beam_chunking.schema import CHUNKS_SCHEMA
from beam_chunking.transforms import incremental
from beam_chunking.transforms._shards import ShardRef
from beam_chunking.transforms.write import SCHEMAS


def chunks_file(path, docs, rows_per_group):
    """A chunks file of 2 chunks per document, in row groups of ``rows_per_group`` rows."""
    rows = [{"chunk_id": f"{d}:{k}", "document_id": d, "chunk_index": k, "chunk_count": 2, "text": f"{d}{k}",
             "start": k, "end": k + 1, "strategy": "recursive", "strategy_fingerprint": "f"}
            for d in docs for k in range(2)]
    pq.write_table(pa.Table.from_pylist(rows, schema=CHUNKS_SCHEMA), path, row_group_size=rows_per_group,
                   compression="zstd")
    return rows


def copy(tmp_path, path, stale):
    fn = incremental._CopyUnchangedFn({"chunks": str(tmp_path / "new")}, SCHEMAS, "zstd")
    out = list(fn.process(("chunks", (path,)), stale))
    refs = [o for o in out if isinstance(o, ShardRef)]
    left = sorted(o.value for o in out if isinstance(o, TaggedOutput))
    return refs, left


def test_rows_of_documents_that_go_are_left_out_across_row_groups(tmp_path):
    path = str(tmp_path / "old.parquet")
    rows = chunks_file(path, ["a", "b", "c", "d", "e"], rows_per_group=3)  # groups cut documents in two
    assert pq.ParquetFile(path).num_row_groups == 4
    refs, left = copy(tmp_path, path, ["b", "d"])
    kept = pq.read_table(refs[0].path).to_pylist()
    assert [r["chunk_id"] for r in kept] == [r["chunk_id"] for r in rows if r["document_id"] in "ace"]
    assert left == [("b", ("chunk_ids", ["b:0", "b:1"])), ("d", ("chunk_ids", ["d:0", "d:1"]))]


def test_a_file_with_nothing_to_leave_out_is_linked_whole(tmp_path):
    path = str(tmp_path / "old.parquet")
    chunks_file(path, ["a", "b"], rows_per_group=2)
    refs, left = copy(tmp_path, path, ["zz"])  # a document that goes, with no row in this file
    assert left == [] and os.path.samefile(refs[0].path, path)
    (again,), nothing_left = copy(tmp_path, path, [])  # nothing changed: linked again, without reading a row
    assert nothing_left == [] and os.path.samefile(again.path, path) and again.path != refs[0].path


def test_a_refused_link_falls_back_to_a_copy(tmp_path, monkeypatch):
    path = str(tmp_path / "old.parquet")
    chunks_file(path, ["a"], rows_per_group=2)

    def refuse(source, target):
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(incremental.os, "link", refuse)
    refs, _ = copy(tmp_path, path, [])
    assert not os.path.samefile(refs[0].path, path)
    with open(refs[0].path, "rb") as new, open(path, "rb") as old:
        assert new.read() == old.read()


def test_a_file_whose_rows_all_go_writes_nothing(tmp_path):
    path = str(tmp_path / "old.parquet")
    chunks_file(path, ["a", "b"], rows_per_group=2)
    refs, left = copy(tmp_path, path, ["a", "b"])
    assert refs == [] and [doc for doc, _ in left] == ["a", "b"]


def sized_files(tmp_path, sizes):
    paths = []
    for i, size in enumerate(sizes):
        path = tmp_path / f"part-{i:02d}.parquet"
        with open(path, "wb") as f:
            f.truncate(size)  # sparse: only the size is looked at
        paths.append(str(path))
    return paths


def test_a_table_of_few_files_copies_each_alone(tmp_path):
    paths = sized_files(tmp_path, [100] * incremental.MERGE_SMALL_FILES)
    assert incremental.copy_groups(paths) == [(p,) for p in paths]


def test_more_small_files_than_the_limit_are_merged_and_large_ones_stay_alone(tmp_path, monkeypatch):
    monkeypatch.setattr(incremental, "MERGED_FILE_BYTES", 1000)
    big = incremental.SMALL_FILE_BYTES
    paths = sized_files(tmp_path, [big, 400, 400, 400, 400, 400, 400, 400, 400, 400])
    groups = incremental.copy_groups(paths)
    assert groups[0] == (paths[0],)  # not small: copied alone, as before
    assert groups[1:] == [tuple(paths[1:3]), tuple(paths[3:5]), tuple(paths[5:7]), tuple(paths[7:9]), (paths[9],)]
    # Only the small files count toward the limit.
    assert incremental.copy_groups(paths[:9] + [paths[0]]) == [(p,) for p in paths[:9] + [paths[0]]]


def test_merged_files_become_one_file_without_the_rows_that_go(tmp_path):
    first, second = str(tmp_path / "one.parquet"), str(tmp_path / "two.parquet")
    rows = chunks_file(first, ["a", "b"], rows_per_group=3) + chunks_file(second, ["c", "d"], rows_per_group=1)
    fn = incremental._CopyUnchangedFn({"chunks": str(tmp_path / "new")}, SCHEMAS, "zstd")
    out = list(fn.process(("chunks", (first, second)), ["b", "c"]))
    (ref,) = [o for o in out if isinstance(o, ShardRef)]
    assert sorted(o.value for o in out if isinstance(o, TaggedOutput)) == [
        ("b", ("chunk_ids", ["b:0", "b:1"])), ("c", ("chunk_ids", ["c:0", "c:1"]))]
    kept = pq.read_table(ref.path).to_pylist()
    assert [(r["chunk_id"], r["text"]) for r in kept] == [(r["chunk_id"], r["text"]) for r in rows
                                                          if r["document_id"] in "ad"]
    (whole,) = fn.process(("chunks", (first, second)), [])  # nothing goes: merged all the same
    assert not os.path.samefile(whole.path, first) and pq.read_table(whole.path).num_rows == len(rows)


def test_a_group_takes_at_most_so_many_files(tmp_path, monkeypatch):
    monkeypatch.setattr(incremental, "MERGED_FILES", 4)
    paths = sized_files(tmp_path, [10] * 10)
    assert incremental.copy_groups(paths) == [tuple(paths[0:4]), tuple(paths[4:8]), tuple(paths[8:10])]


def test_without_sizes_nothing_is_merged(tmp_path):
    folder = tmp_path / "run[1]"  # a folder name that a listing would read as a pattern
    folder.mkdir()
    paths = sized_files(folder, [10] * 10)
    assert incremental.copy_groups(paths) == [(p,) for p in paths]


def test_a_merged_file_has_row_groups_of_the_writers_size_not_one_per_input(tmp_path):
    paths = []
    for i in range(30):
        paths.append(str(tmp_path / f"small-{i:02d}.parquet"))
        chunks_file(paths[-1], [f"d{i:02d}"], rows_per_group=1)  # two row groups of one row each
    fn = incremental._CopyUnchangedFn({"chunks": str(tmp_path / "new")}, SCHEMAS, "zstd")
    (ref,) = [o for o in fn.process(("chunks", tuple(paths)), ["d07"]) if isinstance(o, ShardRef)]
    merged = pq.ParquetFile(ref.path)
    assert merged.num_row_groups == 1 and merged.metadata.num_rows == 58
    assert sum(os.path.getsize(p) for p in paths) > 10 * os.path.getsize(ref.path)


def test_nothing_changed_reads_no_column(tmp_path, monkeypatch):
    path = str(tmp_path / "old.parquet")
    chunks_file(path, ["a", "b"], rows_per_group=2)

    def refuse(*args, **kwargs):
        raise AssertionError("a column was read")

    monkeypatch.setattr(pq.ParquetFile, "read", refuse)
    monkeypatch.setattr(pq.ParquetFile, "read_row_group", refuse)
    (ref,), _ = copy(tmp_path, path, [])
    assert os.path.samefile(ref.path, path)


def test_a_failed_size_listing_merges_nothing(tmp_path, monkeypatch):
    paths = sized_files(tmp_path, [10] * 10)

    def fail(patterns):
        raise OSError("the store is unreachable")

    monkeypatch.setattr(incremental.FileSystems, "match", fail)
    assert incremental.copy_groups(paths) == [(p,) for p in paths]


def test_a_failed_merge_leaves_no_file(tmp_path):
    good = str(tmp_path / "good.parquet")
    chunks_file(good, ["a"], rows_per_group=2)
    folder = tmp_path / "new"
    fn = incremental._CopyUnchangedFn({"chunks": str(folder)}, SCHEMAS, "zstd")
    with pytest.raises(FileNotFoundError):
        list(fn.process(("chunks", (good, str(tmp_path / "gone.parquet"))), []))
    assert not folder.exists() or os.listdir(folder) == []
