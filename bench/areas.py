"""The areas of ``bench/README.md``: for each, the bench runs behind its table, what they need,
and how their printed output becomes the table (with its targets).

Each :class:`Area` names the scripts it runs, with the arguments of a full run and of
``--quick`` (small sizes), through the scripts' own command lines; ``render`` turns their
standard output (one string per run) into the Markdown that ``bench/run_all.py`` writes
between the area's markers. The targets are the issues' (bench/README.md names the issue
of each area); a row no target judges shows ``none``, and a table no target judges says so.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence, Tuple

from bench.report import (Check, Table, at_least, at_most, before_paren, keep, merge, number, ratio_check,
                          tables, titled, with_targets)


@dataclass(frozen=True)
class Run:
    """One bench script run: ``python SCRIPT *full`` (``*quick`` under ``--quick``; ``None``:
    the full arguments, for benches that are short already). ``{name}`` in an argument is
    filled from run_all's settings (``{pdf_baseline}``)."""

    script: str
    full: Tuple[str, ...] = ()
    quick: Optional[Tuple[str, ...]] = None

    def args(self, quick: bool) -> Tuple[str, ...]:
        return self.quick if quick and self.quick is not None else self.full


@dataclass(frozen=True)
class Area:
    """One table of bench/README.md.

    Args:
        name: The marker name (``<!-- bench:NAME -->``) and ``--only`` value.
        title: What the table shows.
        runs: The bench runs, in order.
        render: Their outputs (stdout, one per run) to Markdown; ``None``: the block is left
            as it is (the output is still saved).
        needs: Names of what the runs need besides the package (see run_all's ``NEEDS``).
    """

    name: str
    title: str
    runs: Tuple[Run, ...]
    render: Optional[Callable[[List[str]], str]]
    needs: Tuple[str, ...] = ()


NO_TARGET = "No target was set for these figures.\n"


def _md(*found: Table) -> str:
    return "\n".join(t.markdown() for t in found)


def interleaved(outputs: List[str]) -> str:
    """``bench/throughput.py``'s comparisons as one table: every implementation's row, with
    the script's own targets (from its "Against the targets" table) beside the rows they
    judge, and target rows that judge a ratio no row shows (the pipeline against the Parquet
    loop, start-up) added at the end."""
    found = tables(outputs[0])
    targets = next((t for t in found if t.title == "Against the targets"), Table("", []))
    details = [t for t in found if t.header and t.header[0] in ("implementation", "measure")]
    caption = ""
    if len(details) == 1:  # one comparison: its title above the table, not in every row
        caption, merged = details[0].title + "\n\n", details[0]
    else:
        merged = merge(details, "comparison", before_paren) if details else Table("", ["comparison", "measured"])
    out = Table(merged.title, merged.header + ["target", "met?"])
    used = set()
    for row in merged.rows:
        hit = next((i for i, t in enumerate(targets.rows) if i not in used and t[2] == row[-1]), None)
        used.add(hit)
        out.rows.append(row + ([targets.rows[hit][1], targets.rows[hit][3]] if hit is not None else ["none", ""]))
    for i, (name, goal, measured, met) in enumerate(targets.rows):
        if i not in used:
            out.rows.append([name] + [""] * (len(merged.header) - 2) + [measured, goal, met])
    return caption + _md(out)


def peers(outputs: List[str]) -> str:
    """``bench/run.py``: every library on the stdlib corpus, issue 2's targets on ours."""
    merged = merge(tables(outputs[0]), "group", before_paren)
    ours = "beam-chunking"
    return _md(with_targets(merged, [ratio_check(rf"^Recursive.*\| {ours}", "ratio", 1.0),
                                     ratio_check(rf"^50 KB prose.*\| {ours}", "ratio", 1.0),
                                     ratio_check(rf"^Token.*\| {ours}", "ratio", 0.9),
                                     ratio_check(rf"^Sentences.*\| {ours}", "ratio", 2.0)]))


def small_files(outputs: List[str]) -> str:
    """``bench/small_files_gc.py``: issue 15's small-file target, in a light and a heavy process."""
    [t] = tables(outputs[0])
    return _md(with_targets(t, [ratio_check(r"^(light|heavy) ", "ours / theirs", 1.2)]))


