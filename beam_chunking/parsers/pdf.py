"""PDF: one section per page (finer where a bookmark starts mid-page), pages numbered from 1.

Text comes from PDFium (pypdfium2). On the Debian Reference it keeps 98.9% of words
intact against the book's own text edition, where pypdf glues words together (76.6%) and is
17x slower; ``bench/parsers.py`` measures both. Details:

- Pages are extracted one at a time and each page object is closed before the next, so
  memory stays flat however many pages there are (``bench/README.md`` gives the figure).
- The outline (bookmarks) gives ``heading_path``; where a bookmark's title is found in its
  page's text, the page is split there so the heading starts its own section.
- Line-end hyphenation marks are joined (``distri-`` / ``bution`` -> ``distribution``),
  line endings become ``\\n``.
- Page furniture is cut out of the text and recorded in ``ParsedDocument.dropped`` (see
  :mod:`~beam_chunking.parsers.furniture` for the rules): running headers and footers
  (``"running header"``, ``"running footer"``: a first/last line repeated, digits aside, on
  at least 3 pages and 5% of them, or one that carries the page number at one end) and page
  numbers (``"page number"``: ``12``, ``xiv``, ``Page 12``, ``12 of 40``). With
  ``keep={"page_furniture"}`` they stay in the text and the page's first and last sections
  are flagged with ``page_header`` / ``page_footer`` metadata holding the line.
- Tables of contents are cut out the same way (``"table of contents"``): every dot-leader
  entry (``1.2 Title . . . . 12``), and the whole entry run of a contents page with its
  ``Contents`` / ``List of Tables`` title; so are dot-leader indexes (``"index"``, page
  numbers out of order). ``keep={"contents"}`` keeps them.
- Pages without text (scans) are counted in ``pdf_pages_without_text`` metadata.

Refused with a specific :class:`~beam_chunking.errors.ParseError`: bytes without a
``%PDF-`` header, truncated files (no ``%%EOF`` trailer), password-protected files, damaged
files PDFium cannot open, and more pages than ``limits.max_pages``. A page with more than
``limits.max_page_chars`` characters, or pages that together pass ``limits.max_text_chars``,
fail the document as they are extracted (:class:`~beam_chunking.errors.LimitExceeded`).
"""
from __future__ import annotations

import re
import threading
from typing import Dict, FrozenSet, List, Tuple

from beam_chunking.errors import LimitExceeded, ParseError
from beam_chunking.parsers._build import TextBuilder, clean
from beam_chunking.parsers._optional import require
from beam_chunking.parsers.drops import KEEP_NOTHING, LABELS
from beam_chunking.parsers.furniture import Furniture, contents_lines
from beam_chunking.parsers.limits import DEFAULT_LIMITS, ParseLimits, check_time, exceeded
from beam_chunking.text.headings import heading_path
from beam_chunking.types import Document, ParsedDocument

# PDFium is not thread-safe and Beam workers run several threads per process.
_PDFIUM_LOCK = threading.Lock()
# A line above a bookmarked title that labels it ("Chapter 1", "Part II", "3.2") starts with it.
_LABEL_LINE = re.compile(r"^(?:(?:chapter|part|appendix|section)\s+[\w.]+|[\dIVXLC.]+)$", re.I)
#: Outline depth read (deeper bookmarks are ignored).
MAX_OUTLINE_DEPTH = 16


def _check_bytes(doc: Document) -> None:
    def fail(message: str) -> ParseError:
        return ParseError(f"PDF: {message}", document_id=doc.id, uri=doc.uri)

    if not doc.data:
        raise fail("the file is empty (0 bytes)")
    if b"%PDF-" not in doc.data[:1024]:
        raise fail("no %PDF- header in the first 1024 bytes; the file is not a PDF (its name says otherwise)")
    if b"%%EOF" not in doc.data[-2048:]:
        raise fail("no %%EOF trailer at the end; the file is truncated (re-download or re-export it)")


def _open(doc: Document, pdfium):
    try:
        return pdfium.PdfDocument(doc.data)
    except pdfium.PdfiumError as exc:
        text = str(exc)
        if "password" in text.lower():
            raise ParseError("PDF: encrypted, a password is needed to open it; decrypt it first",
                             document_id=doc.id, uri=doc.uri) from None
        raise ParseError(f"PDF: PDFium cannot open it ({text}); the file is damaged",
                         document_id=doc.id, uri=doc.uri) from None


def _outline(pdf) -> Dict[int, List[Tuple[int, str]]]:
    """Page index -> ``[(level, title), ...]`` of the bookmarks pointing into that page."""
    by_page: Dict[int, List[Tuple[int, str]]] = {}
    try:
        for mark in pdf.get_toc(max_depth=MAX_OUTLINE_DEPTH):
            dest = mark.get_dest()
            index = dest.get_index() if dest is not None else None
            title = " ".join((mark.get_title() or "").split())
            if index is not None and title:
                by_page.setdefault(index, []).append((mark.level + 1, title))
    except Exception:  # a broken outline must not lose the text; headings are a bonus
        return {}
    return by_page


def _page_text(pdf, index: int, doc: Document, limits: ParseLimits) -> str:
    page = pdf[index]
    try:
        textpage = page.get_textpage()
        try:
            # Counted before the text is copied out: pages sharing one long content stream
            # stop here, on the first of them.
            chars = textpage.count_chars()
            if chars > limits.max_page_chars:
                raise exceeded(limits, "max_page_chars", f"PDF: page {index + 1} has {chars} characters")
            raw = textpage.get_text_bounded()
        finally:
            textpage.close()
    except LimitExceeded:
        raise
    except Exception as exc:
        raise ParseError(f"PDF: page {index + 1} cannot be read ({exc})", document_id=doc.id, uri=doc.uri) from None
    finally:
        page.close()
    return clean(raw.replace("\x02", "")).strip()


