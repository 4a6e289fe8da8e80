"""Throughput against issue 15's targets, on the mixed-size corpus, interleaved, best of N.

    python bench/mixed_corpus.py                 # once: bench/corpus/mixed-sizes/ (about 32 MB)
    python bench/throughput.py                   # every row, 5 rounds (about 5 minutes on 2 cores)
    python bench/throughput.py --quick           # every row on a quarter of each group, 2 rounds
    python bench/throughput.py --only token --groups code cjk --rounds 7
    python bench/throughput.py --only startup --baseline-tree /tmp/main-before
    python bench/throughput.py --only startup --baseline-tree /tmp/old --baseline-python /tmp/old-venv/bin/python

Rows (``--only``):

- ``pipeline``: the CLI's job (``pipelines.run.run`` on the in-process FnApiRunner) with and
  without token counts, vs a plain read-and-chunk loop, and vs ``bench/run.py``'s loop
  without token counts (which also parses and writes Parquet);
- ``recursive`` (vs semantic-text-splitter), ``token`` (TokenChunker vs a bare tiktoken
  encode), ``sentence`` (vs chonkie);
- ``embed``: ``EmbedChunks`` vs a bare onnxruntime session (``bench/embed_bare.py``);
- ``startup``: imports and the CLI's time to its first document (``bench/startup.py``).

Each comparison is interleaved (see ``bench/interleave.py``) and
checked: offset violations (a chunk that is not the exact source span it claims) and ceiling
violations (over 512 characters, or 512 cl100k tokens counted on the chunk's own text), and
for the pipeline, ``token_count`` values that differ from a fresh encode of the chunk's text.
Peers that are not installed get a row saying so.
"""
from __future__ import annotations

import argparse
import collections
import json
import logging
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from bench.interleave import Impl, check_spans, ratio, run_interleaved, table  # noqa: E402

CORPUS = os.path.join(HERE, "corpus", "mixed-sizes")
SIZE, OVERLAP = 512, 50  # recursive and token rows: characters / cl100k tokens
S_BUDGET, S_OVERLAP = 512, 64  # sentence row, as bench/run.py
ROWS = ("pipeline", "recursive", "token", "sentence", "embed", "startup")
#: Per row: the corpus groups it can run on, and those it runs on when --groups is not given.
ROW_GROUPS = {"pipeline": (("mixed", "small"), ("mixed",)), "recursive": (("small", "mixed"),) * 2,
              "token": (("prose", "code", "cjk"),) * 2, "sentence": (("prose", "cjk"),) * 2,
              "embed": None, "startup": None}  # fixed inputs: --groups does not apply


class Corpus:
    """The groups of ``bench/corpus/mixed-sizes``: ``mixed``, ``small``, ``prose``, ``code``, ``cjk``.

    Args:
        every: Keep every ``every``-th file of each group (in size order, so the spread of
            sizes stays). Default 1: all.
    """

    def __init__(self, every: int = 1):
        path = os.path.join(CORPUS, "manifest.json")
        if not os.path.isfile(path):
            raise SystemExit(f"{path} is missing: run python bench/mixed_corpus.py first")
        with open(path) as f:
            self.manifest = json.load(f)
        self.every = every
        self._texts = {}

    def entries(self, group: str):
        parent = "mixed" if group in ("prose", "code") else group
        rows = [m for m in self.manifest if m["group"] == parent and (parent == group or m["kind"] == group)]
        return rows[::self.every]

    def paths(self, group: str):
        return [os.path.join(CORPUS, m["file"]) for m in self.entries(group)]

    def texts(self, group: str):
        out = []
        for p in self.paths(group):
            if p not in self._texts:
                with open(p, encoding="utf-8", newline="") as f:
                    self._texts[p] = f.read()
            out.append(self._texts[p])
        return out

    def nbytes(self, group: str) -> int:
        return sum(m["bytes"] for m in self.entries(group))

    def histogram(self) -> str:
        """Files and MB per doubling size bin, per group, as a Markdown table."""
        groups = ("mixed", "small", "prose", "code", "cjk")
        cells = {g: collections.Counter() for g in groups}
        sizes = {g: collections.Counter() for g in groups}
        for g in groups:
            for m in self.entries(g):
                b = max(0, (m["bytes"] >> 10).bit_length() - 1)
                cells[g][b] += 1
                sizes[g][b] += m["bytes"]
        bins = sorted({b for c in cells.values() for b in c})
        label = lambda b: f"{1 << b}-{2 << b} KiB" if b else "< 2 KiB"
        lines = ["| size | " + " | ".join(groups) + " |", "|---|" + "---:|" * len(groups)]
        for b in bins:
            lines.append(f"| {label(b)} | " + " | ".join(
                f"{cells[g][b]} ({sizes[g][b] / 1e6:.2f} MB)" if cells[g][b] else "" for g in groups) + " |")
        lines.append("| total | " + " | ".join(f"{len(self.entries(g))} ({self.nbytes(g) / 1e6:.1f} MB)"
                                                for g in groups) + " |")
        return "\n".join(lines) + "\n"


