"""Which strategy serves each kind of document best: the evidence behind the default routes.

    python bench/choose_strategy.py                 # every group, markdown tables on stdout (about 3 min)
    python bench/choose_strategy.py --only html,code

Every candidate chunks the same parsed documents at the same size, so what differs is where
it cuts: token-sized strategies at ``--tokens`` cl100k tokens (default 400), character-sized
ones at that many tokens times the group's characters per token. Each group's files are
parsed once, as the pipeline parses them (``load_document``).

The groups and their files:

- **prose, labelled**: ``../shared/retrieval-dev``'s two corpora, with the questions'
  reference excerpts;
- **PDF manuals**: the Debian Reference PDF and the PDFs under ``/usr/share/doc`` (pdfTeX,
  DocBook), none of them written or typeset here;
- **HTML manuals**: the Debian Reference's HTML and up to ``--files`` HTML files of
  ``/usr/share/doc`` (DocBook, Texinfo, Sphinx, gtk-doc);
- **Markdown**: up to ``--files`` Markdown files of ``/usr/share/doc``;
- **source code**: up to ``--files`` modules of Python's standard library, 2-60 KB;
- **transcripts**: WebVTT built from the State of the Union speech, one sentence per cue, two
  to six seconds each.

What each column counts (per group and strategy, summed over its files):

- **over the size in tokens**: chunks of more than ``--tokens`` cl100k tokens, which an
  embedding model with that window would cut short (only character-sized strategies can);
- **headings apart from their text**: sections opened by a heading line (of at most 200
  characters) whose heading and the first character of its body lie in no one chunk: a
  chunk that ends on a heading, or a heading chunked alone;
- **mid-sentence starts**: chunks whose new text (from the previous chunk's end on, so overlap
  is left out) starts inside a word, or after text that does not end a sentence (``.``, ``!``,
  ``?``, ``:``, ``;``, closing quotes or brackets after them) on the same line; a start on a new
  line, at a section start or at the document start is clean. Not counted for code.
- **junk**: chunks under 60 characters, a heading alone, dot leaders or a fake table (the
  categories of ``bench/quality.py``'s ``junk_kinds``; running headers are not looked for).
- **excerpts whole** (labelled prose only): reference excerpts that lie wholly in one chunk.
- **functions cut** (code only): top-level functions and methods, at most the size when
  whole, that no single chunk holds.
- **cues cut / one-cue chunks** (transcripts only): chunks that start or end inside a cue,
  and the share of chunks that hold a single cue (a sentence or two, alone).
"""
from __future__ import annotations

import argparse
import ast
import csv
import glob
import json
import os
import re
import sys
import sysconfig
import time
from typing import Dict, List, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
SHARED = os.path.join(HERE, "..", "..", "shared")
RETRIEVAL = os.environ.get("BEAM_CHUNKING_RETRIEVAL_DEV") or os.path.join(SHARED, "retrieval-dev")
REALDOCS = os.environ.get("BEAM_CHUNKING_REALDOCS") or os.path.join(SHARED, "realdocs", "debian-reference")

CANDIDATES = ("recursive", "sentence", "structural")
# A sentence ends here when only closing quotes or brackets follow the mark.
SENTENCE_END = re.compile(r"[.!?:;][\"'’”)\]]*$")
WORD = re.compile(r"\w")


def mid_sentence(text: str, start: int, section_starts: set) -> bool:
    """Whether new text starting at ``start`` of ``text`` starts mid-sentence (see the module doc)."""
    while start < len(text) and text[start].isspace():
        start += 1
    if start == 0 or start in section_starts or start >= len(text):
        return False
    if WORD.match(text[start]) and WORD.match(text[start - 1]):
        return True
    k = start
    while k > 0 and text[k - 1].isspace():
        k -= 1
    if "\n" in text[k:start] or k == 0 or k in section_starts:
        return False
    return not SENTENCE_END.search(text[max(0, k - 4):k])


def heading_body(text: str, section) -> "int | None":
    """Where the body of a section opened by a heading line starts, or ``None`` (no heading,
    a heading over 200 characters, or no body)."""
    if not section.heading_path:
        return None
    end = text.find("\n", section.start, section.end)
    if end < 0 or end - section.start > 200:
        return None
    body = end
    while body < section.end and text[body].isspace():
        body += 1
    return body if body < section.end else None


def transcript_of(text: str) -> bytes:
    """A WebVTT transcript of ``text``: one sentence per cue, 2-6 seconds each (by length)."""
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if s.strip() and not s.startswith("#")]
    out, t = ["WEBVTT", ""], 0.0
    stamp = lambda s: f"{int(s // 3600):02d}:{int(s % 3600 // 60):02d}:{s % 60:06.3f}"  # noqa: E731
    for s in sentences:
        d = min(6.0, max(2.0, len(s) / 15))
        out += [f"{stamp(t)} --> {stamp(t + d)}", s, ""]
        t += d
    return "\n".join(out).encode()