def per_size(outputs: List[str]) -> str:
    """``bench/per_size.py``: small documents at least as fast per byte as large ones (issue 15)."""
    out = []
    for t in tables(outputs[0]):
        small_over_large = Check(r"^(Recursive|Token|Sentence)Chunker", ">= 1.0x", at_least(t.header[-1], 1.0))
        out.append(f"{t.title}, MB/s\n\n" + with_targets(t, [small_over_large]).markdown())
    return "\n".join(out)


def runners(outputs: List[str]) -> str:
    """``bench/compare_runners.py``: one line per runner, then EQUAL or DIFFERENT."""
    line = re.compile(r"^(\w+) (\d+) (\d+) (\d+) (\d+) (\d+) \{'chunks': \((\d+), '(\w+)'\), "
                      r"'documents': \((\d+), '(\w+)'\)\} ([\d.]+)s$")
    t = Table("", ["runner", "documents", "ok", "empty", "failed", "chunks", "chunks table hash",
                   "documents table hash", "seconds"])
    for text in outputs[0].splitlines():
        m = line.match(text.strip())
        if m:
            g = m.groups()
            t.rows.append([g[0], *g[1:6], g[7], g[9], g[10]])
    verdict = "EQUAL" if "\nEQUAL" in "\n" + outputs[0] else "DIFFERENT"
    t.rows.append(["all three", "", "", "", "", "", "", "", verdict])
    return _md(with_targets(t, [Check(r"^all three", "identical tables (EQUAL)",
                                      lambda tb, r: r[-1] == "EQUAL")]))


def parsers(outputs: List[str]) -> str:
    """``bench/parsers.py``: speed against the usual Python parser, and peak memory."""
    found = tables(outputs[0])
    speed = titled(found, r"^(PDF|HTML)")
    for t in speed:
        unit = t.header[1]
        t.header[1] = "speed"
        t.rows = [[r[0], f"{r[1]} {unit}", *r[2:]] for r in t.rows]
    return _md(merge(speed, "input", before_paren), *titled(found, r"^Peak memory")) + "\n" + NO_TARGET


PDF_COLUMNS = ("layout", "parser", "chunker", "pages per CPU s", "this / baseline", "breaks recovered",
               "words in order", "junk", "new text starts mid-sentence", "excerpts whole: PDF",
               "excerpts whole: unrendered")


def _within_two_points(t: Table, r: List[str]) -> Optional[bool]:
    pdf, plain = number(t.cell(r, "excerpts whole: PDF")), number(t.cell(r, "excerpts whole: unrendered"))
    return None if pdf is None or plain is None else pdf >= plain - 2.0


def pdf_fidelity(outputs: List[str]) -> str:
    """``bench/pdf_fidelity.py``: issue 28's targets on this tree's rows, each layout."""
    merged = merge([t for t in tables(outputs[0]) if t.header and t.header[0] == "parser"], "layout",
                   before_paren)
    ours = r"\| this tree \|"
    return _md(with_targets(keep(merged, PDF_COLUMNS), [
        Check(ours, ">= 0.5x baseline speed", at_least("this / baseline", 0.5)),
        Check(ours, ">= 95% breaks", at_least("breaks recovered", 95.0)),
        Check(ours + r" structural \|", "<= 5% mid-sentence (default strategy)",
              at_most("new text starts mid-sentence", 5.0)),
        Check(ours, "excerpts within 2 points of unrendered", _within_two_points)]))


def ocr(outputs: List[str]) -> str:
    """``bench/ocr.py``'s two lines as a table; issue 28: at least 95% of the words."""
    t = Table("", ["input", "words recovered in order", "wall s / page", "CPU s / page"])
    for line in outputs[0].splitlines():
        m = re.match(r"^(.+?): ([\d.]+%) .*?([\d.]+) s wall, ([\d.]+) s CPU per page", line)
        if m:
            t.rows.append(list(m.groups()))
    return _md(with_targets(t, [Check(".", ">= 95%", at_least("words recovered in order", 95.0))]))


def code(outputs: List[str]) -> str:
    """``bench/code.py``: issue 4's three targets on each of our parser paths."""
    [t] = tables(outputs[0])
    budget = number(re.search(r"fit (\d+) characters", t.title).group(1)) if "fit" in t.title else 1500
    ours = r"^beam-chunking"
    return f"{t.title}\n\n" + _md(with_targets(t, [
        Check(ours, "<= 50 ms", at_most("ms per 100 KB", 50)),
        Check(ours, "0 split", lambda tb, r: number(tb.cell(r, "functions split that fit")) == 0),
        Check(ours, f"largest <= {budget:g}", at_most("largest chunk", budget))]))