def _page_texts(pdf, count: int, doc: Document, limits: ParseLimits) -> List[str]:
    """Every page's text, stopping as soon as the pages together pass ``max_text_chars``
    (the builder's own check comes after furniture is cut, too late to bound memory)."""
    pages: List[str] = []
    total = 0
    for index in range(count):
        check_time(f"page {index + 1} of {count}")
        text = _page_text(pdf, index, doc, limits)
        total += len(text)
        if total > limits.max_text_chars:
            raise exceeded(limits, "max_text_chars", f"PDF: pages 1-{index + 1} of {count} have {total} characters")
        pages.append(text)
    return pages


def _cut_page(text: str, cuts: Dict[int, str], keep: FrozenSet[str], builder: TextBuilder) -> str:
    """The page's text without the lines in ``cuts`` (line index -> label) that are not kept.

    A cut line is recorded with ``builder.drop`` and left out with its newline, so the page's
    remaining lines keep their order and nothing else moves.
    """
    if not cuts:
        return text
    lines = text.split("\n")
    kept = []
    for k, line in enumerate(lines):
        label = cuts.get(k)
        if label is None or LABELS[label] in keep:
            kept.append(line)
        else:
            builder.drop(label, line)
    return "\n".join(kept).strip()


def parse_pdf(doc: Document, *, errors: str = "strict", limits: ParseLimits = DEFAULT_LIMITS,
              keep: FrozenSet[str] = KEEP_NOTHING) -> ParsedDocument:
    """Parse a PDF into page sections (see the module docstring).

    Args:
        doc: The raw document.
        errors: Unused (PDF text is Unicode already); accepted for a uniform signature.
        limits: ``max_pages`` caps the page count (default 5,000), ``max_page_chars`` each
            page's text (default 1,000,000), ``max_text_chars`` all of it (default 50,000,000).
        keep: Names of :data:`~beam_chunking.parsers.drops.DROPS` to keep instead of dropping.
            Default none.
    """
    pdfium = require("pypdfium2", "pypdfium2")
    _check_bytes(doc)
    with _PDFIUM_LOCK:
        pdf = _open(doc, pdfium)
        try:
            count = len(pdf)
            if count > limits.max_pages:
                raise ParseError(f"PDF: {count} pages exceed max_pages={limits.max_pages}; raise the limit to parse it",
                                 document_id=doc.id, uri=doc.uri)
            outline = _outline(pdf)
            title = " ".join(str(pdf.get_metadata_dict().get("Title") or "").split())
            pages = _page_texts(pdf, count, doc, limits)
        finally:
            pdf.close()
    furniture = Furniture(pages)
    builder = TextBuilder(max_chars=limits.max_text_chars)
    stack: List[Tuple[int, str]] = []
    empty = 0
    after_contents = False  # the previous page was a contents page
    for index, raw in enumerate(pages):
        if not raw:
            empty += 1
        lines = raw.split("\n")
        edges = furniture.cut(index, lines)
        body = ["" if k in edges else line for k, line in enumerate(lines)]
        contents = contents_lines(body, after_contents)
        after_contents = bool(contents) and 2 * len(contents) >= sum(1 for line in body if line.strip())
        text = _cut_page(raw, {**edges, **contents}, keep, builder)
        flags: Dict[str, str] = {}
        if "page_furniture" in keep and edges:  # flagged only while the lines stay in the text
            filled = [k for k, line in enumerate(lines) if line.strip()]
            if filled[0] in edges and edges[filled[0]] != "running footer":
                flags["page_header"] = lines[filled[0]].strip()
            if filled[-1] in edges and edges[filled[-1]] != "running header" and len(filled) > 1:
                flags["page_footer"] = lines[filled[-1]].strip()
        # Segments of the page, each with the heading path in force from its start. A
        # bookmark whose title is not found in the text applies from the current position.
        segments = [[0, tuple(t for _, t in stack), stack[-1][0] if stack else 0]]
        pos = 0
        for mark_level, mark_title in outline.get(index, ()):
            here = heading_path(stack, mark_level, mark_title)
            found = text.find(mark_title, pos)
            # Start at the line holding the title, so "1.1.4 Title" keeps its number.
            at = pos if found < 0 else max(pos, text.rfind("\n", 0, found) + 1)
            if found >= 0 and at > pos:
                above = text.rfind("\n", 0, at - 1) + 1
                if above >= pos and _LABEL_LINE.match(text[above:at - 1].strip()):
                    at = above
            state = [at, here, mark_level]
            if at == segments[-1][0]:
                segments[-1] = state
            else:
                segments.append(state)
            if found >= 0:
                pos = found + len(mark_title)
        if len(segments) > 1 and text[: segments[1][0]].strip() in ("", flags.get("page_header")):
            segments[1][0] = 0  # a running header alone is no section: it joins the next one
            del segments[0]
        pieces = [(text[start:(segments[k + 1][0] if k + 1 < len(segments) else len(text))], seg_path, seg_level)
                  for k, (start, seg_path, seg_level) in enumerate(segments)]
        pieces = [p for p in pieces if p[0].strip()]
        for k, (piece, piece_path, piece_level) in enumerate(pieces):
            meta = {}
            if k == 0 and "page_header" in flags:
                meta["page_header"] = flags["page_header"]
            if k == len(pieces) - 1 and "page_footer" in flags:
                meta["page_footer"] = flags["page_footer"]
            builder.add(piece, page=index + 1, heading_path=piece_path, level=piece_level, metadata=meta)
    meta = {"pdf_pages": len(pages)}
    if empty:
        meta["pdf_pages_without_text"] = empty
    if title:
        meta["title"] = title
    return builder.build(doc, meta)
