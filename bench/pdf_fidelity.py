"""PDF fidelity: texts with known paragraphs typeset by Chromium, parsed, chunked, aligned back.

    python bench/pdf_fidelity.py --baseline-tree /tmp/pdf-baseline --out bench/out/pdf_fidelity.md
    python bench/pdf_fidelity.py --baseline-tree /tmp/pdf-baseline --limit 4 --no-peers --rounds 2   # ~1 min

The texts: ``../shared/retrieval-dev`` (the State of the Union speech, and each article of
``wikitexts.md`` as a text of its own, with the questions' reference excerpts) and the chapters
of ``../shared/realdocs/debian-reference`` (headings, paragraphs, list paragraphs and ``<pre>``
blocks taken from the HTML; no excerpts), taken alternately for ``--limit``. Each is typeset by
``bench/typeset.py`` in three layouts (``justified``: hyphenated, with a running header and a
page-number footer; ``two-column``; ``plain``), cached under ``bench/out/pdf``, parsed, chunked,
and every parsed word aligned to the source's words (``\w+``, NFKC, lower case; a word broken
at a line-end hyphen is joined when the joined word is a source word, and counted). The
alignment is difflib's matching blocks over the two word sequences (in order); parsed words
left over are matched again against the source words left over, and runs of 3 or more found
there are *moved* (read out of order), the rest *junk* (headers, page numbers, garbage).

Columns, per layout, parser and chunker (sums over the texts):

- **breaks recovered**: source paragraph boundaries (between blocks: headings, paragraphs,
  ``<pre>``) with a blank line in the parsed text between the words aligned to either side;
- **spurious breaks**: gaps between two aligned words of one block (consecutive among the
  aligned words) holding a blank line that the source does not have there;
- **words in order** / **moved**: shares of the source words; **junk**: share of the parsed words;
- **hyphen splits left**: words the parser left broken at a line-end hyphen; **hyphens
  dropped**: compounds whose own hyphen the parser removed at a line end (``eighth-`` +
  ``largest`` read as ``eighthlargest``; such a word is also junk, its two halves lost);
- **new text starts mid-sentence**: chunks whose new text (from the previous chunk's end on, so
  overlap is left out) starts inside a word, or at an aligned source word that does not begin
  a block or a sentence (a sentence begins after ``.``, ``!``, ``?`` plus closing quotes and
  whitespace, or on a new line of a ``<pre>``); chunks without an aligned word are not counted;
- **excerpts whole**: reference excerpts whose source words all lie within the aligned source
  range of one chunk; *PDF* for the parsed PDF, *unrendered* for the source text chunked
  directly with the same chunker (the same for every layout);
- **pages per CPU s**: the layout's pages over the sum of each PDF's best parse time of
  ``--rounds`` in CPU seconds of the parsing process (other programs on a shared machine
  disturb that far less than wall time), this tree and the baseline tree taking turns file by
  file, each in a process of its own (``parse_in_process``, after a warm-up); **this /
  baseline** is the ratio of the two speeds with the range of the per-round ratios.
  LangChain's loader: best of ``--rounds`` in this process; Unstructured: one pass.

Chunkers: our ``recursive`` (the default strategy, 512/50 characters), ``sentence`` and
``structural`` (512 cl100k tokens) at their defaults; LangChain ``PyPDFium2Loader`` pages split
by ``RecursiveCharacterTextSplitter(512, 50)``, Chonkie ``RecursiveChunker`` (512 characters)
over the PDFium text of the pages joined by newlines, Unstructured ``partition_pdf`` +
``chunk_by_title(max_characters=512, overlap=50)`` when ``--unstructured-python`` names a
Python that has it.
"""
from __future__ import annotations

import argparse
import bisect
import csv
import datetime
import json
import os
import re
import subprocess
import sys
import time
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))
from typeset import LAYOUTS, Block, build_html, source_text, typeset_cached  # noqa: E402

