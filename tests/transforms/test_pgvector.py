"""WriteToPgVector against a real PostgreSQL with pgvector (a throwaway cluster, tests/pg_server.py)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline

from beam_chunking.errors import ConfigError
from beam_chunking.schema import chunk_rows
from beam_chunking.transforms import ChunkedDocument, DocumentHeader, Failure, Stage
from beam_chunking.transforms.pgvector import DeleteDocument, DocumentRows, GroupChunkRows, WriteToPgVector
from beam_chunking.types import Chunk
from tests.pg_server import PgServer, find_binaries

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (pip install 'psycopg[binary]')")

RUNNER = "FnApiRunner"
DIM = 4
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def pg():
    bin_dir, why = find_binaries()
    if bin_dir is None:
        pytest.skip(why)
    with PgServer(bin_dir) as server:
        yield server


def version(doc_id: str, v: int, bad_vector: bool = False) -> ChunkedDocument:
    """Version ``v`` of a document: v1 has 3 chunks, v2 has 5 at other offsets (other ids)."""
    n, step = (3, 10) if v == 1 else (5, 7)
    chunks = tuple(
        Chunk(doc_id, k, k * step, k * step + 5, f"v{v} {doc_id} #{k}", 2,
              {"page": k + 1, "section_path": ["A", f"s{k}"], "team": "search", "rank": k, "score": 0.5,
               "draft": v == 1},
              [0.0] * (DIM - 1) if bad_vector and k == n - 1 else [float(k), float(v), 0.5, -1.0])
        for k in range(n))
    return ChunkedDocument(DocumentHeader(doc_id, f"/corpus/{doc_id}.md", "text/markdown", 10, "sha"), 1, chunks,
                           "recursive", f"fp{v}")


def write(pg, table, elements, **options):
    options.setdefault("dimension", DIM)
    with TestPipeline(runner=RUNNER) as p:
        p | beam.Create(elements) | WriteToPgVector(pg.dsn, table, **options)


def snapshot(pg, table):
    with psycopg.connect(pg.dsn) as conn:
        return conn.execute(f'SELECT *, embedding::text AS vector FROM {table} ORDER BY chunk_id').fetchall()


def texts(pg, table):
    """document_id -> sorted (chunk_id, text) pairs."""
    out = {}
    for chunk_id, document_id, text in snapshot_columns(pg, table, "chunk_id, document_id, text"):
        out.setdefault(document_id, []).append((chunk_id, text))
    return out


def snapshot_columns(pg, table, columns):
    with psycopg.connect(pg.dsn) as conn:
        return conn.execute(f"SELECT {columns} FROM {table} ORDER BY chunk_id").fetchall()


def expected(*docs):
    return {d.document_id: sorted((c.id, c.text) for c in d.chunks) for d in docs}


def test_creates_table_and_indexes_and_stores_typed_columns(pg):
    write(pg, "created", [version("a", 1)], create=True)
    with psycopg.connect(pg.dsn) as conn:
        indexes = dict(conn.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'created'"))
        row = conn.execute("SELECT chunk_id, chunk_index, chunk_count, start, \"end\", page, section_path, metadata, "
                           "strategy_fingerprint, uri, embedding::text FROM created WHERE chunk_index = 1").fetchone()
        typmod = conn.execute("SELECT atttypmod FROM pg_attribute WHERE attrelid = 'created'::regclass "
                              "AND attname = 'embedding'").fetchone()[0]
    assert "USING hnsw (embedding vector_cosine_ops)" in indexes["created_embedding_hnsw_idx"]
    assert "(document_id)" in indexes["created_document_id_idx"] and "created_pkey" in indexes
    assert typmod == DIM
    write(pg, "created_ivf", [version("a", 1)], create=True, index="ivfflat", metric="inner_product", ivfflat_lists=2)
    with psycopg.connect(pg.dsn) as conn:
        (ivf,) = conn.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'created_ivf_embedding_ivfflat_idx'"
                              ).fetchone()
    assert "USING ivfflat (embedding vector_ip_ops) WITH (lists='2')" in ivf
    assert row == ("a:0000000010", 1, 3, 10, 15, 2, ["A", "s1"],
                   {"team": "search", "rank": 1, "score": 0.5, "draft": True}, "fp1", "/corpus/a.md", "[1,1,0.5,-1]")


def test_rerunning_is_idempotent(pg):
    docs = [version(f"d{k}", 1) for k in range(4)]
    write(pg, "rerun", docs, create=True, batch_size=4)
    first = snapshot(pg, "rerun")
    write(pg, "rerun", docs, batch_size=4)  # as a retried bundle or a re-run would
    assert len(first) == 12 and snapshot(pg, "rerun") == first


def test_changed_documents_are_replaced_and_removed_ones_deleted(pg):
    write(pg, "changes", [version("a", 1), version("b", 1), version("c", 1), version("e", 1)], create=True)
    failed = Failure(DocumentHeader("c", "/corpus/c.md"), Stage.PARSE, "ParseError", "broken this time")
    emptied = ChunkedDocument(DocumentHeader("e", "/corpus/e.md"), 0, (), "recursive", "fp2")
    write(pg, "changes", [version("a", 2), DeleteDocument("b"), failed, emptied, version("n", 2)], batch_size=3)
    # a: only its new chunks (its old ids are gone); b and the emptied e: nothing; c failed: kept.
    assert texts(pg, "changes") == expected(version("a", 2), version("c", 1), version("n", 2))


def test_a_bad_vector_fails_only_its_own_document(pg, caplog):
    write(pg, "rollback", [version("a", 1), version("b", 1)], create=True)
    before = {row[0]: row for row in snapshot(pg, "rollback")}
    # One batch: b's 3-dimensional vector would roll back a's replacement with it.
    with caplog.at_level("WARNING"):
        write(pg, "rollback", [version("a", 2), version("b", 2, bad_vector=True)], dimension=None, batch_size=100)
    after = {row[0]: row for row in snapshot(pg, "rollback")}
    assert {d: sorted(t for _, t in v) for d, v in texts(pg, "rollback").items()} == {
        "a": [f"v2 a #{k}" for k in range(5)], "b": [f"v1 b #{k}" for k in range(3)]}
    assert {k: v for k, v in after.items() if k.startswith("b:")} == {k: v for k, v in before.items() if k.startswith("b:")}
    assert "document b not written (the table keeps its earlier rows)" in caplog.text
    assert "a 3-dimensional embedding, expected 4" in caplog.text


def rows_of(doc):
    return chunk_rows(list(doc.chunks), strategy=doc.strategy, fingerprint=doc.strategy_fingerprint,
                      content_type=doc.content_type, uri=doc.uri)


def test_chunk_rows_grouped_by_document_write_the_same_table(pg):
    docs = [version("a", 1), version("b", 2)]
    rows = [r for d in docs for r in rows_of(d)]
    write(pg, "from_docs", docs, create=True)
    with TestPipeline(runner=RUNNER) as p:
        (p | beam.Create(rows) | GroupChunkRows()
         | WriteToPgVector(pg.dsn, "from_rows", create=True, dimension=DIM, batch_size=2))
    assert snapshot(pg, "from_rows") == snapshot(pg, "from_docs")


def test_foreign_chunk_ids_are_upserted_by_id(pg):
    v1 = version("b", 1)
    foreign = [dict(r, chunk_id=cid) for r, cid in zip(rows_of(version("z", 1)), ["b:0000000000", "z-1", "z-2"])]
    # z's rows carry ids that are not z's own: they go through the temporary table's upsert.
    with TestPipeline(runner=RUNNER) as p:
        p | beam.Create([DocumentRows("z", tuple(foreign))]) | WriteToPgVector(pg.dsn, "foreign_ids", create=True,
                                                                             dimension=DIM)
    assert [d for _, d, _ in snapshot_columns(pg, "foreign_ids", "chunk_id, document_id, text")] == ["z"] * 3
    # b's own id b:0000000000 is held by z: b's direct COPY collides, and the upsert moves it to b.
    write(pg, "foreign_ids", [v1])
    write(pg, "foreign_ids", [v1])
    assert texts(pg, "foreign_ids") == {**expected(v1), "z": [("z-1", "v1 z #1"), ("z-2", "v1 z #2")]}


_KILLED_WRITER = """
import sys, time
import apache_beam as beam
from beam_chunking.transforms.pgvector import WriteToPgVector
from tests.transforms.test_pgvector import DIM, version

