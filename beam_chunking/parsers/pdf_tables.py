"""Tables on a PDF page, found from PDFium's own geometry: ruled grids and whitespace columns.

:func:`find_tables` takes a pypdfium2 page and its open text page and returns
:class:`PdfTable` values (box, cell texts, ruled or not), top to bottom;
:func:`table_markdown` writes one as a Markdown pipe table.

Two kinds are found:

- **Ruled**: horizontal and vertical rules (stroked lines, thin filled rectangles, the
  edges of stroked rectangles) that touch form a grid; its cells are the grid's cells,
  cells whose dividing rule is missing are merged (the text goes to the first of them,
  the others stay empty), and a grid without outer verticals (booktabs-like or DocBook
  tables) is closed by its horizontal rules' ends.
- **Whitespace-aligned**: at least 3 rows and 2 columns of text separated by gutters
  (vertical strips at least one line height wide that no text crosses) that persist over
  every line of the block. Conservative on purpose, since a false table damages chunks
  more than a missed one: blocks are refused when fewer than 3 rows (and half of them)
  have text on both sides of every gutter, when half the rows are missing a cell, when a
  column's lines fill it like prose (page columns), when the cells read as sentences
  (every column 4+ words, cells ending in "the"/"of"/a comma, a sentence wrapping from
  row to row), when the first column holds bullets or enumerators (a list) or ends with
  colons (key: value lines), when a cell holds dot leaders (a contents list), or when the
  text is set in a fixed-pitch font (code listings).

Boxes are in the page's unrotated space (its ``/Rotate`` is not applied), like PDFium's
char boxes; what lies outside the visible page box is ignored.

Cost: nothing is read char by char. One pass over the page objects looks into paths only,
PDFium's text runs (``FPDFText_CountRects``, one ``FPDFText_GetRect`` each) are checked with
numpy for a gap an em wide on any line, and a page with neither rules nor such gaps stops
there; a found table costs one ``FPDFText_GetBoundedText`` per cell (about 70 us each on a
page of 2,400 chars). Measured CPU per page on a loaded 2-core machine, next to PDFium's own
page load + text extraction: Debian Reference
(dblatex, 261 pages, 171 tables found) 5.5 ms vs 4.6 ms; a pdfTeX manual (libtasn1, prose)
1.8 ms vs 3.3 ms; Chromium-printed prose (one text object per word, 2,000 per page) 16 ms
vs 14 ms. No PDFium function batches the calls made per page object and per text run, and
through ctypes each costs about a microsecond; the optional C helper ``_pdfwalk`` makes them
in a loop of its own (on Chromium's two-column pages, 3,200 objects each, the object walk
went from 6.7 to 0.7 ms a page and the text runs from 2.5 to 0.6 ms), and without it the
ctypes loops give the same tables. A char-by-char pass costs 28 ms per Debian page instead.

Why not pdfplumber (measured on the same pages): it parses the file again with pdfminer and
costs 190-340 ms per page with its ``lines`` strategy, 270-500 ms with ``text``, against
8-14 ms here. Its ``lines`` strategy agrees with the Debian Reference's table captions on 17
of 40 pages (pages 31-70; it reports code-listing boxes as tables) against 39 of 40 here
(the 40th is a table continued from the previous page, also right), and it misses every
borderless table; its ``text`` strategy reports a table on every page of prose.
"""
from __future__ import annotations

import ctypes
import re
import statistics
from dataclasses import dataclass
from typing import Any, Iterable, List, Optional, Sequence, Tuple

from beam_chunking.parsers._optional import require

try:
    import beam_chunking.parsers._pdfwalk as _native
except ImportError:  # built without a C compiler: the ctypes loops serve, with the same results
    _native = None

#: Whether the calls made once per page object and per text run loop in C (``_pdfwalk``).
NATIVE = _native is not None

#: Rule positions closer than this (points) are the same grid line.
SNAP = 2.0
#: A rule thinner than this (points) is a line; anything thicker is a filled area.
MAX_RULE_WIDTH = 3.0
#: Shortest rule kept (points): shorter strokes are glyph parts, ticks and bullets.
MIN_RULE_LENGTH = 5.0
#: Most segments looked into per path (a logo or a glyph outline has hundreds).
MAX_PATH_SEGMENTS = 64

_LEADERS = re.compile(r"(?:\.\s?){4,}|…{2,}|(?:·\s?){4,}")
_LIST_MARK = re.compile(r"^(?:[•◦▪▫■□●○‣⁃∙–—*·+\-]|\(?\d{1,3}[.)]|\(?[a-zA-Z][.)]|\(?[ivxlcIVXLC]{1,6}[.)])$")
# Words a table cell hardly ever ends with, but a line of prose often does.
_FUNCTION_WORDS = frozenset("a an and are as at be by for from in into is it of on or that the this to was which "
                            "with de des du et la le les der die das und".split())
_MONO = re.compile(r"mono|courier|consol|typewriter|code|\btt|cmtt|menlo|fixed", re.I)