def cl100k():
    from beam_chunking.sizing import load_encoding

    return load_encoding("cl100k_base")


def over_texts(fn, texts):
    """One timed call: ``fn`` on every text of the group."""
    return lambda: [fn(t) for t in texts]


def peer(name, build):
    """An :class:`Impl` from ``build() -> call``, or one that says why the peer is missing."""
    try:
        return Impl(name, build())
    except ImportError as exc:
        return Impl(name, None, missing=f"not installed ({exc})")


def string_comparison(title, texts, nbytes, impls, spans, measure, limit, rounds, ref_name):
    """Interleave ``impls`` over ``texts``, check their last outputs, return the table and ratios."""
    repeat = run_interleaved(impls, rounds)
    checks = {i.name: check_spans(texts, [spans[i.name](o) for o in i.output], measure, limit)
              if spans[i.name] else ("n/a",) * 3 for i in impls if i.times}
    ref = next(i for i in impls if i.name == ref_name)
    return table(title, impls, nbytes, checks, repeat, ref=ref), {i.name: ratio(i, ref) for i in impls}


def ours_spans(chunks):
    return [(c.text, c.start, c.end) for c in chunks]


def found_spans(strings):
    return [(s, None, None) for s in strings]


# ---------------------------------------------------------------------------------------------
# rows


def without_extensions(call):
    """``call`` run as an install without a C compiler runs it: the Python splitter and builder."""
    from beam_chunking.strategies import base
    from beam_chunking.text import separators

    def plain():
        saved = separators._native, base._native_make_chunks
        separators._native = base._native_make_chunks = None
        try:
            return call()
        finally:
            separators._native, base._native_make_chunks = saved
    return plain


def recursive_row(corpus, groups, rounds):
    from beam_chunking import RecursiveChunker

    ours = RecursiveChunker(max_chunk_size=SIZE, overlap=OVERLAP)
    out, results = [], []
    for g, target in (("small", 1.2), ("mixed", 1.5)):
        if g not in groups:
            continue
        texts = corpus.texts(g)

        def sts_call(texts=texts):
            from semantic_text_splitter import TextSplitter

            return over_texts(TextSplitter(SIZE, overlap=OVERLAP).chunks, texts)

        impls = [Impl("beam-chunking RecursiveChunker 512/50", over_texts(ours.chunk, texts)),
                 peer("semantic-text-splitter TextSplitter(512, overlap=50)", sts_call),
                 Impl("beam-chunking RecursiveChunker 512/50, without its C extensions",
                      without_extensions(over_texts(ours.chunk, texts)))]
        spans = {impls[0].name: ours_spans, impls[1].name: found_spans, impls[2].name: ours_spans}
        text, ratios = string_comparison(f"Recursive 512/50 characters, {g} (ratio vs semantic-text-splitter)",
                                         texts, corpus.nbytes(g), impls, spans, len, SIZE, rounds, impls[1].name)
        out.append(text)
        results.append(result(f"Recursive 512/50 vs semantic-text-splitter, {g}", ratios[impls[0].name], target))
    return out, results