def plain(outputs: List[str]) -> str:
    """Every table the script prints, as it prints them; no target was set for them."""
    return _md(*tables(outputs[0])) + "\n" + NO_TARGET


def quality(outputs: List[str]) -> str:
    """``bench/quality.py --part retrieval``: the size tables as one, then issue 12's two
    retrieval targets, row by row."""
    found = tables(outputs[0])
    sizes = merge(titled(found, r"^Size \d+"), "size group",
                  lambda title: re.match(r"Size (\d+)", title).group(1) + " tokens")
    goals = Table("", ["target (issue 12)", "size", "measured", "met?"])
    for t in titled(found, r"recursive frontier"):
        for r in t.rows:
            if r[0] == "cluster_semantic":
                rec, iou = number(t.cell(r, "recall")), number(t.cell(r, "IoU"))
                rrec, riou = (number(t.cell(r, f"recursive {m}, same size")) for m in ("recall", "IoU"))
                goals.rows.append(["cluster_semantic above the recursive recall/IoU frontier", t.cell(r, "size"),
                                   f"recall {rec:g} vs {rrec:g}, IoU {iou:g} vs {riou:g} (recursive at the same "
                                   "mean chunk size)", "yes" if rec >= rrec and iou >= riou else "no"])
    for t in titled(found, r"^Our best against each peer"):
        for size, peer, theirs, ours in t.rows:
            goals.rows.append([f"our best >= {peer} on recall and IoU", f"{size} tokens",
                               f"{peer} {theirs}; ours that match: {ours}",
                               "no" if "none" in ours else "yes"])
    if not goals.rows:  # a run without cluster_semantic and the peers (--only) judges neither target
        return _md(sizes) + "\nIssue 12's retrieval targets need `cluster_semantic`, `recursive` and the peers.\n"
    return _md(sizes, goals)


def junk(outputs: List[str]) -> str:
    """``bench/quality.py --part junk``: issue 12's junk and minimum-size targets."""
    found = tables(outputs[0])
    categories = ("dot leaders", "running header", "fake table", "under 60 chars", "heading only")

    def under_one(t, r):
        return all((number(t.cell(r, c)) or 0.0) < 1.0 for c in categories)
    out = [with_targets(t, [Check(r"\| (PDF|HTML) ", "< 1% each category", under_one)])
           for t in found if "dot leaders" in t.header]
    out += [with_targets(t, [Check(".", "0 unflagged", lambda tb, r: number(r[-1]) == 0)])
            for t in titled(found, r"^Minimum size")]
    return _md(*out)


def semantic(outputs: List[str]) -> str:
    """``bench/embed.py``: issue 5's targets (at least 0.9x the model alone), and retrieval."""
    found = tables(outputs[0])
    speed = [with_targets(t, [ratio_check(r"^beam-chunking", "ratio vs the model alone", 0.9)])
             for t in titled(found, r"^Throughput")]
    retrieval = titled(found, r"^Retrieval")  # none with --chapters 0
    return _md(*speed, *retrieval) + ("\nNo target was set for the retrieval check.\n" if retrieval else "")


def scaling(outputs: List[str]) -> str:
    """``bench/scale.py --only scaling``'s table, whose title states its targets, and the load
    the other processes on the machine put on it."""
    load = [line.strip(" -") for line in outputs[0].splitlines() if line.startswith("- scaling runs:")]
    found = titled(tables(outputs[0]), r"^Scaling")
    checks = Table("", ["comparison", "measured", "target", "met?"])
    for t in found:
        sizes = [r[0] for r in t.rows if " vs " not in r[0]]
        large = sizes[-1] if sizes else ""
        cell = {(r[0], r[1]): r for r in t.rows}
        for label, column, minimum in (("Dask, 1 worker", "vs in-process", 0.9),
                                       ("local processes, 2 workers", "2 workers vs 1", 1.8),
                                       ("Dask, 2 workers", "2 workers vs 1", 1.7)):
            value = number(t.cell(cell.get((large, label), []), column)) if (large, label) in cell else None
            checks.rows.append([f"{label}: {column}, {large}", "-" if value is None else f"{value:.2f}x",
                                f">= {minimum}x", "-" if value is None else "yes" if value >= minimum else "no"])
        for r in t.rows:
            if " vs " in r[0] and r[1] != "in-process (FnApiRunner)":
                growth = number(r[-1].replace("+", ""))
                checks.rows.append([f"{r[1]}: peak RSS per worker, {r[0]}", r[-1], "within 15%",
                                    "-" if growth is None else "yes" if abs(growth) <= 15 else "no"])
    return ("".join(f"{t.title}\n\n{t.markdown()}" for t in found) + "\n" + checks.markdown()
            + "".join(f"\nOther load: {x}.\n" for x in load))