@dataclass(frozen=True)
class PdfTable:
    """A table found on a PDF page.

    Attributes:
        box: ``(x0, top, x1, bottom)`` in PDF points, origin at the page's top-left
            corner (of its crop box), y growing downwards.
        rows: Cell texts row by row, header row first; every row has the same number of
            cells. A cell's wrapped lines are joined with a space.
        ruled: ``True`` when found from drawn rules, ``False`` from whitespace alignment.

    Example:
        >>> PdfTable((0.0, 0.0, 10.0, 5.0), (("a", "b"), ("1", "2")), True).rows[1]
        ('1', '2')
    """

    box: Tuple[float, float, float, float]
    rows: Tuple[Tuple[str, ...], ...]
    ruled: bool


def table_markdown(table: PdfTable) -> str:
    """The table as a Markdown pipe table: header row, separator, body rows.

    Pipes in cells are escaped as ``\\|``, newlines become ``<br>``.

    Args:
        table: A table from :func:`find_tables`.

    Returns:
        The Markdown text, one line per row, without a trailing newline.
    """
    def line(cells: Sequence[str]) -> str:
        escaped = (c.replace("\\", "\\\\").replace("|", "\\|").replace("\r\n", "\n").replace("\n", "<br>")
                   for c in cells)
        return "| " + " | ".join(escaped) + " |"

    header, body = table.rows[0], table.rows[1:]
    return "\n".join([line(header), "|" + "---|" * len(header)] + [line(r) for r in body])


def may_hold_aligned_table(lines: Sequence[Any]) -> bool:
    """Whether a page's lines (:func:`~beam_chunking.parsers.pdf_lines.page_lines`) leave room
    for a whitespace-aligned table: two lines that share a baseline with the line before
    (PDFium breaks a row at its widest gaps), or two lines spread over 1.3 times the width
    their characters take in the page's prose (gutters). A page of prose has neither, and
    its text runs need not be read (about a third of the parse of a Chromium-printed page)."""
    ratios = sorted((line.x1 - line.x0) / (len(line.text) * line.size) for line in lines
                    if len(line.text) >= 30 and not line.mono and line.size > 0)
    usual = ratios[len(ratios) // 2] if ratios else 0.5
    beside = sum(1 for a, b in zip(lines, lines[1:]) if abs(a.baseline - b.baseline) < 0.3 * max(a.size, 1.0))
    # Monospaced lines are wider per character by design, and never a whitespace table here.
    spread = sum(1 for line in lines if len(line.text) >= 4 and line.size > 0 and not line.mono
                 and (line.x1 - line.x0) / (len(line.text) * line.size) > 1.3 * usual)
    return beside >= 2 or spread >= 2


def holds(box: Tuple[float, float, float, float], line: Any) -> bool:
    """Whether the centre of ``line`` (anything with ``x0``, ``top``, ``x1``, ``bottom``) lies
    in ``box`` ``(x0, top, x1, bottom)``, with 1 pt to spare: the line is part of that table."""
    x, y = (line.x0 + line.x1) / 2, (line.top + line.bottom) / 2
    return box[0] - 1 <= x <= box[2] + 1 and box[1] - 1 <= y <= box[3] + 1


def find_tables(page, textpage, lines: Optional[Sequence[Any]] = None) -> List[PdfTable]:
    """Tables on one pypdfium2 page, top to bottom.

    Args:
        page: An open ``pypdfium2.PdfPage``.
        textpage: Its open ``pypdfium2.PdfTextPage``.
        lines: The page's lines, when the caller has read them: whitespace-aligned tables
            are then looked for only where :func:`may_hold_aligned_table` says they may be.
            Default ``None``: always looked for.

    Returns:
        The tables, sorted by their top edge; ``[]`` for a page without any (most pages,
        which are skipped after one pass over their objects and text runs).

    PDFium is not thread-safe: call it where the parser holds its PDFium lock.
    """
    raw = _raw()
    # The visible page box (inherited boxes resolved); get_cropbox() falls back to US Letter.
    left, bottom, right, top = page.get_bbox()
    width, height = right - left, top - bottom
    # What lies outside the page (a long table running past its foot) is not shown, and
    # the parser's text leaves it out too.
    hs, vs = _rules(raw, page.raw, left, top)
    hs = [h for h in hs if 0 <= h[0] <= height and h[1] < width and h[2] > 0]
    vs = [(v[0], max(v[1], 0.0), min(v[2], height)) for v in vs if 0 <= v[0] <= width and v[1] < height and v[2] > 0]
    tables = _ruled_tables(hs, vs, textpage, left, top) if hs and vs else []
    if lines is not None and tables:  # rows of the ruled tables found are no sign of another
        lines = [line for line in lines if not any(holds(t.box, line) for t in tables)]
    if lines is None or may_hold_aligned_table(lines):
        tables += _aligned_tables(raw, textpage, left, top, width, height, [t.box for t in tables])
    return sorted(tables, key=lambda t: (t.box[1], t.box[0]))


# ---------------------------------------------------------------------------- rules and grids
# A rule is (position, start, end): a horizontal one at y from x=start to x=end, a vertical
# one at x from y=start to y=end, all in top-left page coordinates.
Rule = Tuple[float, float, float]
_Matrix = Tuple[float, float, float, float, float, float]
_IDENTITY: _Matrix = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)