def functions(source: str) -> List[Tuple[int, int]]:
    """Character spans of the module's top-level functions and classes' methods."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    spans = []
    nodes = [n for top in tree.body for n in ([top] + (top.body if isinstance(top, ast.ClassDef) else []))]
    for n in nodes:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([n.lineno] + [d.lineno for d in n.decorator_list])
            spans.append((starts[first - 1], starts[n.end_lineno]))
    return spans


def files(args) -> Dict[str, List[str]]:
    """The files of each group (see the module doc), in a fixed order."""
    doc = "/usr/share/doc"
    stdlib = sysconfig.get_path("stdlib")
    by_size = lambda paths: sorted(paths, key=lambda p: (os.path.getsize(p), p))  # noqa: E731

    def spread(paths: Sequence[str]) -> List[str]:  # evenly over the sizes, not the smallest only
        paths = by_size(paths)
        step = max(1, len(paths) // args.files)
        return paths[::step][:args.files]

    modules = [p for p in glob.glob(os.path.join(stdlib, "*.py")) if 2_000 <= os.path.getsize(p) <= 60_000]
    return {
        "prose, labelled": [os.path.join(RETRIEVAL, f"{c}.md") for c in ("state_of_the_union", "wikitexts")],
        "PDF manuals": [os.path.join(REALDOCS, "debian-reference.en.pdf")]
                       + sorted(glob.glob(os.path.join(doc, "**", "*.pdf"), recursive=True)),
        "HTML manuals": sorted(glob.glob(os.path.join(REALDOCS, "ch0*.en.html")))
                        + spread(glob.glob(os.path.join(doc, "**", "*.html"), recursive=True)),
        "Markdown": spread(glob.glob(os.path.join(doc, "**", "*.md"), recursive=True)),
        "source code": spread(modules),
        "transcripts": [os.path.join(RETRIEVAL, "state_of_the_union.md")],
    }


def load(group: str, paths: Sequence[str]):
    """The parsed documents of a group (files that fail to parse are left out, and counted)."""
    from beam_chunking.errors import ChunkingError
    from beam_chunking.parsers import parse
    from beam_chunking.pipelines.preview import load_document
    from beam_chunking.types import Document

    docs, failed = [], 0
    for p in paths:
        try:
            if group == "transcripts":
                with open(p, encoding="utf-8") as f:
                    docs.append(parse(Document(p, p + ".vtt", transcript_of(f.read()), "text/vtt")))
            elif group == "prose, labelled":
                docs.append(load_document(p, content_types={"*.md": "text/plain"}))
            else:
                docs.append(load_document(p))
        except (ChunkingError, OSError):
            failed += 1
    return docs, failed


def excerpts() -> Dict[str, List[Tuple[int, int]]]:
    """Reference excerpts by corpus file name (whitespace at their edges left out)."""
    texts = {c: open(os.path.join(RETRIEVAL, f"{c}.md"), encoding="utf-8").read()
             for c in ("state_of_the_union", "wikitexts")}
    found: Dict[str, List[Tuple[int, int]]] = {}
    with open(os.path.join(RETRIEVAL, "questions.csv"), encoding="utf-8", newline="") as f:
        for q in csv.DictReader(f):
            text = texts[q["corpus_id"]]
            for r in json.loads(q["references"]):
                s, e = r["start_index"], r["end_index"]
                while s < e and text[s].isspace():
                    s += 1
                while e > s and text[e - 1].isspace():
                    e -= 1
                found.setdefault(q["corpus_id"] + ".md", []).append((s, e))
    return found


def candidates(group: str, tokens: int, chars_per_token: float):
    """(label, strategy) pairs for a group, all at about ``tokens`` cl100k tokens."""
    from beam_chunking.registry import get

    chars = round(tokens * chars_per_token)
    out = [("recursive", get("recursive", max_chunk_size=chars, overlap=0)),
           ("sentence", get("sentence", max_chunk_size=tokens, overlap=0)),
           ("structural", get("structural", max_chunk_size=tokens))]
    if group == "source code":
        out.append(("code", get("code", max_chunk_size=chars)))
    if group == "transcripts":
        out.append(("transcript", get("transcript", max_chunk_size=chars)))
    return out


def measure(group: str, docs, strategy, labelled, budget: int, tokens: int, enc) -> Dict[str, float]:
    """The columns of one group and strategy (see the module doc); ``budget``: the size in
    characters, ``tokens`` in cl100k tokens (``enc``)."""
    from beam_chunking.strategies.base import document_outcome
    from quality import junk_kinds

    n = dict.fromkeys(("chunks", "over", "headed", "orphans", "mid", "junk", "whole", "excerpts", "fns", "cut",
                      "cues_cut", "single"), 0)
    for doc in docs:
        chunks = document_outcome(strategy, doc).chunks
        starts = {s.start for s in doc.sections}
        headings = {h for s in doc.sections for h in s.heading_path}
        n["chunks"] += len(chunks)
        n["over"] += sum(1 for c in chunks if len(enc.encode_ordinary(c.text)) > tokens)
        prev_end = 0
        for c in chunks:
            if group != "source code":
                n["mid"] += mid_sentence(doc.text, max(c.start, prev_end), starts)
            prev_end = max(prev_end, c.end)
            n["junk"] += bool(junk_kinds(c.text, headings, set(), doc.content_type == "text/markdown"))
        spans = [(c.start, c.end) for c in chunks]
        for sec in doc.sections:
            body = heading_body(doc.text, sec)
            if body is not None:
                n["headed"] += 1
                n["orphans"] += not any(cs <= sec.start and body < ce for cs, ce in spans)
        for s, e in labelled.get(os.path.basename(doc.uri), ()):
            n["excerpts"] += 1
            n["whole"] += any(cs <= s and e <= ce for cs, ce in spans)
        if group == "source code":
            for s, e in functions(doc.text):
                while s < e and doc.text[s].isspace():  # chunks are trimmed: so are the functions
                    s += 1
                while e > s and doc.text[e - 1].isspace():
                    e -= 1
                if e - s <= budget:
                    n["fns"] += 1
                    n["cut"] += not any(cs <= s and e <= ce for cs, ce in spans)
        if group == "transcripts":
            cues = [(s.start, s.end) for s in doc.sections]
            inside = lambda x: any(a < x < b for a, b in cues)  # noqa: E731
            n["cues_cut"] += sum(1 for c in chunks if inside(c.start) or inside(c.end))
            n["single"] += sum(1 for c in chunks if sum(1 for a, b in cues if c.start <= a and b <= c.end) == 1)
    return n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tokens", type=int, default=400, help="size of every candidate, in cl100k tokens (default 400)")
    ap.add_argument("--files", type=int, default=40, help="files per /usr/share/doc or stdlib group (default 40)")
    ap.add_argument("--only", default="", help="comma-separated group prefixes (pdf, html, markdown, code ...)")
    args = ap.parse_args()
    from beam_chunking.sizing import load_encoding

    enc = load_encoding("cl100k_base")
    labelled = excerpts() if os.path.isdir(RETRIEVAL) else {}
    only = [w.lower() for w in args.only.split(",") if w]
    print(f"Every candidate at {args.tokens} cl100k tokens (character-sized ones at that many tokens times "
          "the group's characters per token), no overlap.\n")
    columns = ("group", "files", "strategy", "chunks", "over the size in tokens", "headings apart from their text",
               "mid-sentence starts", "junk", "excerpts whole", "functions cut", "cues cut / one-cue chunks", "seconds")
    print("| " + " | ".join(columns) + " |")
    print("|---|---:|---|" + "---:|" * (len(columns) - 3))
    for group, paths in files(args).items():
        if only and not any(w in group.lower() for w in only):
            continue
        docs, failed = load(group, [p for p in paths if os.path.exists(p)])
        if not docs:
            print(f"| {group} | 0 | (no files here) |" + " |" * (len(columns) - 3))
            continue
        text = "".join(d.text for d in docs)
        cpt = len(text) / max(1, len(enc.encode_ordinary(text)))
        for label, strategy in candidates(group, args.tokens, cpt):
            t0 = time.perf_counter()
            n = measure(group, docs, strategy, labelled, round(args.tokens * cpt), args.tokens, enc)
            pct = lambda a, b: f"{100 * a / b:.1f}%" if b else "-"  # noqa: E731
            files_text = f"{len(docs)}" + (f" (+{failed} failed)" if failed else "")
            mid = "-" if group == "source code" else pct(n["mid"], n["chunks"])
            cues = f"{n['cues_cut']} / {pct(n['single'], n['chunks'])}" if group == "transcripts" else "-"
            cells = (group, files_text, label, n["chunks"], pct(n["over"], n["chunks"]), pct(n["orphans"], n["headed"]),
                     mid, pct(n["junk"], n["chunks"]), pct(n["whole"], n["excerpts"]), pct(n["cut"], n["fns"]), cues,
                     f"{time.perf_counter() - t0:.1f}")
            print("| " + " | ".join(map(str, cells)) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