def single(checks: Sequence[Check]) -> Callable[[List[str]], str]:
    """A renderer for a script that prints one table: that table with ``checks`` (none: the
    table, and a line saying that no target was set)."""
    return lambda outputs: _md(*(with_targets(t, checks) for t in tables(outputs[0])[:1])) + (
        "" if checks else "\n" + NO_TARGET)


def incremental(outputs: List[str]) -> str:
    """``bench/incremental.py``'s fixed-width report as a table, with issue 14's targets."""
    t = Table("", ["scenario", "best s [range]", "chunks", "ratio of bests [per round, median]", "changes"])
    for line in outputs[0].splitlines():
        m = re.match(r"^(.{40}) +([\d.]+ \[[\d.]+-[\d.]+\]) +(\d+) +(.*?)  +(\d+ new.*)$", line)
        if m:
            t.rows.append([c.strip() for c in m.groups()])
    ratio = "ratio of bests [per round, median]"
    return _md(with_targets(t, [Check(r"^\d+ MB.*nothing changed", ">= 10x", at_least(ratio, 10)),
                                Check(r"^\d+ MB.*5% changed", ">= 5x", at_least(ratio, 5)),
                                Check(r"^MiniLM.*nothing changed", ">= 50x", at_least(ratio, 50))]))


def hosted(outputs: List[str]) -> str:
    """``bench/embed_hosted.py``: issue 29, at least 0.9x the bare loop; 0 requests re-run."""
    ratio = "ratio to the bare loop [per-round range, median]"
    return single([ratio_check(r"^HostedEmbedder, cache o", ratio, 0.9),
                   Check(r"cached re-run", "0 requests", lambda t, r: number(t.cell(r, "requests/s")) == 0)])(outputs)


def context(outputs: List[str]) -> str:
    """``bench/embed_context.py``: issue 29's bar for turning the template on by default."""
    def bar(t, r):
        rec, iou = number(t.cell(r, "recall difference [95% interval]")), number(t.cell(r, "IoU difference "
                                                                                        "[95% interval]"))
        return None if rec is None or iou is None else rec >= 1.0 and iou >= 0.0
    return single([Check(".", "+1 recall point, IoU no lower (to be the default)", bar)])(outputs)


