"""PDF: the text as a reader sees it, in heading sections of paragraphs, with boxes.

Text and geometry come from PDFium (pypdfium2): on the Debian Reference it keeps 98.9% of
words intact against the book's own text edition, where pypdf glues words together (76.6%)
and is 17x slower; ``bench/parsers.py`` measures both. Pages are read one at a time and each
page object is closed before the next, so memory stays flat however many pages there are.

- **Layout** (:mod:`~beam_chunking.parsers.pdf_lines`,
  :mod:`~beam_chunking.parsers.pdf_paragraphs`): lines are grouped into paragraphs by
  vertical gap, indentation, font change and lines that end early; a paragraph's wrapped
  lines are joined with spaces (a word hyphenated at a line end joined again) and
  paragraphs are separated by a blank line. Multi-column pages read column by column.
  Monospaced lines keep their line breaks and form ``code`` sections.
- **Page turns are layout, not structure**: a paragraph cut by a page (or column) turn is
  one paragraph, so chunks may span the turn (``page`` and ``page_end`` then differ). A
  section's ``page`` is the page it starts on. Small print at a page foot (footnotes) that
  interrupts such a paragraph is put after it. ``page_boundaries="hard"`` on a strategy
  cuts chunks at every page turn instead.
- **Headings** (:mod:`~beam_chunking.parsers.pdf_headings`): the outline (bookmarks) gives
  ``heading_path``; each bookmark is matched tolerantly to the page's text and its heading
  starts a section there. Without an outline, text set clearly larger than the body is a
  heading, ranked by size.
- **Tables** (:mod:`~beam_chunking.parsers.pdf_tables`): ruled and whitespace-aligned tables
  become Markdown pipe tables in ``table`` sections.
- **Boxes**: :attr:`ParsedDocument.boxes <beam_chunking.types.ParsedDocument.boxes>` holds
  every line's rectangle (points, origin top-left), grouped by block; chunks get theirs.
- Page furniture is cut out and recorded in ``ParsedDocument.dropped`` (see
  :mod:`~beam_chunking.parsers.furniture` for the rules): running headers and footers
  (``"running header"``, ``"running footer"``) and page numbers (``"page number"``). With
  ``keep={"page_furniture"}`` they stay in the text, as paragraphs of their own after the
  paragraph they interrupt.
- Tables of contents are cut out the same way (``"table of contents"``, ``"index"``);
  ``keep={"contents"}`` keeps them.
- **Scanned pages** (no text layer) are recognised by OCR with the ``ocr`` extra
  (:mod:`~beam_chunking.parsers.pdf_ocr`); ``ocr_pages`` and ``ocr_confidence`` are
  recorded. Pages left without text are counted in ``pdf_pages_without_text``.

Refused with a specific :class:`~beam_chunking.errors.ParseError`: bytes without a
``%PDF-`` header, truncated files (no ``%%EOF`` trailer), password-protected files, damaged
files PDFium cannot open, and more pages than ``limits.max_pages``. A page with more than
``limits.max_page_chars`` characters, or pages that together pass ``limits.max_text_chars``,
fail the document as they are extracted (:class:`~beam_chunking.errors.LimitExceeded`).
"""
from __future__ import annotations

import logging
import threading
from typing import Any, Dict, FrozenSet, List, NamedTuple, Optional, Sequence, Set, Tuple

from beam_chunking.errors import LimitExceeded, MissingExtra, ParseError
from beam_chunking.parsers._build import HeadingSections, TextBuilder
from beam_chunking.parsers._optional import require
from beam_chunking.parsers.drops import KEEP_NOTHING, LABELS
from beam_chunking.parsers.furniture import Furniture, contents_lines
from beam_chunking.parsers.limits import DEFAULT_LIMITS, ParseLimits, check_time, exceeded
from beam_chunking.parsers.pdf_headings import Heading, headings
from beam_chunking.parsers.pdf_lines import Line, page_lines
from beam_chunking.parsers.ocr import check_ocr
from beam_chunking.parsers.pdf_ocr import ocr_lines, want_ocr
from beam_chunking.parsers.pdf_paragraphs import Block, blocks
from beam_chunking.parsers.pdf_tables import find_tables, holds, table_markdown
from beam_chunking.types import Document, ParsedDocument, TextBox

_LOG = logging.getLogger(__name__)
# PDFium is not thread-safe and Beam workers run several threads per process.
_PDFIUM_LOCK = threading.Lock()
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


class _Page(NamedTuple):
    width: float  # of the page as its text is set, before any /Rotate
    lines: List[Line]
    tables: List[Any]
    ocr: Optional[float]  # mean recognition confidence of an OCR'd page, else None
    rotation: int = 0  # degrees clockwise a viewer turns the page (/Rotate); 0 for OCR'd pages
    height: float = 0.0  # of the page as its text is set