def _raw():
    return require("pypdfium2.raw", "pypdfium2")


class _Fast:
    """The few PDFium calls made once per object or text run, re-declared with plain
    pointer arguments: pypdfium2's typed wrappers cost about twice as much per call, and a
    page printed by Chromium holds one text object per word (2,000 and more)."""

    def __init__(self, raw):
        v, i = ctypes.c_void_p, ctypes.c_int

        def proto(fn, res, *args):
            return ctypes.CFUNCTYPE(res, *args)(ctypes.cast(fn, v).value)

        self.get_object = proto(raw.FPDFPage_GetObject, v, v, i)
        self.get_type = proto(raw.FPDFPageObj_GetType, i, v)
        self.get_bounds = proto(raw.FPDFPageObj_GetBounds, i, v, v, v, v, v)
        self.get_rect = proto(raw.FPDFText_GetRect, i, v, i, v, v, v, v)
        self.handle = lambda obj: ctypes.cast(obj, v).value
        self.typed = lambda handle: ctypes.cast(handle, raw.FPDF_PAGEOBJECT)
        # The same functions' addresses, for the C loops.
        self.at = {name: ctypes.cast(getattr(raw, name), v).value
                   for name in ("FPDFPage_GetObject", "FPDFPageObj_GetType", "FPDFText_GetRect")}
        # A path or a form object's type, as a byte of _pdfwalk.object_types.
        self.path_kind, self.form_kind = raw.FPDF_PAGEOBJ_PATH, raw.FPDF_PAGEOBJ_FORM
        self.drawn = re.compile(b"[" + re.escape(bytes([raw.FPDF_PAGEOBJ_PATH, raw.FPDF_PAGEOBJ_FORM])) + b"]")


_FAST: List[_Fast] = []  # built on first use, one per process


def _fast(raw) -> _Fast:
    if not _FAST:
        _FAST.append(_Fast(raw))
    return _FAST[0]


def _apply(m: _Matrix, x: float, y: float) -> Tuple[float, float]:
    return m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5]


def _compose(inner: _Matrix, outer: _Matrix) -> _Matrix:
    """The matrix applying ``inner`` first, then ``outer``."""
    a, b, c, d, e, f = inner
    x, y = _apply(outer, e, f)
    return (a * outer[0] + b * outer[2], a * outer[1] + b * outer[3],
            c * outer[0] + d * outer[2], c * outer[1] + d * outer[3], x, y)


def _matrix(raw, obj) -> _Matrix:
    m = raw.FS_MATRIX()
    if not raw.FPDFPageObj_GetMatrix(obj, ctypes.byref(m)):
        return _IDENTITY
    return (m.a, m.b, m.c, m.d, m.e, m.f)


