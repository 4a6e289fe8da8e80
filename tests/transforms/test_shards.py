"""The bundle writer keeps its buffer bounded in bytes, not only in rows."""
import pyarrow.parquet as pq

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