SHARED = ROOT.parent / "shared"
RETRIEVAL = Path(os.environ.get("BEAM_CHUNKING_RETRIEVAL_DEV") or SHARED / "retrieval-dev")
REALDOCS = Path(os.environ.get("BEAM_CHUNKING_REALDOCS") or SHARED / "realdocs")
OUT = Path(os.environ.get("BEAM_CHUNKING_PDF_CACHE") or HERE / "out" / "pdf")  # the typeset PDFs
STRATEGIES = ("recursive", "sentence", "structural")
Spans = List[Tuple[int, int]]


# -- the texts -------------------------------------------------------------------------------
@dataclass
class Text:
    """A source text: its blocks, the joined text, block spans and reference excerpts in it."""

    name: str
    blocks: List[Block]
    excerpts: Spans = field(default_factory=list)

    def __post_init__(self):
        self.text, self.spans = source_text(self.blocks)


def _blocks_with_raw(raw: str, pieces: Sequence[Tuple[str, int, int, int]]) -> Tuple[List[Block], list]:
    """Blocks from ``(kind, level, raw start, raw end)`` pieces, and ``(raw start, raw end, block)``."""
    return [Block(k, raw[s:e], lv) for k, lv, s, e in pieces], [(s, e, i) for i, (_, _, s, e) in enumerate(pieces)]


def _map_excerpts(raw_map, spans: Spans, excerpts: Spans) -> Spans:
    """Raw corpus offsets to source-text offsets (clamped into the blocks they touch)."""
    out = []
    for s, e in excerpts:
        inside = [(rs, re_, i) for rs, re_, i in raw_map if re_ > s and rs < e]
        if not inside:
            continue
        (rs0, _, i0), (rs1, re1, i1) = inside[0], inside[-1]
        out.append((spans[i0][0] + max(s, rs0) - rs0, spans[i1][0] + min(e, re1) - rs1))
    return out


def retrieval_texts() -> List[Text]:
    """The speech as one text and each wikitexts article as one, with their excerpts."""
    refs: Dict[str, Spans] = defaultdict(list)
    with open(RETRIEVAL / "questions.csv", encoding="utf-8", newline="") as f:
        for q in csv.DictReader(f):
            refs[q["corpus_id"]] += [(r["start_index"], r["end_index"]) for r in json.loads(q["references"])]
    out = []
    raw = (RETRIEVAL / "state_of_the_union.md").read_text(encoding="utf-8")
    pieces = [("paragraph", 0, m.start(), m.end()) for m in re.finditer(r"\S(?:.*\S)?", raw)]
    blocks, raw_map = _blocks_with_raw(raw, pieces)
    text = Text("state_of_the_union", blocks)
    text.excerpts = _map_excerpts(raw_map, text.spans, refs["state_of_the_union"])
    out.append(text)
    raw = (RETRIEVAL / "wikitexts.md").read_text(encoding="utf-8")
    articles: List[list] = []
    for m in re.finditer(r"\S(?:.*\S)?", raw):  # one block per line
        h = re.fullmatch(r"((?:= )+)(.+?)((?: =)+)", m.group())
        if h:
            level = h.group(1).count("=")
            piece = ("heading", min(level, 4), m.start() + h.start(2), m.start() + h.end(2))
            if level == 1 and (not articles or articles[-1][-1][3] - articles[-1][0][2] >= 2000):
                articles.append([])  # a short "article" is a table's rows read as headings: kept in one
        else:
            piece = ("paragraph", 0, m.start(), m.end())
        articles[-1].append(piece)
    for pieces in articles:
        blocks, raw_map = _blocks_with_raw(raw, pieces)
        lo, hi = pieces[0][2], pieces[-1][3]
        text = Text("wiki-" + re.sub(r"\W+", "_", blocks[0].text.strip()).strip("_")[:40], blocks)
        text.excerpts = _map_excerpts(raw_map, text.spans, [(s, e) for s, e in refs["wikitexts"] if lo <= s < hi])
        out.append(text)
    return out


