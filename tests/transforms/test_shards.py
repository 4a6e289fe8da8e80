"""The bundle writer keeps its buffer bounded in bytes, not only in rows, and leaves nothing
behind when it fails."""
import os

import pyarrow.parquet as pq
import pytest

from beam_chunking.schema import CHUNKS_SCHEMA, DOCUMENTS_SCHEMA, chunk_batch, chunk_rows
from beam_chunking.transforms import _shards
from beam_chunking.types import Chunk


def test_row_groups_are_cut_by_buffered_bytes(tmp_path, monkeypatch):
    monkeypatch.setattr(_shards, "BYTES_PER_GROUP", 64 * 1024)
    files = _shards._TableFiles({"chunks": str(tmp_path / "c"), "documents": str(tmp_path / "d")},
                                {"chunks": CHUNKS_SCHEMA, "documents": DOCUMENTS_SCHEMA}, "zstd", None)
    text = "x" * 2000
    refs = []
    for d in range(100):  # 100 documents of 10 chunks: ~2 MB of text, far under 50,000 rows
        chunks = [Chunk(f"doc{d}", k, k * 2000, (k + 1) * 2000, text, 1) for k in range(10)]
        rows = chunk_rows(chunks, strategy="fixed", fingerprint="f", content_type="text/plain", uri=f"{d}.txt")
        refs += list(files.add("chunks", chunk_batch(rows)))
    files.close()
    [ref] = refs
    meta = pq.ParquetFile(ref.path).metadata
    assert meta.num_rows == 1000 and meta.num_row_groups >= 10  # 64 KiB groups, not one 2 MB buffer


def _open_paths():
    import os

    fds = "/proc/self/fd"
    return {os.path.realpath(f"{fds}/{fd}") for fd in os.listdir(fds) if os.path.exists(f"{fds}/{fd}")}


@pytest.mark.parametrize("fails_in", ["a row group written while adding", "the last row group, at close"])
def test_a_bundle_that_fails_closes_and_removes_its_files(tmp_path, monkeypatch, fails_in):
    if fails_in.startswith("a row group"):
        monkeypatch.setattr(_shards, "ROWS_PER_GROUP", 1)
    files = _shards._TableFiles({"chunks": str(tmp_path / "c"), "documents": str(tmp_path / "d")},
                                {"chunks": CHUNKS_SCHEMA, "documents": DOCUMENTS_SCHEMA}, "zstd", None)
    refs = files.added(_shards.Rows(None, {"document_id": "a", "uri": "a.txt", "status": "ok"}))
    refs += files.added(_shards.Rows(None, {"document_id": "b", "uri": "b.txt", "status": "ok"}))
    assert os.path.exists(refs[0].path)
    bad = {"document_id": None, "uri": "c.txt", "status": "ok"}  # a non-nullable column: its write fails
    with pytest.raises(Exception):
        files.added(_shards.Rows(None, bad))
        files.close()
    assert not os.path.exists(refs[0].path) and files.writers == {}
    assert not any(str(tmp_path) in p for p in _open_paths())  # no handle keeps removed bytes on disk