dsn, table, n = sys.argv[1], sys.argv[2], int(sys.argv[3])

def slowly(doc):
    time.sleep(0.05)  # documents arrive one by one, so the parent can kill the run between commits
    return doc

with beam.Pipeline(runner="FnApiRunner") as p:
    (p | beam.Create([version(f"d{k:03d}", 2) for k in range(n)]) | beam.Map(slowly)
     | WriteToPgVector(dsn, table, dimension=DIM, batch_size=5))
"""


def test_a_killed_run_leaves_each_document_fully_old_or_fully_new(pg, tmp_path):
    n = 60
    old = [version(f"d{k:03d}", 1) for k in range(n)]
    new = [version(f"d{k:03d}", 2) for k in range(n)]
    write(pg, "killed", old, create=True, batch_size=50)
    script = tmp_path / "writer.py"
    script.write_text(_KILLED_WRITER)
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, str(script), pg.dsn, "killed", str(n)], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    try:
        with psycopg.connect(pg.dsn, autocommit=True) as conn:
            while conn.execute("SELECT count(DISTINCT document_id) FROM killed WHERE text LIKE 'v2%'").fetchone()[0] < 3:
                assert proc.poll() is None, f"the writer ended before it was killed: {proc.stderr.read()[-2000:]!r}"
                assert time.monotonic() < deadline, "the writer committed nothing within 60 s"
                time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    found = texts(pg, "killed")
    olds, news = expected(*old), expected(*new)
    states = {d: "old" if found.get(d) == olds[d] else "new" if found.get(d) == news[d] else "mixed" for d in olds}
    assert "mixed" not in states.values(), {d: found.get(d) for d, s in states.items() if s == "mixed"}
    assert 3 <= list(states.values()).count("new") < n  # the kill did come mid-way
    write(pg, "killed", new, batch_size=5)  # the re-run after the crash completes the job
    assert texts(pg, "killed") == news


def test_table_problems_are_reported_when_the_workers_start(pg):
    with pytest.raises(Exception, match="table missing does not exist.*create=True"):
        write(pg, "missing", [version("a", 1)])
    write(pg, "four", [version("a", 1)], create=True)
    with pytest.raises(Exception, match=r"has vector\(4\) embeddings but dimension=8"):
        write(pg, "four", [version("a", 1)], dimension=8)


def test_options_are_validated_at_construction():
    for kwargs, field in [({"create": True}, "dimension"), ({"batch_size": 0}, "batch_size"),
                          ({"index": "flat"}, "index"), ({"metric": "hamming"}, "metric"),
                          ({"dimension": 0}, "dimension")]:
        with pytest.raises(ConfigError) as info:
            WriteToPgVector("postgresql://u@h/db", "t", **kwargs)
        assert info.value.field == field
    with pytest.raises(ConfigError, match="must be a name or schema.name"):
        WriteToPgVector("postgresql://u@h/db", "t; DROP TABLE x")
    shown = WriteToPgVector("postgresql://app:s3cret@db/rag", "public.chunks").display_data()
    assert shown["dsn"] == "postgresql://app:***@db/rag" and shown["table"] == "public.chunks"
    assert "s3cret" not in WriteToPgVector("host=db password=s3cret", "chunks").display_data()["dsn"]


def seq_scans(pg, table):
    with psycopg.connect(pg.dsn) as conn:
        return conn.execute("SELECT coalesce(seq_scan, 0) FROM pg_stat_user_tables WHERE relname = %s",
                            [table]).fetchone()[0]


def test_a_first_load_deletes_by_index_not_by_scanning_the_table(pg):
    # A table never analysed makes the planner expect thousands of rows per document id:
    # without the index forced, each batch's delete would scan the whole table.
    write(pg, "first_load", [], create=True, index=None)
    before = seq_scans(pg, "first_load")
    docs = [version(f"doc{k:03d}", 1) for k in range(300)]
    write(pg, "first_load", docs, batch_size=150)
    assert seq_scans(pg, "first_load") == before
    assert len(snapshot(pg, "first_load")) == 900


@pytest.mark.parametrize("vector, cause", [(["x", 1.0, 2.0, 3.0], "an embedding must be a list of numbers"),
                                           ([float("nan"), 1.0, 2.0, 3.0], "holds NaN or an infinity")])
def test_an_embedding_that_is_not_numbers_fails_its_document_with_its_cause(pg, caplog, vector, cause):
    bad = version("a", 1)
    chunk = bad.chunks[0]
    bad = ChunkedDocument(bad.header, 1, (Chunk(chunk.document_id, 0, chunk.start, chunk.end, chunk.text, 2, {},
                                                vector),), "recursive", "fp1")
    with caplog.at_level("WARNING"):
        write(pg, "not_numbers", [bad, version("b", 1)], create=True)
    assert {d: sorted(t for _, t in v) for d, v in texts(pg, "not_numbers").items()} == {
        "b": [f"v1 b #{k}" for k in range(3)]}
    assert "document a not written" in caplog.text and cause in caplog.text


def test_text_arrays_and_metadata_round_trip_through_binary_copy(pg):
    # The sink's own binary forms for text[] and jsonb: empty, non-ASCII and NULL elements,
    # and every metadata kind, read back as PostgreSQL stores them.
    header = DocumentHeader("u", "/corpus/u.md", "text/markdown", 10, "sha")
    metas = [{"section_path": [], "tags": ["x", "ü"]},
             {"section_path": ["Über", "日本語", ""], "note": "naïve \"quoted\" \\ text", "n": -2**62, "f": 1e-300,
              "none": None, "yes": True}]
    chunks = tuple(Chunk("u", k, k * 10, k * 10 + 5, f"t{k}", 1, m, [0.25, -0.5, 1.0, 2.0]) for k, m in enumerate(metas))
    write(pg, "arrays", [ChunkedDocument(header, 1, chunks, "recursive", "fp")], create=True)
    rows = [DocumentRows("w", ({**chunk_rows([Chunk("w", 0, 0, 1, "w", 1)], strategy="s", fingerprint="f",
                                             content_type="text/plain", uri="w")[0], "section_path": ["a", None]},))]
    write(pg, "arrays", rows)
    got = snapshot_columns(pg, "arrays", "section_path, metadata")
    assert got == [([], {"tags": ["x", "ü"]}),
                   (["Über", "日本語", ""], {"note": 'naïve "quoted" \\ text', "n": -2**62, "f": 1e-300,
                                            "none": None, "yes": True}),
                   (["a", None], {})]


def shifted(doc_id: str, v: int) -> ChunkedDocument:
    """Version ``v`` of a document whose chunks keep the starts (so the ids) of version 1."""
    base = version(doc_id, 1)
    return ChunkedDocument(base.header, 1, tuple(Chunk(c.document_id, c.index, c.start, c.end, f"v{v} {c.text}", 2,
                                                       c.metadata, c.embedding) for c in base.chunks),
                           "recursive", f"fp{v}")


def test_streamed_batches_replace_documents_whole_whatever_their_ids(pg):
    # Rows stream into an open COPY; a batch's stale rows go when it ends. New rows whose ids
    # are taken (a document changed in place) fail the COPY, and the batch is written again
    # the delete-first way: either way each document ends as its last version.
    write(pg, "streamed", [version(f"d{k}", 1) for k in range(6)], create=True, batch_size=7)
    later = [shifted("d0", 2), version("d1", 2), DeleteDocument("d2"), version("d3", 2), version("d3", 1),
             shifted("d4", 3), version("n", 2)]
    write(pg, "streamed", later, batch_size=7)
    want = expected(shifted("d0", 2), version("d1", 2), version("d3", 1), shifted("d4", 3), version("d5", 1),
                    version("n", 2))
    assert texts(pg, "streamed") == want
    # A document twice in one bundle, and one written then deleted: the last version wins.
    write(pg, "streamed_new", [version("x", 1), version("x", 2), version("y", 1), DeleteDocument("y")], create=True,
          batch_size=100)
    assert texts(pg, "streamed_new") == expected(version("x", 2))


def moved(doc_id: str) -> ChunkedDocument:
    """A new version of a document whose chunks all start elsewhere than version 1's (new ids)."""
    base = version(doc_id, 2)
    return ChunkedDocument(base.header, 1, tuple(Chunk(c.document_id, c.index, c.start + 1, c.end + 1, f"moved {c.text}",
                                                       2, c.metadata, c.embedding) for c in base.chunks),
                           "recursive", "fp3")