def debian_texts() -> List[Text]:
    """The Debian Reference chapters: their headings, paragraphs, list paragraphs and ``<pre>``."""
    from selectolax.lexbor import LexborHTMLParser as HTMLParser

    out = []
    for path in sorted((REALDOCS / "debian-reference").glob("ch*.en.html")):
        tree = HTMLParser(path.read_text(encoding="utf-8"))
        for junk in tree.css("div.toc, div.navheader, div.navfooter, table"):
            junk.decompose()
        blocks = []
        for node in tree.css("h1, h2, h3, h4, h5, p, pre, dt"):
            if node.tag == "pre":
                text = "\n".join(ln.rstrip() for ln in node.text(deep=True).strip("\n").splitlines())
                kind, level = "pre", 0
            else:
                text = " ".join(node.text(deep=True).split())
                kind, level = ("heading", min(int(node.tag[1]), 4)) if node.tag[0] == "h" else ("paragraph", 0)
            if text.strip():
                blocks.append(Block(kind, text, level))
        out.append(Text("debian-" + path.name.split(".")[0], blocks))
    return out


def all_texts(limit: Optional[int]) -> List[Text]:
    """Retrieval texts and Debian chapters, alternately, the first ``limit`` of them."""
    a, b = retrieval_texts(), debian_texts()
    mixed = [t for pair in zip(a, b) for t in pair] + a[len(b):] + b[len(a):]
    return mixed[:limit] if limit else mixed


# -- alignment -------------------------------------------------------------------------------
WORD = re.compile(r"\w+")
# A line-end hyphen left in: a soft hyphen, PDFium's U+0002 or U+2010 (what Chromium draws for a
# soft hyphen), with or without the line break after it; an ASCII hyphen only with the break,
# since "CD-ROM" is a word of its own.
HYPHEN_GAP = re.compile(r"[\u00ad\x02\u2010]+\s*|[-\u2011]+\s+")
BLANK = re.compile(r"\n[ \t\r\f\v]*\n")
SENTENCE_GAP = re.compile(r"[.!?\u2026][\"'\u201d\u2019\u00bb)\]]*\s")


def words(text: str) -> Tuple[List[str], List[int], List[int]]:
    """Normalised words of ``text`` (NFKC, lower case) with their character spans."""
    norms, starts, ends = [], [], []
    for m in WORD.finditer(text):
        norms.append(unicodedata.normalize("NFKC", m.group()).lower())
        starts.append(m.start())
        ends.append(m.end())
    return norms, starts, ends


@dataclass
class Alignment:
    """Parsed words aligned to source words of one text (indices into both word lists)."""

    src: Text
    parsed: str
    s_words: tuple
    p_words: tuple
    p2s: List[int]  # per parsed word: the source word it is aligned to in order, or -1
    moved: int
    hyphen_splits: int
    hyphens_dropped: int
    sentence_start: List[bool]


def align(src: Text, parsed: str) -> Alignment:
    """Align ``parsed`` (a parser's text of ``src``'s PDF) to ``src`` word by word."""
    s_norm, s_start, s_end = words(src.text)
    vocab = set(s_norm)
    raw_norm, raw_start, raw_end = words(parsed)
    p_norm, p_start, p_end, splits = [], [], [], 0
    k = 0
    while k < len(raw_norm):  # join words broken at a line-end hyphen into the source's word
        w, st, en = raw_norm[k], raw_start[k], raw_end[k]
        while k + 1 < len(raw_norm) and w + raw_norm[k + 1] in vocab \
                and HYPHEN_GAP.fullmatch(parsed, en, raw_start[k + 1]):
            w, en, k, splits = w + raw_norm[k + 1], raw_end[k + 1], k + 1, splits + 1
        p_norm.append(w)
        p_start.append(st)
        p_end.append(en)
        k += 1
    ids: Dict[str, int] = {}
    a = [ids.setdefault(w, len(ids)) for w in s_norm]
    b = [ids.setdefault(w, len(ids)) for w in p_norm]
    p2s = [-1] * len(b)
    s2p = [-1] * len(a)
    for i, j, n in SequenceMatcher(None, a, b).get_matching_blocks():
        for d in range(n):
            p2s[j + d], s2p[i + d] = i + d, j + d
    left_p = [j for j in range(len(b)) if p2s[j] < 0]
    left_s = [i for i in range(len(a)) if s2p[i] < 0]
    moved = sum(n for _, _, n in SequenceMatcher(None, [a[i] for i in left_s], [b[j] for j in left_p]
                                                 ).get_matching_blocks() if n >= 3)
    starts = {s for s, _ in src.spans}
    # A compound's hyphen dropped at a line end ("state-of-the-" + "art" read as "stateof-the-art").
    compounds = {s_norm[i] + s_norm[i + 1] for i in range(len(a) - 1) if src.text[s_end[i]:s_start[i + 1]] == "-"}
    dropped = sum(1 for j, w in enumerate(p_norm) if p2s[j] < 0 and w in compounds and w not in vocab)
    sentence_start = []
    for i in range(len(a)):  # a line break in the gap: a block boundary or a new line of a <pre>
        gap = src.text[s_end[i - 1]:s_start[i]] if i else "\n"
        sentence_start.append("\n" in gap or bool(SENTENCE_GAP.search(gap)) or s_start[i] in starts)
    return Alignment(src, parsed, (s_norm, s_start, s_end), (p_norm, p_start, p_end), p2s, moved, splits, dropped,
                     sentence_start)


