"""Code chunking benchmark: one real ~100 KB Python module, a 1,500-character budget.

    python bench/code.py [--file PATH] [--budget 1500]

For each implementation: milliseconds per 100 KB (best of 5 after a warm-up), chunks,
functions split although they fit the budget (target 0), the largest chunk (target <= the
budget) and chunks that are not an exact source span. The default file is the standard
library's ``argparse.py`` (99.7 KB). Peers: LangChain's
``RecursiveCharacterTextSplitter.from_language(PYTHON)``, semantic-text-splitter's
``CodeSplitter`` with the tree-sitter Python grammar, and chonkie's ``CodeChunker`` (when it
can run offline).
"""
from __future__ import annotations

import argparse
import ast
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))


def functions(src: str):
    """(name, start, end) of every function, decorators included, trimmed."""
    starts = [0]
    for line in src.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            line = src[starts[first - 1]:starts[first]]
            s = starts[first - 1] + len(line) - len(line.lstrip())
            yield node.name, s, len(src[:starts[node.end_lineno]].rstrip())


def locate(src: str, texts):
    """Spans of chunk texts found in order in ``src`` (None when not found)."""
    spans, pos = [], 0
    for t in texts:
        k = src.find(t, max(0, pos - len(t)))
        if k < 0:
            k = src.find(t)
        spans.append(None if k < 0 else (k, k + len(t)))
        if k >= 0:
            pos = k + 1
    return spans


def implementations(budget: int):
    from beam_chunking.strategies import CodeChunker
    from beam_chunking.types import ParsedDocument, Section

    def ours(parser):
        chunker = CodeChunker(max_chunk_size=budget, parser=parser)

        def run(src):
            doc = ParsedDocument("d", "x.py", "text/x-python", src,
                                 (Section(0, len(src), kind="code", metadata={"language": "python"}),))
            return [(c.start, c.end) for c in chunker.chunk_document(doc)]
        return run

    yield "beam-chunking CodeChunker (ast)", ours("auto")
    yield "beam-chunking CodeChunker (tree-sitter)", ours("tree-sitter")
    yield "beam-chunking CodeChunker (heuristic, seed-like)", ours("heuristic")
    try:
        from langchain_text_splitters import Language, RecursiveCharacterTextSplitter

        lc = RecursiveCharacterTextSplitter.from_language(Language.PYTHON, chunk_size=budget, chunk_overlap=0)
        yield "langchain from_language(PYTHON)", lambda src: locate(src, lc.split_text(src))
    except ImportError as exc:
        yield "langchain from_language(PYTHON)", exc
    try:
        import tree_sitter_python
        from semantic_text_splitter import CodeSplitter

        sts = CodeSplitter(tree_sitter_python.language(), budget)
        yield "semantic-text-splitter CodeSplitter", lambda src: [(s, s + len(t)) for s, t in _sts_offsets(sts, src)]
    except ImportError as exc:
        yield "semantic-text-splitter CodeSplitter", exc
    try:
        from chonkie import CodeChunker as ChonkieCode

        ck = ChonkieCode(tokenizer="character", language="python", chunk_size=budget)
        yield "chonkie CodeChunker", lambda src: [(c.start_index, c.end_index) for c in ck.chunk(src)]
    except Exception as exc:  # it downloads grammars at construction; offline that fails
        yield "chonkie CodeChunker", exc


def _sts_offsets(splitter, src):
    return splitter.chunk_indices(src) if hasattr(splitter, "chunk_indices") else zip(
        [s for s, _ in locate(src, splitter.chunks(src))], splitter.chunks(src))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--file", default=argparse.__file__)
    parser.add_argument("--budget", type=int, default=1500)
    args = parser.parse_args()
    src = open(args.file, encoding="utf-8").read()
    fits = [(n, s, e) for n, s, e in functions(src) if e - s <= args.budget]
    kb = len(src.encode()) / 1000
    print(f"\n### Code, {os.path.basename(args.file)} ({kb:.1f} KB, {len(fits)} functions that fit {args.budget} characters)\n")
    print("| implementation | ms per 100 KB | chunks | functions split that fit | largest chunk | not exact spans |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, fn in implementations(args.budget):
        if isinstance(fn, BaseException):
            print(f"| {name} | unavailable: {type(fn).__name__}: {str(fn).splitlines()[0][:90]} | | | | |")
            continue
        fn(src)
        best = None
        for _ in range(5):
            t = time.perf_counter()
            spans = fn(src)
            dt = time.perf_counter() - t
            best = dt if best is None else min(best, dt)
        found = [s for s in spans if s is not None]
        split = sum(1 for _, s, e in fits if not any(a <= s and e <= b for a, b in found))
        largest = max(b - a for a, b in found) if found else 0
        print(f"| {name} | {best * 1000 * 100 / kb:.1f} | {len(spans)} | {split} | {largest} | {len(spans) - len(found)} |")


if __name__ == "__main__":
    main()