def token_row(corpus, groups, rounds):
    from beam_chunking import TokenChunker

    enc = cl100k()
    count = lambda t: len(enc.encode_ordinary(t))
    ours = TokenChunker(max_chunk_size=SIZE, overlap=OVERLAP, tokenizer="cl100k_base")
    out, results = [], []
    for g in ("prose", "code", "cjk"):
        if g not in groups:
            continue
        texts = corpus.texts(g)
        impls = [Impl("bare tiktoken cl100k encode_ordinary", over_texts(enc.encode_ordinary, texts)),
                 Impl("beam-chunking TokenChunker 512/50 cl100k", over_texts(ours.chunk, texts))]
        spans = {impls[0].name: None, impls[1].name: ours_spans}
        text, ratios = string_comparison(f"Token windows 512/50 cl100k, {g} (ratio vs bare encode)", texts,
                                         corpus.nbytes(g), impls, spans, count, SIZE, rounds, impls[0].name)
        out.append(text)
        results.append(result(f"TokenChunker vs bare encode, {g}", ratios[impls[1].name], 0.9))
    return out, results


def sentence_row(corpus, groups, rounds):
    from beam_chunking import SentenceChunker

    enc = cl100k()
    count = lambda t: len(enc.encode_ordinary(t))
    ours = SentenceChunker(max_chunk_size=S_BUDGET, overlap=S_OVERLAP, tokenizer="cl100k_base")
    out, results = [], []
    for g in ("prose", "cjk"):
        if g not in groups:
            continue
        texts = corpus.texts(g)

        def chonkie_call(texts=texts):
            from chonkie import SentenceChunker as ChonkieSentence

            cs = ChonkieSentence(tokenizer=enc, chunk_size=S_BUDGET, chunk_overlap=S_OVERLAP)
            return over_texts(cs.chunk, texts)

        impls = [Impl("beam-chunking SentenceChunker 512/64 cl100k", over_texts(ours.chunk, texts)),
                 peer("chonkie SentenceChunker(cl100k, chunk_size=512, chunk_overlap=64)", chonkie_call)]
        spans = {impls[0].name: ours_spans,
                 impls[1].name: lambda chunks: [(c.text, c.start_index, c.end_index) for c in chunks]}
        text, ratios = string_comparison(f"Sentences 512/64 cl100k tokens, {g} (ratio vs chonkie)", texts,
                                         corpus.nbytes(g), impls, spans, count, S_BUDGET, rounds, impls[1].name)
        out.append(text)
        results.append(result(f"SentenceChunker vs chonkie, {g}", ratios[impls[0].name], 2.0))
    return out, results


def pipeline_row(corpus, groups, rounds):
    """The CLI's job (``pipelines.run.run``, in-process FnApiRunner) vs read-and-chunk."""
    from beam_chunking import RecursiveChunker
    from beam_chunking.pipelines.run import run

    logging.getLogger("apache_beam").setLevel(logging.ERROR)
    chunker = RecursiveChunker(max_chunk_size=SIZE, overlap=OVERLAP)
    out, results = [], []
    for g in ("mixed", "small"):
        if g not in groups:
            continue
        paths = corpus.paths(g)
        pattern = os.path.join(CORPUS, g, "*") if corpus.every == 1 else None
        with tempfile.TemporaryDirectory() as tmp:
            if pattern is None:  # a subset: the pipeline reads it from a folder of its own
                os.makedirs(os.path.join(tmp, "in"))
                for p in paths:  # not symbolic links: the listing refuses links out of the input root
                    dest = os.path.join(tmp, "in", os.path.basename(p))
                    try:
                        os.link(p, dest)
                    except OSError:  # another filesystem
                        shutil.copyfile(p, dest)
                pattern = os.path.join(tmp, "in", "*")

            def loop():
                res = []
                for p in paths:
                    with open(p, encoding="utf-8", newline="") as f:
                        res.append(chunker.chunk(f.read()))
                return res

            def job(counter, dest):
                argv = ["--input", pattern, "--output", dest, "--overwrite", "--max-deletions", "100%", "--strategy", "recursive",
                        "--max-chunk-size", str(SIZE), "--overlap", str(OVERLAP), "--token-counter", counter]
                return lambda: run(argv)

            outs = {"cl100k_base": os.path.join(tmp, "tokens"), "none": os.path.join(tmp, "none")}
            impls = [Impl("plain loop: read, RecursiveChunker(512, 50).chunk(text)", loop),
                     Impl("pipeline, token_counter=cl100k_base (default)", job("cl100k_base", outs["cl100k_base"])),
                     Impl("pipeline, token_counter=None", job("none", outs["none"])),
                     Impl("Parquet loop: read, parse, chunk, Arrow rows, zstd Parquet; no token counts",
                          lambda: parquet_loop(paths, os.path.join(tmp, "loop")))]
            run_interleaved(impls, rounds, calibrate=False)
            texts = corpus.texts(g)
            checks = {impls[0].name: check_spans(texts, [ours_spans(c) for c in impls[0].output], len, SIZE)}
            notes = []
            for impl, counter in zip(impls[1:3], outs):
                n, off, over, wrong = check_pipeline_output(os.path.join(outs[counter], "chunks"), paths,
                                                            counter != "none")
                checks[impl.name] = (n, off, over)
                s = impl.output
                notes.append(f"- {impl.name}: {s.ok} of {s.documents} documents ok; " + (
                    f"{wrong} token counts differ from a fresh cl100k encode of the chunk's text"
                    if counter != "none" else f"{wrong} chunks carry a token count"))
            n, off, over, _ = check_pipeline_output(os.path.join(tmp, "loop", "chunks.parquet"), paths, False)
            checks[impls[3].name] = (n, off, over)
        text = table(f"Pipeline, {g}, 1 process (ratio vs the plain loop)", impls, corpus.nbytes(g), checks)
        out.append(text + "\n" + "\n".join(notes) + "\n")
        results.append(result(f"Pipeline with token counts, 1 process, vs the plain loop (read, chunk), {g}",
                              ratio(impls[1], impls[0]), 0.6))
        results.append(result(f"Pipeline with token counts, 1 process, vs the Parquet loop (no token counts), {g}",
                              ratio(impls[1], impls[3]), 0.6))
    return out, results