# -- metrics ---------------------------------------------------------------------------------
def parse_counts(al: Alignment) -> Dict[str, int]:
    """Counts behind the parse columns: boundaries, breaks, spurious, words, moved, junk."""
    _, s_start, s_end = al.s_words
    _, p_start, p_end = al.p_words
    bounds = [e for _, e in al.src.spans[:-1]]  # a boundary at each block's end but the last
    pairs = [(i, j) for j, i in enumerate(al.p2s) if i >= 0]
    recovered = spurious = 0
    for (i1, j1), (i2, j2) in zip(pairs, pairs[1:]):
        inside = bisect.bisect_left(bounds, s_start[i2]) - bisect.bisect_left(bounds, s_end[i1])
        blanks = len(BLANK.findall(al.parsed, p_end[j1], p_start[j2]))
        if inside:
            recovered += min(inside, blanks)
        elif blanks and not BLANK.search(al.src.text, s_end[i1], s_start[i2]):
            spurious += 1
    matched = len(pairs)
    return dict(boundaries=len(bounds), recovered=recovered, spurious=spurious, src_words=len(s_start),
                in_order=matched, moved=al.moved, parsed_words=len(p_start),
                junk=len(p_start) - matched - al.moved, hyphen_splits=al.hyphen_splits,
                hyphens_dropped=al.hyphens_dropped)


def chunk_counts(al: Alignment, chunks: Spans, direct: Optional[Spans] = None) -> Dict[str, int]:
    """Counts behind the chunk columns for chunk spans in the parsed text (and, when given,
    spans in the source text itself for the unrendered excerpt measure)."""
    _, p_start, p_end = al.p_words
    _, s_start, s_end = al.s_words
    mid = counted = 0
    ranges = []
    prev_end = 0
    for cs, ce in chunks:
        lo = bisect.bisect_right(p_end, max(cs, prev_end))  # first word ending after the new text's start
        hi = bisect.bisect_right(p_end, ce)
        aligned = [al.p2s[k] for k in range(bisect.bisect_left(p_start, cs), hi) if al.p2s[k] >= 0]
        if aligned:
            ranges.append((aligned[0], aligned[-1]))
        new_start = max(cs, prev_end)
        prev_end = max(prev_end, ce)
        if new_start >= ce:
            continue
        if lo < len(p_start) and p_start[lo] < new_start < p_end[lo]:
            mid, counted = mid + 1, counted + 1  # the new text starts inside a word
            continue
        first = next((al.p2s[k] for k in range(lo, hi) if al.p2s[k] >= 0), -1)
        if first >= 0:
            counted += 1
            mid += not al.sentence_start[first]
    out = dict(chunks=len(chunks), starts_counted=counted, mid=mid, excerpts=len(al.src.excerpts),
               whole_pdf=_whole(al, ranges))
    if direct is not None:
        direct_ranges = [(bisect.bisect_left(s_start, cs), bisect.bisect_right(s_end, ce) - 1) for cs, ce in direct]
        out["whole_direct"] = _whole(al, direct_ranges)
    return out