def _downwards(lines: List[Line]) -> List[Line]:
    """The page's lines top to bottom: PDFium gives the lines of some turned pages (/Rotate
    90) bottom line first, which the layout would read as one column per line."""
    up = sum(1 for a, b in zip(lines, lines[1:]) if b.baseline < a.baseline - 0.5 * a.size)
    down = sum(1 for a, b in zip(lines, lines[1:]) if b.baseline > a.baseline + 0.5 * a.size)
    return lines[::-1] if up > 2 * down + 1 else lines


def _shown(page: _Page, x0: float, top: float, x1: float, bottom: float) -> Tuple[float, float, float, float]:
    """A box of the page's text frame as a viewer shows the page, turned by its /Rotate."""
    w, h = page.width, page.height
    if page.rotation == 90:
        return h - bottom, x0, h - top, x1
    if page.rotation == 180:
        return w - x1, h - bottom, w - x0, h - top
    if page.rotation == 270:
        return top, w - x1, bottom, w - x0
    return x0, top, x1, bottom


def _read_page(pdf, index: int, doc: Document, limits: ParseLimits, raw, ocr: str) -> _Page:
    page = pdf[index]
    try:
        rotation = page.get_rotation() % 360
        width, height = page.get_size()
        if rotation in (90, 270):  # the size as shown: the text is set on the page before turning
            width, height = height, width
        textpage = page.get_textpage()
        try:
            # Counted before the text is copied out: pages sharing one long content stream
            # stop here, on the first of them.
            chars = textpage.count_chars()
            if chars > limits.max_page_chars:
                raise exceeded(limits, "max_page_chars", f"PDF: page {index + 1} has {chars} characters")
            lines = _downwards(page_lines(raw, textpage, height))
            tables = _tables(page, textpage, index, lines) if lines else []
        finally:
            textpage.close()
        confidence = None
        if want_ocr(ocr, bool(lines)):
            lines, confidence = ocr_lines(page, index, doc)
            tables = []
            rotation = 0  # recognised on the page as rendered: turned already
            if page.get_rotation() % 180:
                width, height = height, width
    except (LimitExceeded, MissingExtra, ParseError):
        raise
    except Exception as exc:
        raise ParseError(f"PDF: page {index + 1} cannot be read ({exc})", document_id=doc.id, uri=doc.uri) from None
    finally:
        page.close()
    if tables:
        lines = [line for line in lines if not any(holds(table.box, line) for table in tables)]
    return _Page(width, lines, tables, confidence, rotation, height)


def _tables(page, textpage, index: int, lines: List[Line]) -> List[Any]:
    """The page's tables; none when the finder fails on it: its lines then stay text, and
    nothing is lost (a warning names the page)."""
    try:
        return find_tables(page, textpage, lines)
    except Exception as exc:  # a drawing the finder cannot read must not cost the page its text
        _LOG.warning("PDF: page %d: tables not looked for (%s: %s); its text is kept as lines",
                     index + 1, type(exc).__name__, exc)
        return []


def _read_pages(pdf, count: int, doc: Document, limits: ParseLimits, raw, ocr: str) -> List[_Page]:
    """Every page's lines, stopping as soon as the pages together pass ``max_text_chars``
    (the builder's own check comes after furniture is cut, too late to bound memory)."""
    pages: List[_Page] = []
    total = 0
    for index in range(count):
        check_time(f"page {index + 1} of {count}")
        page = _read_page(pdf, index, doc, limits, raw, ocr)
        total += sum(len(line.text) + 1 for line in page.lines)
        if total > limits.max_text_chars:
            raise exceeded(limits, "max_text_chars", f"PDF: pages 1-{index + 1} of {count} have {total} characters")
        pages.append(page)
    return pages


def _cut_furniture(pages: List[_Page], keep: FrozenSet[str], builder: TextBuilder,
                   kept_furniture: Set[int]) -> List[List[Line]]:
    """Each page's lines without its running headers, footers, page numbers and contents
    listings (recorded with ``builder.drop``), unless ``keep`` keeps them; the ``id()`` of
    page furniture kept is added to ``kept_furniture``."""
    texts = [[line.text for line in page.lines] for page in pages]
    furniture = Furniture(["\n".join(lines) for lines in texts])
    out: List[List[Line]] = []
    after_contents = False  # the previous page was a contents page
    for index, (page, lines) in enumerate(zip(pages, texts)):
        edges = furniture.cut(index, lines)
        body = ["" if k in edges else line for k, line in enumerate(lines)]
        contents = contents_lines(body, after_contents)
        after_contents = bool(contents) and 2 * len(contents) >= sum(1 for line in body if line.strip())
        cuts = {**edges, **contents}
        kept = []
        for k, line in enumerate(page.lines):
            label = cuts.get(k)
            if label is None or LABELS[label] in keep:
                kept.append(line)
                if label is not None and k in edges:
                    kept_furniture.add(id(line))
            else:
                builder.drop(label, line.text)
        out.append(kept)
    return out


