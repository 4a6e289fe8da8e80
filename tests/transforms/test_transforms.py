"""TestPipeline tests of each transform, on the in-process runner."""
import glob
import os

import apache_beam as beam
import pyarrow.parquet as pq
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from beam_chunking.errors import OutputExistsError
from beam_chunking.ids import document_id
from beam_chunking.strategies import RecursiveChunker, Router, SentenceChunker
from beam_chunking.transforms import (ChunkDocuments, ChunkedDocument, ChunkFiles, DocumentHeader, Failure, ParseDocuments,
                                      ReadDocuments, Stage, WriteChunkTable)
from beam_chunking.transforms.manifest import table_files
from beam_chunking.types import Document, ParsedDocument, Section

RUNNER = "FnApiRunner"


def pipeline():
    return TestPipeline(runner=RUNNER)


def write(folder, files):
    for name, data in files.items():
        path = os.path.join(folder, name)
        with open(path, "wb") as f:
            f.write(data)


def test_read_documents(tmp_path):
    write(tmp_path, {"a.txt": b"hello", "b.md": b"# x"})
    with pipeline() as p:
        docs = p | ReadDocuments(str(tmp_path / "*")) | beam.Map(lambda d: (os.path.basename(d.uri), d.content_type, d.data, d.id == document_id(d.uri)))
        assert_that(docs, equal_to([("a.txt", "text/plain", b"hello", True), ("b.md", "text/markdown", b"# x", True)]))


def test_read_documents_size_cap_is_a_failure(tmp_path):
    write(tmp_path, {"big.txt": b"x" * 100, "ok.txt": b"y"})
    with pipeline() as p:
        out = p | ReadDocuments(str(tmp_path / "*"), max_bytes=10) | beam.Map(
            lambda e: (type(e).__name__, os.path.basename(e.uri), getattr(e, "stage", None)))
        assert_that(out, equal_to([("Failure", "big.txt", "read"), ("Document", "ok.txt", None)]))


def test_parse_documents_failures_pass_through():
    docs = [Document("a", "a.txt", b"fine", "text/plain"), Document("b", "b.gif", b"GIF8", "image/gif"),
            Document("c", "c.txt", b"\xff\xfe\xfd", "text/plain")]
    with pipeline() as p:
        out = p | beam.Create(docs) | ParseDocuments() | beam.Map(
            lambda e: (e.id if isinstance(e, ParsedDocument) else e.document_id, type(e).__name__,
                       getattr(e, "error_type", None)))
        assert_that(out, equal_to([("a", "ParsedDocument", None), ("b", "Failure", "UnsupportedContentType"),
                                   ("c", "Failure", "DecodeError")]))


def test_parse_documents_replace_policy():
    # Neither UTF-8 nor text in any legacy encoding (a C0 control among undefined bytes).
    docs = [Document("c", "c.txt", b"ok \x81\x02\xfe", "text/plain")]
    with pipeline() as p:
        out = p | beam.Create(docs) | ParseDocuments(decode_errors="replace") | beam.Map(
            lambda d: (d.metadata["decode_replacements"], d.metadata["encoding"], d.metadata["encoding_confidence"]))
        assert_that(out, equal_to([(2, "utf-8", 0.0)]))


def test_chunk_documents_with_router_and_token_counts():
    text = "Hello there. " * 10
    docs = [ParsedDocument("m", "m.md", "text/markdown", text, (Section(0, len(text)),)),
            ParsedDocument("p", "p.pdf", "application/pdf", text, (Section(0, len(text)),))]
    router = Router({"text/markdown": SentenceChunker(max_chunk_size=20, overlap=0)})
    with pipeline() as p:
        out = p | beam.Create(docs) | ChunkDocuments(router) | beam.Map(
            lambda e: (type(e).__name__, getattr(e, "strategy", None), getattr(e, "error_type", None),
                       all(c.token_count for c in getattr(e, "chunks", ()))))
        assert_that(out, equal_to([("ChunkedDocument", "sentence", None, True),
                                   ("Failure", None, "UnsupportedContentType", True)]))