def _whole(al: Alignment, ranges: Sequence[Tuple[int, int]]) -> int:
    """Excerpts whose source words lie within one of the source word ``ranges``."""
    _, s_start, s_end = al.s_words
    whole = 0
    for s, e in al.src.excerpts:
        a, b = bisect.bisect_right(s_end, s), bisect.bisect_left(s_start, e) - 1
        whole += b >= a and any(lo <= a and b <= hi for lo, hi in ranges)
    return whole


def locate(text: str, pieces: Sequence[str]) -> Spans:
    """Spans of chunk texts in ``text``, searched from the previous chunk on (peers without offsets)."""
    out, cursor, last = [], 0, 0
    for p in pieces:
        p = p.strip()
        if not p:
            continue
        i = text.find(p, last)
        if i < 0:
            i = text.find(p)
        if i < 0:
            continue
        out.append((i, i + len(p)))
        last = i + 1
    return out


# -- parsing in a tree, timed --------------------------------------------------------------------
# The worker: given PDF paths (JSON, first line), parses each once in-process (warm-up) and
# prints their texts and sections; then reads lines of path lists and prints the seconds one
# pass over them takes.
_WORKER = r"""
import json, sys, time
from beam_chunking.parsers.dispatch import parse_in_process
from beam_chunking.types import Document
paths = json.loads(sys.stdin.readline())
docs = {p: Document(p, p, open(p, "rb").read(), "application/pdf") for p in paths}
out = {}
for p, d in docs.items():
    try:
        r = parse_in_process(d)
        out[p] = {"text": r.text, "sections": [[s.start, s.end, s.level, list(s.heading_path), s.kind, s.page]
                                               for s in r.sections],
                  "boxes": [list(b) for b in getattr(r, "boxes", ())]}
    except Exception as e:
        out[p] = {"error": f"{type(e).__name__}: {e}"}
print(json.dumps(out), flush=True)
for line in sys.stdin:  # CPU seconds of this process: other programs on a shared machine count less
    group = json.loads(line)
    started = time.process_time()
    for p in group:
        parse_in_process(docs[p])
    print(time.process_time() - started, flush=True)
"""