def _rules(raw, page, left: float, top: float) -> Tuple[List[Rule], List[Rule]]:
    """Horizontal and vertical rules drawn on the page (forms included), merged."""
    hs: List[Rule] = []
    vs: List[Rule] = []
    box = [ctypes.c_float() for _ in range(4)]
    refs = [ctypes.byref(v) for v in box]
    fill, stroke = ctypes.c_int(), ctypes.c_int()
    px, py = ctypes.c_float(), ctypes.c_float()
    path_kind, form_kind = raw.FPDF_PAGEOBJ_PATH, raw.FPDF_PAGEOBJ_FORM
    get_type, get_bounds = raw.FPDFPageObj_GetType, raw.FPDFPageObj_GetBounds

    def add(x0: float, y0: float, x1: float, y1: float) -> None:
        """A box in page space (y up, x0 <= x1, y0 <= y1) as a rule if it is one."""
        w, h = x1 - x0, y1 - y0
        if h <= MAX_RULE_WIDTH and w >= MIN_RULE_LENGTH:
            hs.append((top - (y0 + y1) / 2, x0 - left, x1 - left))
        elif w <= MAX_RULE_WIDTH and h >= MIN_RULE_LENGTH:
            vs.append((x0 - left + w / 2, top - y1, top - y0))

    def edges(obj, outer: _Matrix) -> None:
        """The straight axis-aligned edges of a thinly stroked path (cells drawn as boxes)."""
        raw.FPDFPath_GetDrawMode(obj, ctypes.byref(fill), ctypes.byref(stroke))
        if not stroke.value:
            return  # a fill is a background; only strokes draw rules
        raw.FPDFPageObj_GetStrokeWidth(obj, refs[0])
        count = raw.FPDFPath_CountSegments(obj)
        if box[0].value > MAX_RULE_WIDTH or count > MAX_PATH_SEGMENTS:
            return  # a thick stroke is a frame or a bar; many segments are a drawing
        m = _compose(_matrix(raw, obj), outer)
        start = prev = None
        for k in range(count):
            seg = raw.FPDFPath_GetPathSegment(obj, k)
            raw.FPDFPathSegment_GetPoint(seg, ctypes.byref(px), ctypes.byref(py))
            point = _apply(m, px.value, py.value)
            kind = raw.FPDFPathSegment_GetType(seg)
            if kind == raw.FPDF_SEGMENT_LINETO and prev is not None:
                _edge(add, prev, point)
            elif kind == raw.FPDF_SEGMENT_MOVETO:
                start = point
            prev = point
            if raw.FPDFPathSegment_GetClose(seg) and start is not None:
                _edge(add, prev, start)
                prev = start

    def walk(holder, count: int, get, outer: _Matrix, depth: int) -> None:
        for k in range(count):
            obj = get(holder, k)
            kind = get_type(obj)
            if kind == path_kind:
                get_bounds(obj, *refs)
                x0, y0, x1, y1 = box[0].value, box[1].value, box[2].value, box[3].value
                if outer is not _IDENTITY:
                    corners = [_apply(outer, x, y) for x in (x0, x1) for y in (y0, y1)]
                    x0, x1 = min(c[0] for c in corners), max(c[0] for c in corners)
                    y0, y1 = min(c[1] for c in corners), max(c[1] for c in corners)
                if x1 - x0 <= MAX_RULE_WIDTH or y1 - y0 <= MAX_RULE_WIDTH:
                    add(x0, y0, x1, y1)  # a line or a thin bar: the rule is its box
                else:
                    edges(obj, outer)
            elif kind == form_kind and depth < 4:
                walk(obj, raw.FPDFFormObj_CountObjects(obj), raw.FPDFFormObj_GetObject,
                     _compose(_matrix(raw, obj), outer), depth + 1)

    # The page's own objects, walked with the cheap calls; paths and forms are handed to the
    # typed ones above.
    fast = _fast(raw)
    handle = fast.handle(page)
    bounds = fast.get_bounds
    addresses = [ctypes.addressof(v) for v in box]
    for obj, kind in _paths_and_forms(fast, handle, raw.FPDFPage_CountObjects(page)):
        if kind == path_kind:
            bounds(obj, *addresses)
            x0, y0, x1, y1 = box[0].value, box[1].value, box[2].value, box[3].value
            if x1 - x0 <= MAX_RULE_WIDTH or y1 - y0 <= MAX_RULE_WIDTH:
                add(x0, y0, x1, y1)
            else:
                edges(fast.typed(obj), _IDENTITY)
        elif kind == form_kind:
            typed = fast.typed(obj)
            walk(typed, raw.FPDFFormObj_CountObjects(typed), raw.FPDFFormObj_GetObject, _matrix(raw, typed), 1)
    return _merge(hs), _merge(vs)


def _paths_and_forms(fast: _Fast, handle: int, count: int) -> Iterable[Tuple[int, int]]:
    """``(object handle, type)`` of the page's path and form objects, in drawing order.

    A page printed by Chromium holds one text object per word, and every object must be
    asked for its type: about 2 us each through ctypes, nanoseconds in C (``_pdfwalk``).
    """
    get_object = fast.get_object
    if _native is not None:
        types = _native.object_types(fast.at["FPDFPage_GetObject"], fast.at["FPDFPageObj_GetType"], handle, count)
        for m in fast.drawn.finditer(types):
            k = m.start()
            yield get_object(handle, k), types[k]
        return
    get_kind, path_kind, form_kind = fast.get_type, fast.path_kind, fast.form_kind
    for k in range(count):
        obj = get_object(handle, k)
        kind = get_kind(obj)
        if kind == path_kind or kind == form_kind:
            yield obj, kind


def _edge(add, p: Tuple[float, float], q: Tuple[float, float]) -> None:
    if abs(p[0] - q[0]) <= 0.5 or abs(p[1] - q[1]) <= 0.5:  # axis-aligned only
        add(min(p[0], q[0]), min(p[1], q[1]), max(p[0], q[0]), max(p[1], q[1]))


def _merge(rules: List[Rule]) -> List[Rule]:
    """Rules at about the same position joined where they touch or overlap."""
    out: List[Rule] = []
    rules = sorted(rules)
    k = 0
    while k < len(rules):
        group = [rules[k]]
        while k + 1 < len(rules) and rules[k + 1][0] - group[-1][0] <= SNAP / 2:
            k += 1
            group.append(rules[k])
        k += 1
        pos = sum(r[0] for r in group) / len(group)
        spans = sorted((r[1], r[2]) for r in group)
        lo, hi = spans[0]
        for a, b in spans[1:]:
            if a > hi + SNAP:
                out.append((pos, lo, hi))
                lo = a
            hi = max(hi, b)
        out.append((pos, lo, hi))
    return out