def test_a_changed_document_whose_ids_moved_streams_and_loses_its_old_rows(pg, monkeypatch):
    from beam_chunking.transforms import pgvector

    write(pg, "moved", [version(f"m{k}", 1) for k in range(3)], create=True)
    delete_first = []
    real = pgvector._WriteFn._write_batch
    monkeypatch.setattr(pgvector._WriteFn, "_write_batch",
                        lambda self, pending: delete_first.extend(pending) or real(self, pending))
    write(pg, "moved", [moved("m0"), moved("m1")], batch_size=100)
    assert delete_first == []  # both streamed: no new id was taken
    assert texts(pg, "moved") == expected(moved("m0"), moved("m1"), version("m2", 1))
    write(pg, "moved", [shifted("m2", 2)], batch_size=100)  # its ids are taken: written again, delete-first
    assert delete_first == ["m2"] and texts(pg, "moved") == expected(moved("m0"), moved("m1"), shifted("m2", 2))


def test_a_streamed_batch_outlasts_the_servers_statement_timeout(pg):
    # The COPY of a streamed batch stays open while the next documents are made.
    docs = [version(f"t{k}", 1) for k in range(4)]
    with TestPipeline(runner=RUNNER) as p:
        (p | beam.Create(docs) | beam.Map(lambda d: time.sleep(0.3) or d)
         | WriteToPgVector(pg.dsn + " options='-c statement_timeout=200'", "timeout", create=True, dimension=DIM))
    assert texts(pg, "timeout") == expected(*docs)


def test_a_row_that_cannot_be_sent_fails_its_batch_with_the_documents_named(pg):
    good = version("s1", 1)
    write(pg, "unsendable", [good], create=True)
    before = snapshot(pg, "unsendable")
    rows = [dict(r, metadata={"tags": {1, 2}}) for r in rows_of(version("s2", 1))]  # a set: no JSON for it
    with pytest.raises(Exception, match=r"writing \d+ rows of 2 documents \(s1, s2\).*rolled back"):
        write(pg, "unsendable", [version("s1", 2), DocumentRows("s2", tuple(rows))], batch_size=100)
    assert snapshot(pg, "unsendable") == before


def test_a_pipeline_wired_wrong_still_stops_the_job(pg):
    # Rows not grouped by document are the pipeline's mistake, not one document's: no warning
    # and a successful job with nothing written.
    with pytest.raises(Exception, match="group chunk rows by document with GroupChunkRows"):
        write(pg, "wiring", [{"chunk_id": "d:0000000000", "document_id": "d"}], create=True)