class TreeWorker:
    """A process parsing PDFs with the package of ``tree`` (``PYTHONPATH``), same interpreter."""

    def __init__(self, tree: Path, paths: Sequence[str]):
        self.proc = subprocess.Popen([sys.executable, "-c", _WORKER], cwd="/",
                                     env=dict(os.environ, PYTHONPATH=str(tree)),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.proc.stdin.write(json.dumps(list(paths)) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the parser worker of {tree} did not start")
        self.parsed = json.loads(line)

    def document(self, path: str):
        """The worker's parse of ``path`` as a ParsedDocument of this tree (section metadata left out)."""
        from beam_chunking.types import ParsedDocument, Section

        got = self.parsed[path]
        if "error" in got:
            raise RuntimeError(got["error"])
        sections = tuple(Section(s, e, lv, tuple(hp), kind, page) for s, e, lv, hp, kind, page in got["sections"])
        if not got.get("boxes"):  # a tree without geometry
            return ParsedDocument(path, path, "application/pdf", got["text"], sections)
        from beam_chunking.types import TextBox

        boxes = tuple(TextBox(*b) for b in got["boxes"])
        return ParsedDocument(path, path, "application/pdf", got["text"], sections, boxes=boxes)

    def time(self, paths: Sequence[str]) -> float:
        self.proc.stdin.write(json.dumps(list(paths)) + "\n")
        self.proc.stdin.flush()
        return float(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


def parse_times(trees: Dict[str, TreeWorker], pdfs: Dict[str, Dict[str, str]], rounds: int
                ) -> Dict[Tuple[str, str], List[float]]:
    """Seconds per ``(tree label, PDF)`` and round. The trees take turns file by file (who goes
    first alternating by round), so that a slow spell of a shared machine hits both alike."""
    out: Dict[Tuple[str, str], List[float]] = defaultdict(list)
    for r in range(rounds):
        order = list(trees.items()) if r % 2 == 0 else list(trees.items())[::-1]
        for paths in pdfs.values():
            for path in paths.values():
                for label, w in order:
                    out[(label, path)].append(w.time([path]))
    return out


# -- peers -------------------------------------------------------------------------------------
def langchain_run(path: str, rounds: int) -> Tuple[str, List[str], float]:
    """LangChain: PyPDFium2Loader's pages (its default mode), split by
    RecursiveCharacterTextSplitter(512, 50); the text, the chunks and the best load seconds."""
    import warnings

    warnings.filterwarnings("ignore", category=DeprecationWarning)
    from langchain_community.document_loaders import PyPDFium2Loader
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    best = float("inf")
    for _ in range(max(rounds, 1)):
        started = time.process_time()
        pages = PyPDFium2Loader(path).load()
        best = min(best, time.process_time() - started)
    splitter = RecursiveCharacterTextSplitter(chunk_size=512, chunk_overlap=50)
    return ("\n".join(p.page_content for p in pages), [c.page_content for c in splitter.split_documents(pages)],
            best)


def langchain_direct(text: str) -> List[str]:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    return RecursiveCharacterTextSplitter(chunk_size=512, chunk_overlap=50).split_text(text)


def chonkie_spans(text: str) -> Spans:
    """Chonkie's RecursiveChunker, 512 characters (no overlap), as spans of ``text``."""
    from chonkie import RecursiveChunker

    return [(c.start_index, c.end_index) for c in RecursiveChunker(tokenizer="character", chunk_size=512).chunk(text)]


def pdfium_text(path: str) -> str:
    """The pages' PDFium text joined by newlines, as LangChain's loader reads it."""
    import pypdfium2

    pdf = pypdfium2.PdfDocument(path)
    try:
        return "\n".join(pdf[k].get_textpage().get_text_range() for k in range(len(pdf)))
    finally:
        pdf.close()


_UNSTRUCTURED = r"""
import json, sys, time
from unstructured.partition.pdf import partition_pdf
from unstructured.chunking.title import chunk_by_title
out = {}
for p in json.loads(sys.stdin.read()):
    t = time.process_time()
    try:
        els = partition_pdf(filename=p, strategy="fast")
        secs = time.process_time() - t
        if not els:  # 0.27 downloads a spaCy model at run time and, offline, skips the text silently
            raise RuntimeError("partition_pdf returned no elements (offline? it downloads en_core_web_sm)")
        chunks = chunk_by_title(els, max_characters=512, overlap=50)
        out[p] = {"text": "\n\n".join(e.text for e in els), "chunks": [c.text for c in chunks], "seconds": secs}
    except Exception as e:
        out[p] = {"error": f"{type(e).__name__}: {e}"}
print(json.dumps(out))
"""


def unstructured_run(python: str, paths: Sequence[str]) -> Dict[str, dict]:
    """Unstructured's partition_pdf (``fast``: pdfminer, no models) + chunk_by_title, in ``python``."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", DO_NOT_TRACK="true",
               SCARF_NO_ANALYTICS="true", UNSTRUCTURED_DISABLE_TELEMETRY="1")
    done = subprocess.run([python, "-c", _UNSTRUCTURED], input=json.dumps(list(paths)), capture_output=True,
                          text=True, env=env, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# -- the run -------------------------------------------------------------------------------------
def page_count(path: str) -> int:
    import pypdfium2

    pdf = pypdfium2.PdfDocument(path)
    try:
        return len(pdf)
    finally:
        pdf.close()


def add(total: Dict[str, float], counts: Dict[str, float]) -> None:
    for k, v in counts.items():
        total[k] = total.get(k, 0) + v


def our_rows(label: str, worker: TreeWorker, pdfs: Dict[str, str], texts: Sequence[Text], strategies,
             rows: Dict[Tuple[str, str], dict]) -> None:
    """Parse and chunk counts of one tree's parses, summed over the texts, into ``rows``."""
    from beam_chunking.strategies.base import document_outcome

    for t in texts:
        doc = worker.document(pdfs[t.name])
        al = align(t, doc.text)
        pc = parse_counts(al)
        for name, strategy in strategies.items():
            direct = [(c.start, c.end) for c in strategy.chunk(t.text)]
            # As the pipeline chunks (page_boundaries applied, regions located).
            chunks = [(c.start, c.end) for c in document_outcome(strategy, doc).chunks]
            add(rows.setdefault((label, name), {}), {**pc, **chunk_counts(al, chunks, direct)})


def peer_rows(pdfs: Dict[str, str], texts: Sequence[Text], unstructured: Optional[Dict[str, dict]],
              rows: Dict[Tuple[str, str], dict], rounds: int) -> None:
    """The peers' counts, summed over the texts, into ``rows`` (with their parse seconds)."""
    for t in texts:
        path = pdfs[t.name]
        lc_text, lc_chunks, secs = langchain_run(path, rounds)
        al = align(t, lc_text)
        pc = parse_counts(al)
        direct = locate(t.text, langchain_direct(t.text))
        add(rows.setdefault(("LangChain PyPDFium2Loader", "RecursiveCharacterTextSplitter 512/50 chars"), {}),
            {**pc, **chunk_counts(al, locate(lc_text, lc_chunks), direct), "seconds": secs})
        add(rows.setdefault(("PDFium text", "Chonkie RecursiveChunker 512 chars"), {}),
            {**pc, **chunk_counts(al, chonkie_spans(lc_text), chonkie_spans(t.text))})
        if unstructured is not None:
            got = unstructured.get(path, {"error": "not run"})
            if "error" in got:
                NOTES.add(f"Unstructured not measured: {got['error']}.")
                continue
            al = align(t, got["text"])
            add(rows.setdefault(("Unstructured partition_pdf (fast)", "chunk_by_title 512/50 chars"), {}),
                {**parse_counts(al), **chunk_counts(al, locate(got["text"], got["chunks"])),
                 "seconds": got["seconds"]})


NOTES: set = set()  # what could not be measured, printed under the tables


def pct(num: float, den: float) -> str:
    return f"{100.0 * num / den:.1f}%" if den else "-"


COLUMNS = ("parser", "chunker", "pages per CPU s", "this / baseline", "breaks recovered", "spurious breaks",
           "words in order", "moved", "junk", "hyphen splits left", "hyphens dropped", "chunks",
           "new text starts mid-sentence", "excerpts whole: PDF", "excerpts whole: unrendered")


def table(layout: str, pages: int, rows: Dict[Tuple[str, str], dict], speed: Dict[str, float], ratio: str) -> str:
    """The Markdown table of one layout (``ratio``: this tree's speed over the baseline's, as text)."""
    out = [f"#### {layout} ({pages} pages)\n", "| " + " | ".join(COLUMNS) + " |",
           "|---|---|" + "---:|" * (len(COLUMNS) - 2)]
    same = [k for k in rows if k[0] == "baseline" and rows[k] == rows.get(("this tree", k[1]))]
    for (parser, chunker), r in rows.items():
        if (parser, chunker) in same:
            continue
        if parser in speed:
            pps = f"{speed[parser]:.0f}"
        elif r.get("seconds"):
            pps = f"{pages / r['seconds']:.0f}" + ("" if parser.startswith("LangChain") else " (1 pass)")
        else:
            pps = "-"
        out.append("| " + " | ".join([
            parser, chunker, pps, ratio if parser == "this tree" else "",
            pct(r["recovered"], r["boundaries"]), f"{r['spurious']:.0f}", pct(r["in_order"], r["src_words"]),
            pct(r["moved"], r["src_words"]), pct(r["junk"], r["parsed_words"]), f"{r['hyphen_splits']:.0f}",
            f"{r['hyphens_dropped']:.0f}", f"{r['chunks']:.0f}", pct(r["mid"], r["starts_counted"]),
            pct(r["whole_pdf"], r["excerpts"]),
            pct(r["whole_direct"], r["excerpts"]) if "whole_direct" in r else "-"]) + " |")
    if same:
        out.append(f"\nThe baseline tree's parse gives the same counts as this tree's for "
                   f"{', '.join(k[1] for k in same)}: its rows are left out (its speed: "
                   f"{speed['baseline']:.0f} pages per CPU second).")
    return "\n".join(out) + "\n"


def strategy_of(spec: str, get):
    """``name`` or ``name:option=value:...`` (``sentence:page_boundaries=hard``) as a strategy."""
    name, *options = spec.split(":")
    values = {}
    for option in options:
        key, _, value = option.partition("=")
        values[key] = int(value) if value.isdigit() else value
    return get(name, **values)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--layouts", default=",".join(LAYOUTS), help=f"comma-separated, of {', '.join(LAYOUTS)}")
    ap.add_argument("--strategies", default=",".join(STRATEGIES),
                    help="our strategies, by registry name, each with options as name:option=value")
    ap.add_argument("--limit", type=int, default=0, help="the first N texts only (round-robin of the sources)")
    ap.add_argument("--baseline-tree", type=Path, help="a checkout to compare against (git worktree add ...)")
    ap.add_argument("--rounds", type=int, default=5, help="timed parses per tree and PDF (the best counts)")
    ap.add_argument("--no-peers", action="store_true", help="our parser only (the quick loop)")
    ap.add_argument("--unstructured-python", help="a Python with unstructured[pdf] installed")
    ap.add_argument("--out", type=Path, help="also write the tables to this file")
    args = ap.parse_args()
    missing = [p for p in (RETRIEVAL / "questions.csv", REALDOCS / "debian-reference") if not p.exists()]
    if missing:
        print("bench/pdf_fidelity.py needs the shared files: " + ", ".join(map(str, missing)), file=sys.stderr)
        return 2
    from beam_chunking.registry import get

    strategies = {spec: strategy_of(spec, get) for spec in args.strategies.split(",") if spec}
    layouts = [x for x in args.layouts.split(",") if x]
    texts = all_texts(args.limit or None)
    started = time.perf_counter()
    pdfs = {lay: {t.name: str(typeset_cached(build_html(t.blocks, t.name), lay, OUT, t.name)) for t in texts}
            for lay in layouts}
    print(f"typeset {len(texts)} texts x {len(layouts)} layouts in {time.perf_counter() - started:.0f} s",
          file=sys.stderr)
    all_paths = [p for lay in layouts for p in pdfs[lay].values()]
    trees = {"this tree": TreeWorker(ROOT, all_paths)}
    if args.baseline_tree:
        trees["baseline"] = TreeWorker(args.baseline_tree.resolve(), all_paths)
    times = parse_times(trees, pdfs, args.rounds)
    unstructured = None
    if args.unstructured_python and not args.no_peers:
        try:
            unstructured = unstructured_run(args.unstructured_python, all_paths)
        except Exception as e:  # reported, and the table goes on without it
            NOTES.add(f"Unstructured not measured: {e}.")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    parts = [f"_{datetime.date.today().isoformat()}, commit {commit or '?'} plus working tree, "
             f"`python bench/pdf_fidelity.py {' '.join(sys.argv[1:])}`; {len(texts)} texts, "
             f"{sum(len(t.excerpts) for t in texts)} excerpts._\n"]
    for lay in layouts:
        rows: Dict[Tuple[str, str], dict] = {}
        for label, w in trees.items():
            our_rows(label, w, pdfs[lay], texts, strategies, rows)
        if not args.no_peers:
            peer_rows(pdfs[lay], texts, unstructured, rows, args.rounds)
        pages = sum(page_count(p) for p in pdfs[lay].values())
        best = {label: sum(min(times[(label, p)]) for p in pdfs[lay].values()) for label in trees}
        speed = {label: pages / secs for label, secs in best.items()}
        ratio = "-"
        if "baseline" in trees:
            per_round = sorted(sum(times[("baseline", p)][r] for p in pdfs[lay].values())
                               / sum(times[("this tree", p)][r] for p in pdfs[lay].values())
                               for r in range(args.rounds))
            ratio = f"{best['baseline'] / best['this tree']:.2f}x [{per_round[0]:.2f}-{per_round[-1]:.2f}]"
        parts.append(table(lay, pages, rows, speed, ratio))
        print(parts[-1], flush=True)
    for w in trees.values():
        w.close()
    if NOTES:
        parts.append("\n".join(sorted(NOTES)) + "\n")
        print(parts[-1])
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(parts[0] + "\n" + "\n".join(parts[1:]), encoding="utf-8")
    print(f"total {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