def parquet_loop(paths, folder):
    """``bench/run.py``'s plain loop without token counts: the pipeline's work minus Beam and
    the counts (parse, chunk, chunk rows as Arrow batches, both tables as zstd Parquet)."""
    import hashlib

    import pyarrow as pa
    import pyarrow.parquet as pq

    from beam_chunking import RecursiveChunker
    from beam_chunking.ids import document_id
    from beam_chunking.parsers import parse
    from beam_chunking.parsers.detect import detect_content_type
    from beam_chunking.schema import CHUNKS_SCHEMA, DOCUMENTS_SCHEMA, chunk_batch, chunk_rows, document_row
    from beam_chunking.types import Document

    strategy = RecursiveChunker(max_chunk_size=SIZE, overlap=OVERLAP)
    batches, docs = [], []
    for uri in paths:
        data = open(uri, "rb").read()
        doc = parse(Document(document_id(uri), uri, data, detect_content_type(uri, data)))
        rows = chunk_rows(strategy.chunk_document(doc), strategy="recursive", fingerprint=strategy.fingerprint,
                          content_type=doc.content_type, uri=uri)
        batches.append(chunk_batch(rows))
        docs.append(document_row(document_id=doc.id, uri=uri, content_type=doc.content_type, size_bytes=len(data),
                                 sha256=hashlib.sha256(data).hexdigest(), status="ok",
                                 section_count=len(doc.sections), chunk_count=len(rows)))
    os.makedirs(folder, exist_ok=True)
    pq.write_table(pa.Table.from_batches(batches, schema=CHUNKS_SCHEMA), os.path.join(folder, "chunks.parquet"),
                   compression="zstd")
    pq.write_table(pa.Table.from_pylist(docs, schema=DOCUMENTS_SCHEMA), os.path.join(folder, "documents.parquet"),
                   compression="zstd")
    return sum(b.num_rows for b in batches)


def check_pipeline_output(chunks, paths, counted):
    """``(chunks, offset violations, ceiling violations, wrong token counts)`` of a chunks table
    (a Parquet file or a folder of them).

    Offsets are checked against each file's parsed text (``beam_chunking.parsers.parse``: the
    text the strategy saw, which for a mail file is not the file's bytes). With ``counted``,
    every ``token_count`` is compared with ``len(encode_ordinary(text))``; without, a count
    that is present is what is wrong.
    """
    import pyarrow.parquet as pq

    from beam_chunking.parsers import parse
    from beam_chunking.parsers.detect import detect_content_type
    from beam_chunking.types import Document

    enc = cl100k()
    table_ = pq.read_table(chunks, columns=["uri", "text", "start", "end", "token_count"])
    parsed = {}
    for p in paths:
        data = open(p, "rb").read()
        parsed[os.path.basename(p)] = parse(Document(p, p, data, detect_content_type(p, data))).text
    n = off = over = wrong = 0
    for uri, text, start, end, count in zip(*(table_.column(c).to_pylist() for c in table_.column_names)):
        n += 1
        src = parsed.get(os.path.basename(uri))
        off += src is None or src[start:end] != text
        over += len(text) > SIZE
        wrong += (count != len(enc.encode_ordinary(text))) if counted else (count is not None)
    return n, off, over, wrong