EMBED_RATIO = "ratio [per-round range, median]"
AREAS: Tuple[Area, ...] = (
    Area("peers", "Chunkers against peers on the stdlib corpus (LangChain, semantic-text-splitter, Chonkie, "
         "semchunk)", (Run("bench/run.py", ("--mb", "3", "--skip-pipeline"), ("--mb", "0.5", "--skip-pipeline")),),
         peers, ("corpus",)),
    Area("chunkers", "Chunkers on the mixed-size corpus (issue 15)",
         (Run("bench/throughput.py", ("--only", "recursive", "token", "sentence"),
              ("--only", "recursive", "token", "sentence", "--quick")),), interleaved, ("mixed",)),
    Area("small-files", "Recursive on small files, light and heavy processes",
         (Run("bench/small_files_gc.py", (), ("--passes", "5")),), small_files, ("mixed",)),
    Area("per-size", "Throughput by document size", (Run("bench/per_size.py", (), ("--rounds", "1")),), per_size,
         ("mixed",)),
    Area("pipeline", "Pipeline throughput, 1 process (issue 15)",
         (Run("bench/throughput.py", ("--only", "pipeline"), ("--only", "pipeline", "--quick")),), interleaved,
         ("mixed",)),
    Area("startup", "CLI start-up to the first document",
         (Run("bench/throughput.py", ("--only", "startup"), ("--only", "startup", "--quick")),), interleaved,
         ("mixed",)),
    Area("scale", "Scale: every runner, 1 and 2 workers, 24 and 200 MB",
         (Run("bench/scale.py", ("--only", "scaling", "--reps", "2"), ("--only", "scaling", "--quick")),), scaling,
         ("corpus", "dask")),
    Area("runners", "The same tables on every runner",
         (Run("bench/compare_runners.py", (), ("--input", "bench/corpus/docs/000*")),), runners, ("corpus", "dask")),
    Area("incremental", "Incremental re-runs against a full run",
         (Run("bench/incremental.py", (), ("--reps", "1", "--embed-files", "5")),), incremental, ("corpus",)),
    Area("pgvector", "pgvector sink against a plain COPY",
         (Run("bench/pgvector.py", ("--reps", "5"), ("--documents", "300", "--reps", "1")),),
         single([ratio_check(r"^WriteToPgVector", "ratio", 0.7)]), ("postgres",)),
    Area("parsers", "Parsers: speed and memory",
         (Run("bench/parsers.py", (), ("--pages", "100", "--rows", "5000")),), parsers, ("realdocs",)),
    Area("pdf-fidelity", "PDF fidelity: Chromium-typeset texts, three layouts",
         (Run("bench/pdf_fidelity.py", ("--baseline-tree", "{pdf_baseline}"),
              ("--baseline-tree", "{pdf_baseline}", "--limit", "4", "--no-peers", "--rounds", "2")),),
         pdf_fidelity, ("retrieval-dev", "realdocs", "chromium", "pdf_baseline")),
    Area("ocr", "OCR of a scanned page", (Run("bench/ocr.py", (), ("--rounds", "1")),), ocr),
    Area("hostile", "Hostile documents under a 2 GiB limit",
         (Run("bench/hostile.py", (), ("--text-mb", "5")),),
         single([Check(".", "finishes, fails alone with its cap named, under 2 GiB",
                       lambda t, r: t.cell(r, "passed") == "yes")])),
    Area("watchdog", "The watchdog's cost", (Run("bench/watchdog.py", (), ("--reps", "2")),), single([])),
    Area("code", "Code chunking", (Run("bench/code.py"),), code),
    Area("choose-strategy", "Choosing a strategy: every candidate on each kind of document",
         (Run("bench/choose_strategy.py", (), ("--files", "8")),), plain, ("retrieval-dev", "realdocs")),
    Area("quality", "Retrieval quality on Chroma's evaluation set",
         (Run("bench/quality.py", ("--part", "retrieval"),
              ("--part", "retrieval", "--tokens", "200", "--only", "structural,recursive", "--no-plot")),),
         quality, ("retrieval-dev", "minilm")),
    Area("junk", "Junk chunks on the Debian Reference", (Run("bench/quality.py", ("--part", "junk")),), junk,
         ("realdocs",)),
    Area("semantic", "Embedding-backed chunking against the model alone",
         (Run("bench/embed.py", (), ("--kb", "10", "--chapters", "0")),), semantic, ("realdocs", "minilm")),
    Area("model-tokens", "Sizes in the embedding model's own tokens",
         (Run("bench/model_tokens.py", (), ("--repeat", "1")),),
         single([Check(r"^\w+ \| MiniLM \|", "0 over the model's window",
                       lambda t, r: number(t.cell(r, "over MiniLM's 256")) == 0)]), ("retrieval-dev", "minilm")),
    Area("embed", "Embedding stage against a bare onnxruntime session (issue 15)",
         (Run("bench/throughput.py", ("--only", "embed"), ("--only", "embed", "--quick")),), interleaved,
         ("mixed", "minilm")),
    Area("embed-stage", "Embedding stage against one sorted call of the model",
         (Run("bench/embed_stage.py", ("--chunks", "800"), ("--chunks", "40", "--reps", "1")),), single([]),
         ("corpus", "minilm")),
    Area("embed-onnx", "A CLS-pooled ONNX model against bare onnxruntime",
         (Run("bench/embed_onnx.py", ("--sentences", "800", "--rounds", "7"), ("--sentences", "100", "--rounds",
                                                                              "2")),),
         single([ratio_check(r"^minilm", EMBED_RATIO, 0.95)]), ("realdocs", "minilm")),
    Area("embed-hosted", "Hosted embeddings against a bare asyncio + httpx loop",
         (Run("bench/embed_hosted.py", ("--rounds", "9"), ("--texts", "640", "--rounds", "2")),), hosted),
    Area("embed-context", "Embedding a chunk in its context",
         (Run("bench/embed_context.py", (), ("--tokens", "200")),), context, ("retrieval-dev", "minilm")),
)


def area(name: str) -> Area:
    """The area called ``name``; ``KeyError`` naming the known ones otherwise."""
    for a in AREAS:
        if a.name == name:
            return a
    raise KeyError(f"no bench area {name!r}; the areas: {', '.join(a.name for a in AREAS)}")