def test_write_chunk_table_rows_and_failures(tmp_path):
    from beam_chunking.types import Chunk

    good = ChunkedDocument(DocumentHeader("d1", "d1.txt", "text/plain", 5, "s"), 1, (Chunk("d1", 0, 0, 5, "hello", 1, {"n": 3}),),
                           "recursive", "f" * 12)
    bad_meta = ChunkedDocument(DocumentHeader("d2", "d2.txt", "text/plain", 5, "s"), 1, (Chunk("d2", 0, 0, 5, "hello", 1, {"x": {}}),),
                               "recursive", "f" * 12)
    failed = Failure(DocumentHeader("d3", "d3.pdf"), Stage.PARSE, "UnsupportedContentType", "no parser")
    # Text no UTF-8 can hold, in a small document (rows checked in Python) and a large one
    # (rows converted at once): each fails alone.
    surrogate = ChunkedDocument(DocumentHeader("d4", "d4.txt", "text/plain", 5, "s"), 1,
                                (Chunk("d4", 0, 0, 5, "he\ud800lo", 1, {}),), "recursive", "f" * 12)
    many = tuple(Chunk("d5", k, k, k + 1, "x" if k < 39 else "\udfff", 1, {}) for k in range(40))
    large = ChunkedDocument(DocumentHeader("d5", "d5.txt", "text/plain", 40, "s"), 1, many, "recursive", "f" * 12)
    with pipeline() as p:
        p | beam.Create([good, bad_meta, failed, surrogate, large]) | WriteChunkTable(str(tmp_path / "out"))
    docs = {r["document_id"]: r for r in pq.read_table(str(tmp_path / "out" / "documents")).to_pylist()}
    assert docs["d1"]["status"] == "ok" and docs["d1"]["chunk_count"] == 1
    assert docs["d2"]["status"] == "failed" and docs["d2"]["stage"] == "validate"
    for bad in ("d4", "d5"):
        assert docs[bad]["status"] == "failed" and docs[bad]["stage"] == "validate", docs[bad]
    assert docs["d3"]["status"] == "failed" and docs["d3"]["error_type"] == "UnsupportedContentType"
    chunks = pq.read_table(str(tmp_path / "out" / "chunks")).to_pylist()
    assert [c["chunk_id"] for c in chunks] == ["d1:0000000000"]
    assert not glob.glob(str(tmp_path / "out" / ".staging-*"))


def test_non_empty_output_refused(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("x")
    p = beam.Pipeline(runner=RUNNER)
    with pytest.raises(OutputExistsError, match="overwrite"):
        p | beam.Create([]) | WriteChunkTable(str(tmp_path / "out"))


def test_chunk_files_composite(tmp_path):
    write(tmp_path, {"a.md": b"# T\n\nSome words here.\n", "z.bin": b"\x7fELF\x00\x00"})
    with pipeline() as p:
        p | ChunkFiles(str(tmp_path / "*"), str(tmp_path / "out"), RecursiveChunker())
    docs = pq.read_table(str(tmp_path / "out" / "documents")).to_pylist()
    assert sorted(d["status"] for d in docs) == ["failed", "ok"]


def test_all_failed_still_writes_an_empty_chunks_table(tmp_path):
    failed = Failure(DocumentHeader("d3", "d3.pdf"), Stage.PARSE, "UnsupportedContentType", "no parser")
    with pipeline() as p:
        p | beam.Create([failed]) | WriteChunkTable(str(tmp_path / "out"))
    chunks = pq.read_table(str(tmp_path / "out" / "chunks"))
    assert chunks.num_rows == 0 and chunks.schema.field("chunk_id").type == "string"
    assert [d["status"] for d in pq.read_table(str(tmp_path / "out" / "documents")).to_pylist()] == ["failed"]


def test_fixed_shard_count(tmp_path):
    from beam_chunking.types import Chunk

    docs = [ChunkedDocument(DocumentHeader(f"d{i}", f"d{i}.txt", "text/plain", 5, "s"), 1, (Chunk(f"d{i}", 0, 0, 5, "hello", 1),),
                            "recursive", "f" * 12) for i in range(20)]
    with pipeline() as p:
        p | beam.Create(docs) | WriteChunkTable(str(tmp_path / "out"), num_shards=3)
    for table in ("chunks", "documents"):
        names = [os.path.basename(f) for f in table_files(str(tmp_path / "out"), table)]
        assert [n[:10] for n in names] == [f"part-0000{i}" for i in range(3)]
    assert pq.read_table(str(tmp_path / "out" / "chunks")).num_rows == 20


def test_metrics_count_documents_chunks_bytes_and_failures(tmp_path):
    from apache_beam.metrics.metric import MetricsFilter

    write(tmp_path, {"a.md": b"# T\n\nSome words here.\n", "b.txt": b"ca\x81\x02", "c.pdf": b"%PDF-1.4"})
    p = beam.Pipeline(runner=RUNNER)
    p | ChunkFiles(str(tmp_path / "*"), str(tmp_path / "out"))
    result = p.run()
    result.wait_until_finish()
    counters = {c.key.metric.name: c.committed
                for c in result.metrics().query(MetricsFilter().with_namespace("beam_chunking"))["counters"]}
    assert counters["documents"] == 3 and counters["bytes"] == 21 + 5 + 8
    assert counters["failed_parse"] == 2 and counters["chunks"] == 1 and counters["documents_chunked"] == 1


def test_a_file_is_read_by_its_matched_size_and_a_grown_one_still_in_full(tmp_path):
    from apache_beam.io.filesystem import FileMetadata
    from apache_beam.io.fileio import ReadableFile

    from beam_chunking.transforms.read import _ReadFn

    path = tmp_path / "log.txt"
    path.write_bytes(b"x" * 50)
    read = _ReadFn(max_bytes=80, metadata={})
    assert read.read_bytes(ReadableFile(FileMetadata(str(path), 50))) == b"x" * 50
    assert read.read_bytes(ReadableFile(FileMetadata(str(path), 20))) == b"x" * 50  # grew after the match
    path.write_bytes(b"x" * 100)
    with pytest.raises(ValueError, match="larger than max_bytes=80"):
        read.read_bytes(ReadableFile(FileMetadata(str(path), 20)))