def _place_tables(blocks: List[Block], pages: Sequence[_Page]) -> List[Tuple[Any, Any]]:
    """``(block or None, table or None)`` items in reading order: each page's tables go
    before the first block that starts below them on that page."""
    items: List[Tuple[Any, Any]] = []
    pending = [(index, table) for index, page in enumerate(pages) for table in page.tables]
    k = 0
    for block in blocks:
        page, line = block.lines[0]
        while k < len(pending) and (pending[k][0] < page or (pending[k][0] == page and pending[k][1].box[1] < line.top)):
            items.append((None, pending[k]))
            k += 1
        items.append((block, None))
    items.extend((None, table) for table in pending[k:])
    return items


def _extend_pages(builder: TextBuilder, page: int) -> None:
    """Record in the last section's ``page_end`` metadata that it runs on to ``page``: the
    range its chunks lie in, for callers that chunk without the boxes (which give each
    chunk its own range)."""
    last = builder.last_section
    if page > (last.get("page") or page) and page > last.get("metadata", {}).get("page_end", 0):
        builder.update_last(metadata={**last.get("metadata", {}), "page_end": page})


def _assemble(blocks: List[Block], pages: Sequence[_Page], marks: Sequence[Heading],
              builder: TextBuilder) -> List[TextBox]:
    """Add the blocks, tables and headings to ``builder`` in reading order; their boxes."""
    out = HeadingSections(builder=builder)
    boxes: List[TextBox] = []
    by_block: Dict[int, List[Heading]] = {}
    for mark in marks:
        by_block.setdefault(mark.block, []).append(mark)
    block_index = {id(block): k for k, block in enumerate(blocks)}
    group = 0
    last_page = None
    for block, table in _place_tables(blocks, pages):
        first_page = table[0] if table is not None else block.page
        if last_page is not None and first_page > last_page + 1:
            out.cut()  # pages left out between (contents, blank, scanned): no section spans them
        last_page = table[0] if table is not None else block.lines[-1][0]
        if table is not None:
            index, found = table
            start = out.unit(table_markdown(found), "table", page=index + 1)
            if start is not None:
                x0, top, x1, bottom = _shown(pages[index], *found.box)
                boxes.append(TextBox(start, out.builder.length, index + 1, x0, top, x1, bottom, group))
                group += 1
            continue
        text, spans = block.text_and_spans()
        page = block.page + 1
        start = None
        shown = None
        for mark in by_block.get(block_index[id(block)], ()):
            if mark.shown:
                shown = mark
            else:
                out.untitled(mark.level, mark.title)
        if shown is not None:
            start = out.heading(shown.level, shown.title, text=text, page=page)
        elif block.kind == "code":
            start = out.unit(text, "code", page=page)
        else:
            start = out.paragraph(text, page=page)
        if start is None:
            continue
        _extend_pages(builder, block.lines[-1][0] + 1)
        for (s, e), (line_page, line) in zip(spans, block.lines):
            x0, top, x1, bottom = _shown(pages[line_page], line.x0, line.top, line.x1, line.bottom)
            boxes.append(TextBox(start + s, start + e, line_page + 1, x0, top, x1, bottom, group))
        group += 1
    return boxes


def parse_pdf(doc: Document, *, errors: str = "strict", limits: ParseLimits = DEFAULT_LIMITS,
              keep: FrozenSet[str] = KEEP_NOTHING, ocr: str = "auto") -> ParsedDocument:
    """Parse a PDF into heading sections of paragraphs, with boxes (see the module docstring).

    Args:
        doc: The raw document.
        errors: Unused (PDF text is Unicode already); accepted for a uniform signature.
        limits: ``max_pages`` caps the page count (default 5,000), ``max_page_chars`` each
            page's text (default 1,000,000), ``max_text_chars`` all of it (default 50,000,000).
        keep: Names of :data:`~beam_chunking.parsers.drops.DROPS` to keep instead of dropping.
            Default none.
        ocr: ``"auto"`` (default: recognise pages without a text layer when the ``ocr`` extra
            is installed), ``"always"`` (every page) or ``"never"``.

    Raises:
        ConfigError: ``ocr`` is none of those.
    """
    check_ocr(ocr)
    pdfium = require("pypdfium2", "pypdfium2")
    raw = require("pypdfium2.raw", "pypdfium2")

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
            pages = _read_pages(pdf, count, doc, limits, raw, ocr)
        finally:
            pdf.close()
    builder = TextBuilder(max_chars=limits.max_text_chars)
    kept_furniture: Set[int] = set()
    lines = _cut_furniture(pages, keep, builder, kept_furniture)
    found = blocks(lines, [page.width for page in pages], apart=kept_furniture)
    marks = headings(found, outline)
    boxes = _assemble(found, pages, marks, builder)
    meta: Dict[str, Any] = {"pdf_pages": len(pages)}
    empty = sum(1 for page in pages if not page.lines and not page.tables)
    if empty:
        meta["pdf_pages_without_text"] = empty
    confidences = [page.ocr for page in pages if page.ocr is not None]
    if confidences:
        meta["ocr_pages"] = len(confidences)
        meta["ocr_confidence"] = round(sum(confidences) / len(confidences), 4)
    if title:
        meta["title"] = title
    return builder.build(doc, meta, boxes=tuple(boxes))