def _cluster(values: Iterable[float], gap: float = 1.5 * SNAP) -> List[float]:
    """Sorted positions, those closer than ``gap`` averaged into one."""
    groups: List[List[float]] = []
    for v in sorted(values):
        if groups and v - groups[-1][-1] < gap:
            groups[-1].append(v)
        else:
            groups.append([v])
    return [sum(g) / len(g) for g in groups]


def _covers(rules: List[Rule], pos: float, at: float) -> bool:
    return any(abs(r[0] - pos) <= SNAP and r[1] - SNAP <= at <= r[2] + SNAP for r in rules)


def _find(parent: List[int], k: int) -> int:
    while parent[k] != k:
        parent[k] = parent[parent[k]]
        k = parent[k]
    return k


def _ruled_tables(hs: List[Rule], vs: List[Rule], textpage, left: float, top: float) -> List[PdfTable]:
    """Grids of touching rules, each with at least 2 rows and 2 columns of text."""
    rules = hs + vs
    parent = list(range(len(rules)))
    for i, h in enumerate(hs):
        for j, v in enumerate(vs):
            if h[1] - SNAP <= v[0] <= h[2] + SNAP and v[1] - SNAP <= h[0] <= v[2] + SNAP:
                parent[_find(parent, i)] = _find(parent, len(hs) + j)
    groups: dict = {}
    for k in range(len(rules)):
        groups.setdefault(_find(parent, k), []).append(k)
    tables = []
    for members in groups.values():
        gh = [hs[k] for k in members if k < len(hs)]
        gv = [vs[k - len(hs)] for k in members if k >= len(hs)]
        if len(gh) < 2 or not gv:
            continue
        # Outer edges come from the rules' ends where no rule is drawn there.
        xs = _cluster([v[0] for v in gv] + [min(h[1] for h in gh), max(h[2] for h in gh)])
        ys = _cluster([h[0] for h in gh] + [min(v[1] for v in gv), max(v[2] for v in gv)])
        if len(xs) >= 3 and len(ys) >= 3:
            table = _grid_table(xs, ys, gh, gv, textpage, left, top)
            if table is not None:
                tables.append(table)
    return tables