# ---------------------------------------------------------------------------------------------
# report


def machine() -> str:
    def git(*args):
        try:
            return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10).stdout.strip()
        except OSError:
            return "?"

    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               platform.processor()) if os.path.exists("/proc/cpuinfo") else platform.processor()
    dirty = " (uncommitted changes)" if git("status", "--porcelain", "--untracked-files=no") else ""
    return (f"{os.cpu_count()} cores ({cpu}), Python {platform.python_version()}, commit "
            f"{git('rev-parse', '--short', 'HEAD')}{dirty}, load average {os.getloadavg()[0]:.2f} at start")


def versions() -> str:
    from importlib import metadata

    out = []
    for dist in ("semantic-text-splitter", "chonkie", "tiktoken", "onnxruntime", "tokenizers", "apache-beam"):
        try:
            out.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            out.append(f"{dist} not installed")
    return ", ".join(out)


def result(name, measured, goal):
    """A line of the targets table: ``(comparison, target, measured, met)``."""
    return name, f">= {goal:g}x", measured, None if measured is None else measured.best >= goal


def targets_table(results) -> str:
    lines = ["| comparison | target | measured: ratio of bests [per-round range, median] | met? |",
             "|---|---|---|---|"]
    for name, target, measured, met in results:
        shown = "not run" if measured is None else measured
        lines.append(f"| {name} | {target} | {shown} | {'-' if met is None else 'yes' if met else 'no'} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="Interleaved throughput rows of issue 15 (see the module docstring).")
    parser.add_argument("--rounds", type=int, default=None, help="timed rounds per comparison (default 5; --quick 2)")
    parser.add_argument("--groups", nargs="+", choices=("mixed", "small", "prose", "code", "cjk"),
                        help="corpus groups to run on (default: each row's own)")
    parser.add_argument("--only", nargs="+", choices=ROWS, help="rows to run (default all)")
    parser.add_argument("--quick", action="store_true", help="every 4th file of each group, 2 rounds, fewer chunks")
    parser.add_argument("--embed-chunks", type=int, default=None,
                        help="chunks embedded per call (default 160; quick 32)")
    parser.add_argument("--baseline-tree", help="a checkout to compare start-up against (interleaved)")
    parser.add_argument("--baseline-python", help="the baseline's own interpreter (a virtual environment made by "
                        "its README command), when its dependencies differ; default this one")
    args = parser.parse_args(argv)
    rounds = args.rounds or (2 if args.quick else 5)
    corpus = Corpus(every=4 if args.quick else 1)
    print(f"# Throughput (issue 15), {time.strftime('%Y-%m-%d %H:%M')}\n\n{machine()}\n\n{versions()}\n")
    print(f"Corpus: {CORPUS}{', every 4th file' if args.quick else ''}\n\n{corpus.histogram()}", flush=True)
    from bench.scale import ForeignCpu

    results = []
    for row in args.only or ROWS:
        allowed, default = ROW_GROUPS[row] or ((), ())
        groups = [g for g in allowed if g in args.groups] if args.groups else list(default)
        if ROW_GROUPS[row] and not groups:
            print(f"_{row}: skipped, it runs on {', '.join(allowed)}, none of them in --groups_\n")
            continue
        probe = ForeignCpu()
        started = time.perf_counter()
        if row == "embed":
            from bench.embed_bare import embed_row

            texts, res = embed_row(corpus, rounds, args.embed_chunks or (32 if args.quick else 160))
        elif row == "startup":
            from bench.startup import startup_row

            texts, res = startup_row(corpus, 1 if args.quick else rounds, args.baseline_tree, args.baseline_python)
        else:
            texts, res = globals()[f"{row}_row"](corpus, groups, rounds)
        for text in texts:
            print(text, flush=True)
        print(f"_{row}: {time.perf_counter() - started:.0f} s wall; other processes used "
              f"{probe.foreign():.1f} CPU-s meanwhile_\n", flush=True)
        results += res
    print("### Against the targets\n\n" + targets_table(results))


if __name__ == "__main__":
    main()
