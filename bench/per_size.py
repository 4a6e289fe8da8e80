"""Throughput by document size: small files against large ones, for each size-bounded chunker.

    python bench/per_size.py [--rounds 5]

Issue 15 asks that recursive, token and sentence chunking of small documents (1-16 KB) run at
least as fast, in MB/s, as on large ones: no fixed cost per call that dominates a 2 KB
document. On ``bench/corpus/mixed-sizes`` (``python bench/mixed_corpus.py`` makes it), each
chunker and tiktoken's bare ``encode_ordinary`` (the floor of every token-counting chunker)
runs over three groups:

- ``small``: 400 files of 1-16 KB;
- ``prose``: the 80 prose files of 1 KB to 1 MB;
- ``prose > 256 KB``: the largest of them.

The groups differ in content too (``small`` holds code and configuration files, with more
lines and sentence ends per byte), so a second table takes the content out: the same text (the
``prose > 256 KB`` files) chunked whole, and cut at whitespace into documents of about 2 KB and
16 KB. Whatever it costs more per byte in 2 KB documents is a cost per call.

Every (implementation, group) pair is one timed call per round, all pairs in turn each round
(interleaved), best of ``--rounds``, from a collected heap; a group's outputs are kept until
its timing ends (as a caller holding them would) and freed untimed. Printed: MB/s per
group, and small over large (the ratio of the two MB/s).
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from bench.throughput import Corpus, cl100k  # noqa: E402


def pieces(texts, size: int):
    """``texts`` cut into documents of about ``size`` characters, each ending at whitespace."""
    out = []
    for text in texts:
        start = 0
        while start < len(text):
            end = min(len(text), start + size)
            while end < len(text) and not text[end].isspace():
                end += 1
            out.append(text[start:end])
            start = end
    return out


def measure(impls, groups, rounds):
    """Best seconds per (implementation, group), interleaved, after one warm-up call each."""
    best = {(name, g): float("inf") for name in impls for g in groups}
    for fn in impls.values():  # warm-up: lazy tables and encodings load here
        fn(next(iter(groups.values()))[0])
    for _ in range(rounds):
        for name, fn in impls.items():
            for g, texts in groups.items():
                gc.collect()
                started = time.perf_counter()
                out = [fn(t) for t in texts]
                best[name, g] = min(best[name, g], time.perf_counter() - started)
                del out
    return best


def print_table(title, impls, groups, best):
    sizes = {g: sum(len(t.encode("utf-8")) for t in texts) / 1e6 for g, texts in groups.items()}
    names = list(groups)
    print(f"#### {title}\n\nMB/s, best of the rounds ({', '.join(f'{g}: {len(groups[g])} documents, {mb:.1f} MB' for g, mb in sizes.items())})\n")
    print("| implementation | " + " | ".join(names) + f" | {names[0]} / {names[-1]} |")
    print("|---|" + "---:|" * (len(names) + 1))
    for name in impls:
        rates = [sizes[g] / best[name, g] for g in names]
        print(f"| {name} | " + " | ".join(f"{r:.1f}" for r in rates) + f" | {rates[0] / rates[-1]:.2f}x |")
    print()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds, best counts (default 5)")
    args = parser.parse_args(argv)
    from beam_chunking import RecursiveChunker, SentenceChunker, TokenChunker

    corpus = Corpus()
    prose = corpus.texts("prose")
    groups = {"small": corpus.texts("small"), "prose": prose,
              "prose > 256 KB": [t for t in prose if len(t.encode("utf-8")) > 256 * 1024]}
    enc = cl100k()
    impls = {"RecursiveChunker 512/50 characters": RecursiveChunker(max_chunk_size=512, overlap=50).chunk,
             "TokenChunker 512/50 cl100k": TokenChunker(max_chunk_size=512, overlap=50).chunk,
             "SentenceChunker 512/64 cl100k": SentenceChunker(max_chunk_size=512, overlap=64).chunk,
             "bare tiktoken encode_ordinary": enc.encode_ordinary}
    print(f"Best of {args.rounds} interleaved rounds.\n")
    print_table("By group of the corpus", impls, groups, measure(impls, groups, args.rounds))
    large = groups["prose > 256 KB"]
    same = {"2 KB pieces": pieces(large, 2048), "16 KB pieces": pieces(large, 16384), "whole": large}
    print_table("The same text, whole and in pieces", impls, same, measure(impls, same, args.rounds))


if __name__ == "__main__":
    main()