def _grid_table(xs, ys, hs, vs, textpage, left, top) -> Optional[PdfTable]:
    nrows, ncols = len(ys) - 1, len(xs) - 1
    parent = list(range(nrows * ncols))
    # The rules along each grid line, picked once per line rather than once per cell.
    vs_at = [[r for r in vs if abs(r[0] - x) <= SNAP] for x in xs]
    hs_at = [[r for r in hs if abs(r[0] - y) <= SNAP] for y in ys]
    for i in range(nrows):
        for j in range(ncols):
            # Cells whose dividing rule is missing are one spanning cell.
            if j + 1 < ncols and not _covers(vs_at[j + 1], xs[j + 1], (ys[i] + ys[i + 1]) / 2):
                parent[_find(parent, i * ncols + j + 1)] = _find(parent, i * ncols + j)
            if i + 1 < nrows and not _covers(hs_at[i + 1], ys[i + 1], (xs[j] + xs[j + 1]) / 2):
                parent[_find(parent, (i + 1) * ncols + j)] = _find(parent, i * ncols + j)
    spans: dict = {}
    for k in range(nrows * ncols):
        spans.setdefault(_find(parent, k), []).append(k)
    cells = [[""] * ncols for _ in range(nrows)]
    reader = _TextReader(textpage, left, top)
    for span in spans.values():
        i0, j0 = min(c // ncols for c in span), min(c % ncols for c in span)
        i1, j1 = max(c // ncols for c in span) + 1, max(c % ncols for c in span) + 1
        cells[i0][j0] = reader.cell((xs[j0], ys[i0], xs[j1], ys[i1]), inset=1.0)
    return _table(cells, (xs[0], ys[0], xs[-1], ys[-1]), True)


class _TextReader:
    """Cell texts through ``FPDFText_GetBoundedText`` with one reused buffer.

    Each call scans the page's chars in C (about 70 us for 2,400 chars), half the cost of
    ``PdfTextPage.get_text_bounded``, which asks for the length first.
    """

    def __init__(self, textpage, left: float, top: float, size: int = 4096):
        self._raw, self._tp = _raw(), textpage.raw
        self._left, self._top = left, top
        self._size, self._buf = size, (ctypes.c_ushort * size)()

    def cell(self, box: Tuple[float, float, float, float], inset: float) -> str:
        """The text whose char boxes meet ``box`` shrunk by ``inset`` (points), lines joined."""
        x0, y0, x1, y1 = box
        dx, dy = min(inset, (x1 - x0) / 4), min(inset, (y1 - y0) / 4)
        args = (self._tp, self._left + x0 + dx, self._top - y0 - dy, self._left + x1 - dx, self._top - y1 + dy)
        n = self._raw.FPDFText_GetBoundedText(*args, self._buf, self._size)
        if n >= self._size:  # a long cell: fetch it whole
            self._size *= 4
            self._buf = (ctypes.c_ushort * self._size)()
            n = self._raw.FPDFText_GetBoundedText(*args, self._buf, self._size)
        raw_text = ctypes.string_at(self._buf, 2 * max(n, 0)).decode("utf-16-le", "replace").rstrip("\x00")
        # PDFium marks a line-end hyphenation with U+0002: the word continues on the next line.
        text = ""
        for line in (ln.strip() for ln in raw_text.replace("\r", "\n").split("\n")):
            if not line:
                continue
            if text.endswith("\x02"):
                text = text[:-1] + line
            else:
                text = f"{text} {line}" if text else line
        return " ".join(text.replace("\x02", "-").split())


def _table(cells: List[List[str]], box, ruled: bool) -> Optional[PdfTable]:
    """The table without empty rows and columns, or ``None`` if too little is left."""
    cells = [row for row in cells if any(row)]
    keep = [j for j in range(len(cells[0]) if cells else 0) if any(row[j] for row in cells)]
    rows = tuple(tuple(row[j] for j in keep) for row in cells)
    if len(rows) < 2 or len(keep) < 2:
        return None
    filled = [c for row in rows for c in row if c]
    if sum(map(len, filled)) / len(filled) > 300:  # page-sized cells: a layout frame
        return None
    return PdfTable(tuple(round(v, 2) for v in box), rows, ruled)


# -------------------------------------------------------------------- whitespace-aligned tables
# A run is PDFium's box of one text object's glyphs on a line: (x0, top, x1, bottom).
Run = Tuple[float, float, float, float]
Line = Tuple[float, float, List[Run]]  # top, bottom, runs left to right


def _text_runs(raw, textpage, left: float, top: float, width: float, height: float,
               skip: Sequence[Tuple[float, ...]]) -> List[Run]:
    """PDFium's text runs on the page, outside ``skip`` boxes; ``[]`` at once when no line
    has a gap an em wide (a page of prose), the common case, decided with numpy."""
    np = require("numpy", "numpy")
    fast = _fast(raw)
    handle = fast.handle(textpage.raw)
    count = raw.FPDFText_CountRects(textpage.raw, 0, -1)
    if count < 6:
        return []
    rects = np.empty((count, 4))  # left, top, right, bottom in page space
    if _native is not None:  # one call per run, looped in C
        _native.text_rects(fast.at["FPDFText_GetRect"], handle, count, rects)
    else:
        base = rects.ctypes.data
        get_rect = fast.get_rect
        for k in range(count):
            at = base + 32 * k
            get_rect(handle, k, at, at + 8, at + 16, at + 24)
    x0, y0, x1, y1 = rects[:, 0] - left, top - rects[:, 1], rects[:, 2] - left, top - rects[:, 3]
    keep = (x1 - x0 > 0.1) & (y1 - y0 > 0.1) & (y1 > 0) & (y0 < height) & (x1 > 0) & (x0 < width)
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    for s0, t0, s1, t1 in skip:  # text inside a ruled table is taken already
        keep &= ~((cx >= s0) & (cx <= s1) & (cy >= t0) & (cy <= t1))
    x0, y0, x1, y1, cy = x0[keep], y0[keep], x1[keep], y1[keep], cy[keep]
    if len(x0) < 6:
        return []
    # Rough lines (centres a third of a line apart), then the gaps inside each.
    # A run's own height can be an x-height ("a", "on"); a line's is about an em.
    # Lines of the runs at least half the usual height: a run starts a new line when it
    # overlaps the lines above by less than half its height. Smaller runs (a comma, a dash)
    # would make lines of their own, so each joins the line its centre is nearest.
    h = y1 - y0
    tall = h >= 0.5 * np.median(h)
    order = np.flatnonzero(tall)[np.argsort(cy[tall], kind="stable")]
    reach = np.maximum.accumulate(y1[order])
    ids = np.concatenate(([0], np.cumsum(reach[:-1] - y0[order][1:] < 0.5 * h[order][1:])))
    starts = np.flatnonzero(np.concatenate(([True], ids[1:] != ids[:-1])))
    tops, bottoms = np.minimum.reduceat(y0[order], starts), np.maximum.reduceat(y1[order], starts)
    line = np.empty(len(x0), dtype=np.int64)
    line[order] = ids
    small = np.flatnonzero(~tall)
    line[small] = np.minimum(np.searchsorted(np.maximum.accumulate(bottoms), cy[small]), len(bottoms) - 1)
    em = (bottoms - tops)[line]  # a run's own height can be an x-height; its line's is an em
    idx = np.lexsort((x0, line))
    shift = line[idx] * 1e6  # the running right edge restarts on each line
    gap = x0[idx][1:] - (np.maximum.accumulate(x1[idx] + shift) - shift)[:-1]
    wide = gap >= np.maximum(0.9 * em[idx][1:], 4.0)
    same = line[idx][1:] == line[idx][:-1]
    if not np.any(same & wide):
        return []
    # Runs closer than an em on a line are one segment: only the wide gaps matter from here,
    # and a page of one text object per word has ten times fewer segments than runs.
    starts = np.flatnonzero(np.concatenate(([True], ~same | wide)))
    x0, y0, x1, y1 = x0[idx], y0[idx], x1[idx], y1[idx]
    return list(zip(np.minimum.reduceat(x0, starts).tolist(), np.minimum.reduceat(y0, starts).tolist(),
                    np.maximum.reduceat(x1, starts).tolist(), np.maximum.reduceat(y1, starts).tolist()))


def _lines(runs: List[Run]) -> List[Line]:
    """Runs grouped into lines (vertical overlap of half a run's height), top to bottom."""
    lines: List[list] = []
    for run in sorted(runs, key=lambda r: r[1] + r[3]):
        if lines:
            line = lines[-1]
            if min(line[1], run[3]) - max(line[0], run[1]) >= 0.5 * min(line[1] - line[0], run[3] - run[1]):
                line[0], line[1] = min(line[0], run[1]), max(line[1], run[3])
                line[2].append(run)
                continue
        lines.append([run[1], run[3], [run]])
    return [(t, b, sorted(rs)) for t, b, rs in lines]


def _gaps(runs: List[Run], width: float) -> List[Tuple[float, float]]:
    """The free stretches between a line's runs at least ``width`` wide."""
    out, reach = [], runs[0][2]
    for run in runs[1:]:
        if run[0] - reach >= width:
            out.append((reach, run[0]))
        reach = max(reach, run[2])
    return out


def _narrow(gutter: Tuple[float, float], runs: List[Run]) -> Tuple[float, float]:
    """The widest part of ``gutter`` left free by the runs."""
    g0, g1 = gutter
    for x0, _, x1, _ in runs:
        if x1 > g0 and x0 < g1:
            g0, g1 = (g0, x0) if x0 - g0 >= g1 - x1 else (x1, g1)
    return g0, g1


def _blocks(lines: List[Line]):
    """Runs of lines whose whitespace gutters persist from line to line, with the gutters."""
    block: List[Line] = []
    gutters: List[Tuple[float, float]] = []
    width = 0.0
    for line in lines:
        if block and line[0] - block[-1][1] <= 1.5 * width:
            narrowed = [_narrow(g, line[2]) for g in gutters]
            kept = [g for g in narrowed if g[1] - g[0] >= width]
            # The first line may offer more gaps than the table has gutters; later lines
            # must keep every gutter, or the block ends.
            if kept and (len(block) == 1 or len(kept) == len(gutters)):
                block.append(line)
                gutters = kept
                continue
        if len(block) >= 3:
            yield block, gutters
        height = line[1] - line[0]
        width = max(0.9 * height, 4.0)  # about an em: wider than any word space
        gaps = _gaps(line[2], width)
        block, gutters = ([line], gaps) if gaps else ([], [])
    if len(block) >= 3:
        yield block, gutters


def _aligned_tables(raw, textpage, left: float, top: float, width: float, height: float, skip) -> List[PdfTable]:
    runs = _text_runs(raw, textpage, left, top, width, height, skip)
    if len(runs) < 6:
        return []
    tables = []
    for block, gutters in _blocks(_lines(runs)):
        table = _aligned_table(raw, textpage, block, gutters, left, top)
        if table is not None:
            tables.append(table)
    return tables


def _aligned_table(raw, textpage, block: List[Line], gutters, left: float, top: float) -> Optional[PdfTable]:
    bounds = ([min(r[0] for line in block for r in line[2]) - 0.5] + [(g0 + g1) / 2 for g0, g1 in gutters]
              + [max(r[2] for line in block for r in line[2]) + 0.5])
    ncols = len(bounds) - 1

    def filled(line: Line) -> set:
        return {sum(1 for b in bounds[1:-1] if (r[0] + r[2]) / 2 > b) for r in line[2]}

    while block and len(filled(block[-1])) < 2:  # a short prose line under the table
        block = block[:-1]
    if len(block) < 3:
        return None
    # Rows: a line set closer to the previous one than the rows are to each other, with a
    # cell left empty, continues a multi-line row.
    centres = [(t + b) / 2 for t, b, _ in block]
    pitch = [c1 - c0 for c0, c1 in zip(centres, centres[1:])]
    least = min(pitch)
    small = [d <= 1.2 * least for d in pitch]
    wrapped = max(pitch) >= 1.35 * least and 2 * sum(small) <= len(pitch)
    rows: List[List[Line]] = [[block[0]]]
    for k, line in enumerate(block[1:]):
        if wrapped and small[k] and len(filled(line)) < ncols:
            rows[-1].append(line)
        else:
            rows.append([line])
    if len(rows) < 3 or _prose_columns(rows, bounds, gutters, filled):
        return None
    reader = _TextReader(textpage, left, top)
    cells: List[List[str]] = []
    short = wraps = 0  # rows with a cell empty; cells going on with the sentence above them
    for row in rows:
        cells.append([reader.cell((bounds[j], min(ln[0] for ln in row), bounds[j + 1], max(ln[1] for ln in row)),
                                  inset=0.2) for j in range(ncols)])
        # Reading stops where _looks_tabular must refuse the block whatever the rows left hold
        # (each cell costs a pass over the page's chars; prose cut into columns by a page's
        # gutter shows a sentence wrapping from row to row within a few rows).
        short += not all(cells[-1])
        wraps += sum(_wrapped(a, b) for a, b in zip(cells[-2], cells[-1])) if len(cells) > 1 else 0
        if 2 * (len(rows) - short) < len(rows) or wraps >= 2 or any(_LEADERS.search(c) for c in cells[-1]):
            return None
    if not _looks_tabular(cells) or _monospaced(raw, textpage, [r for ln in block for r in ln[2]], left, top):
        return None
    return _table(cells, (bounds[0], block[0][0], bounds[-1], block[-1][1]), False)


def _prose_columns(rows: List[List[Line]], bounds: List[float], gutters, filled) -> bool:
    """Whether the block's geometry already shows no table: too few rows with text on both
    sides of every gutter, or a column of lines filling it (a page column of prose).

    Decided from the segments alone, before any cell text is read.
    """
    nrows = len(rows)
    fills = [set().union(*(filled(ln) for ln in row)) for row in rows]
    for j in range(len(gutters)):
        # A gutter shows only where text stands on both sides of it, in 3 rows at least (a
        # wide justified space on two lines of prose is no gutter).
        if sum(j in f and j + 1 in f for f in fills) < max(3, nrows / 2):
            return True
    for j, (g0, _) in enumerate(gutters):
        # Lines of prose run up to their column's edge and are many ems long; table cells
        # mostly stop short of it.
        full = 0
        for row in rows:
            segs = [r for ln in row for r in ln[2] if bounds[j] <= (r[0] + r[2]) / 2 < bounds[j + 1]]
            em = max(ln[1] - ln[0] for ln in row)
            full += bool(segs) and g0 - max(r[2] for r in segs) <= 2 * em and \
                max(r[2] for r in segs) - min(r[0] for r in segs) >= 10 * em
        if full * 2 >= nrows:
            return True
    return False


def _looks_tabular(cells: List[List[str]]) -> bool:
    """Whether a whitespace-aligned block reads as a table rather than a list or prose."""
    nrows = len(cells)
    cols = list(zip(*cells))
    if sum(all(row) for row in cells) * 2 < nrows:
        return False  # cells missing in too many rows: labels and hanging paragraphs
    texts = [c for row in cells for c in row if c]
    first = [c for c in cols[0] if c]
    if any(_LEADERS.search(c) for c in texts):
        return False  # a contents list
    if all(_LIST_MARK.match(c) for c in first) or sum(c.endswith(":") for c in first) * 5 >= len(first) * 4:
        return False  # a bulleted or numbered list, key: value lines
    # Prose cut into columns: every column holds sentences, or many cells stop mid-sentence.
    words = [statistics.median(len(c.split()) for c in col if c) for col in cols]
    cut = [c.endswith(",") or c.split()[-1].lower() in _FUNCTION_WORDS for c in texts if " " in c]
    # A sentence wrapped from row to row: a cell of several words without a full stop, and
    # the next row's cell going on in lower case.
    wraps = sum(_wrapped(a, b) for col in cols for a, b in zip(col, col[1:]))
    return min(words) < 4 and sum(cut) * 5 < max(len(cut), 1) and wraps < 2


def _wrapped(a: str, b: str) -> bool:
    """Whether cell ``b`` goes on with a sentence of cell ``a`` above it: ``a`` holds several
    words without a full stop, and ``b`` begins in lower case."""
    return bool(a and b) and len(a.split()) >= 4 and a[-1] not in ".:;!?" and b[:1].islower()


def _monospaced(raw, textpage, runs: List[Run], left: float, top: float) -> bool:
    """Whether most sampled runs are set in a fixed-pitch font (a code listing)."""
    buf = ctypes.create_string_buffer(128)
    flags = ctypes.c_int()
    checked = mono = 0
    for x0, t, x1, b in runs[:: max(1, len(runs) // 8)][:8]:
        index = raw.FPDFText_GetCharIndexAtPos(textpage.raw, left + x0 + min(2.0, (x1 - x0) / 2),
                                               top - (t + b) / 2, 2.0, 2.0)
        if index < 0:
            continue
        raw.FPDFText_GetFontInfo(textpage.raw, index, buf, len(buf), ctypes.byref(flags))
        checked += 1
        mono += bool(flags.value & 1 or _MONO.search(buf.value.decode("latin-1")))
    return checked > 0 and mono * 5 >= checked * 4
