"""Lines of PDF pages grouped into the blocks a reader sees: paragraphs, headings, code.

A PDF has no paragraphs, only positioned lines. Two consecutive lines belong to one
paragraph unless one of these says otherwise:

- **the font changes**: another size (more than 0.6 pt), or monospaced against proportional;
- **a list item starts**: the next line begins with a bullet or ``1.`` (a dash, ``a)`` or
  ``iv.``, in a list), or the line is a contents entry with a dot leader;
- **the gap grows**: the baselines lie more than 1.3 times the body's usual line pitch apart
  (measured per font size over the whole document);
- **the line ended early**: the next line's first word would have fitted after it, so the
  line was not full when it was broken (this tells a paragraph's short last line in ragged
  and justified text alike, and needs no threshold on the line length). The column's right
  edge is where the prose lines starting at its left end in the whole document (90th
  percentile);
- **the next line is indented**: it starts at least 0.6 em to the right of a line that
  started at the column's edge (a first-line indent), and the line before is no list item.

Monospaced lines keep their line breaks (code); other lines are joined with a space, and a
word hyphenated at a line end is joined again (the hyphen kept before a capital or a digit,
and where the document spells the compound with a hyphen elsewhere and never without).
An en or em dash, a letter or a roman numeral opens a list item only in a list or indented
apart: prose lines may begin with one. A superscript, or a piece of a line that PDFium broke
off, stays in its line's paragraph.

A line that starts above the previous one starts a new column (multi-column pages are drawn
column by column). At a column or page turn the paragraph goes on when the last line was full
and the next one neither is indented, starts a list item, nor changes font: a sentence cut by
a page turn stays one paragraph. Smaller print at the foot of a page (footnotes) that
interrupts such a paragraph is put after it, and so is a caption (a ``Figure 2:``-style label,
or print smaller than the body) that stands between a paragraph stopped mid-sentence and the
line that goes on with it, on the same page or at the top of the next.

Headings are blocks of at most 3 lines set at least 15% larger than the body text.
"""
from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Set, Tuple

from beam_chunking.parsers.furniture import is_dot_leader
from beam_chunking.parsers.pdf_lines import Line

_LIST_MARKER = re.compile(r"^(?:[\u2022\u2023\u25e6\u2043\u2219\u25aa\u25cf\u25a0*+\-\u00b7]\s|\d{1,3}[.)]\s)")
# A letter or roman numeral opens a list item only in a list (or indented apart), like a
# dash: prose lines may begin with an initial ("J. R. R. Tolkien").
# An en or em dash opens a list item only in a list (or indented apart): prose lines may
# begin with a dash too ("— and then").
_DASH = re.compile(r"^(?:[\u2013\u2014]\s|(?:[a-zA-Z]|[ivxlc]{1,5})[.)]\s)")
# A caption's label: "Figure 2:", "Fig. 3.", "Table IV", "Listing 1" ...
_CAPTION = re.compile(r"^(?:Figure|Fig\.|Table|Tab\.|Listing|Chart|Diagram|Exhibit|Plate|Illustration|Image|Photo|"
                      r"Map|Scheme|Algorithm)\s*[\dIVXivx]+[\w.-]*(?:[.:\u2013\u2014-]|\s|$)", re.IGNORECASE)
# Letters of the right-to-left scripts: Hebrew, Arabic, Syriac, Thaana, N'Ko and their forms.
_RTL = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc]")
_SENTENCE_END = re.compile(r"[.!?:;][\"'\u2019\u201d)\]]*$")
_WORD_EDGE = re.compile(r"^\W+|\W+$")
_WORD = re.compile(r"\w(?:[\w-]*\w)?")
#: How much larger than the body text a heading is set, at least.
HEADING_RATIO = 1.15
_PITCH_RATIO = 1.3
_INDENT_EM = 0.6
#: Below this share of the page's text width, no line of a column reached its right edge.
_NARROW = 0.6
#: Lines either side a line's own right edge is measured over, and the least share of the
#: column's edge that edge may be (short lines together set no edge of their own).
_NEARBY = 6
_LOCAL_FLOOR = 0.8


@dataclass
class Block:
    """A paragraph, heading or code block: its lines in reading order with their pages.

    Args:
        kind: ``"text"``, ``"heading"`` or ``"code"``.
        lines: ``(page index, line)`` pairs.
    """

    kind: str
    lines: List[Tuple[int, Line]] = field(default_factory=list)
    #: Lines (by index) whose word, hyphenated at the line before's end, keeps its hyphen.
    keep_hyphens: Set[int] = field(default_factory=set)

    @property
    def size(self) -> float:
        """The font size of the block's first line."""
        return self.lines[0][1].size

    @property
    def page(self) -> int:
        """The 0-based page of the block's first line."""
        return self.lines[0][0]

    def text_and_spans(self) -> Tuple[str, List[Tuple[int, int]]]:
        """The block's text and each line's ``[start, end)`` in it."""
        parts: List[str] = []
        spans: List[Tuple[int, int]] = []
        length = 0
        for k, (_, line) in enumerate(self.lines):
            if k:
                joint = _joint(self.lines[k - 1][1], line, self.kind == "code", k in self.keep_hyphens)
                parts.append(joint)
                length += len(joint)
            parts.append(line.text)
            spans.append((length, length + len(line.text)))
            length += len(line.text)
        return "".join(parts), spans


def _joint(a: Line, b: Line, code: bool, keep_hyphen: bool = False) -> str:
    if a.hyphenated:
        # A hyphen at a line end splits a word unless a capital or digit follows, or the
        # document spells the compound with its hyphen elsewhere (see _hyphenated_words).
        return "" if b.text[:1].islower() and a.text[-1:].isalpha() and not keep_hyphen else "-"
    return "\n" if code else " "


def _hyphenated_words(pages: Sequence[Sequence[Line]]) -> Tuple[Set[str], Set[str]]:
    """The lower-cased words of the document's lines: those spelt with a hyphen, and all."""
    text = "\n".join(line.text for lines in pages for line in lines).lower()
    words = set(_WORD.findall(text))
    return {word for word in words if "-" in word}, words


def _mark_compounds(found: Sequence[Block], pages: Sequence[Sequence[Line]]) -> None:
    """Keep the hyphen of a word split at a line end where the document spells it with a
    hyphen elsewhere and never without."""
    compounds: Optional[Set[str]] = None
    words: Set[str] = set()
    for block in found:
        for k in range(1, len(block.lines)):
            a, b = block.lines[k - 1][1], block.lines[k][1]
            if not a.hyphenated or not a.text or not b.text:
                continue
            if compounds is None:
                compounds, words = _hyphenated_words(pages)
            left = _WORD_EDGE.sub("", a.text.rsplit(" ", 1)[-1].lower())
            right = _WORD_EDGE.sub("", b.text.split(" ", 1)[0].lower())
            if f"{left}-{right}" in compounds and f"{left}{right}" not in words:
                block.keep_hyphens.add(k)


def _round(size: float) -> float:
    return round(size * 2) / 2


class Metrics:
    """Document-wide measures: the body text's size and the usual line pitch of each size."""

    def __init__(self, pages: Sequence[Sequence[Line]]):
        chars: Dict[float, int] = {}
        pitches: Dict[float, List[float]] = {}
        for lines in pages:
            rounded = [_round(line.size) for line in lines]
            for k, (a, b) in enumerate(zip(lines, lines[1:])):
                if rounded[k] == rounded[k + 1] and 0.8 * a.size < b.baseline - a.baseline < 2.5 * a.size:
                    pitches.setdefault(rounded[k], []).append(b.baseline - a.baseline)
            for size, line in zip(rounded, lines):
                chars[size] = chars.get(size, 0) + len(line.text)
        self.body = max(chars, key=lambda s: (chars[s], -s)) if chars else 10.0
        self._pitch = {s: statistics.median(v) for s, v in pitches.items() if len(v) >= 3}

    def pitch(self, size: float) -> float:
        """The usual baseline-to-baseline distance of lines of ``size``, in points."""
        return self._pitch.get(_round(size), 1.2 * size)

    def heading(self, size: float) -> bool:
        """Whether text of ``size`` is set large enough to be a heading."""
        return size >= self.body * HEADING_RATIO


@dataclass
class _Run:
    """Consecutive lines of one column on one page."""

    page: int
    lines: List[Line]
    left: float = 0.0
    right: float = 0.0
    rights: List[float] = field(default_factory=list)  # each line's right edge (see _local_edges)

    def right_of(self, line: Line) -> float:
        """The right edge that ``line`` was set against."""
        for k in range(len(self.lines) - 1, -1, -1):
            if self.lines[k] is line:
                return self.rights[k]
        return self.right


def _same_line(a: Line, b: Line) -> bool:
    """Whether ``b`` goes on ``a``'s visual line a little to its right: a superscript, a
    subscript or a run of text PDFium broke off (not another column or a table cell)."""
    return (b.top < a.bottom and a.top < b.bottom and b.x0 >= a.x1 - 1
            and b.x0 - a.x1 < 2 * max(a.size, b.size))


def _joined(a: Line, b: Line) -> Line:
    """``a`` and the piece ``b`` of its visual line as one line (on ``a``'s baseline)."""
    return a._replace(text=f"{a.text} {b.text}", x1=max(a.x1, b.x1), top=min(a.top, b.top),
                      bottom=max(a.bottom, b.bottom), size=max(a.size, b.size), bold=a.bold and b.bold,
                      hyphenated=b.hyphenated)


def _runs(page: int, lines: Sequence[Line]) -> List[_Run]:
    runs: List[_Run] = []
    for line in lines:
        if runs:
            prev = runs[-1].lines[-1]
            if _same_line(prev, line) and not prev.mono and not line.mono:
                runs[-1].lines[-1] = _joined(prev, line)
                continue
            up = line.baseline < prev.baseline - 0.5 * prev.size
            beside = abs(line.baseline - prev.baseline) < 0.5 * prev.size and line.x0 > prev.x1
            if not (up or beside):
                runs[-1].lines.append(line)
                continue
        runs.append(_Run(page, [line]))
    for run in runs:
        run.left = min(line.x0 for line in run.lines)
        run.right = max(line.x1 for line in run.lines)
    return runs


def _widen(runs: Sequence[_Run], widths: Optional[Sequence[float]]) -> None:
    """Give each run the right edge of its column: where the prose lines that start at the
    same left (within 15 pt) anywhere in the document end, at the 90th percentile (a table
    or a long line of code running into the margin moves no edge). Where even that is under
    :data:`_NARROW` of the page's width less its margins on a page of one column (short
    lines: a list, a form), the right margin is taken to mirror the left one."""
    # Pages of one width share their columns; a landscape page sets no edge for a portrait one.
    def width_of(run: _Run) -> float:
        return round(widths[run.page]) if widths is not None and run.page < len(widths) else 0.0

    clusters: Dict[float, List[Tuple[float, List[float]]]] = {}
    for run in sorted(runs, key=lambda r: r.left):
        ends = [line.x1 for line in run.lines if not line.mono] or [line.x1 for line in run.lines]
        group = clusters.setdefault(width_of(run), [])
        if group and run.left - group[-1][0] < 15:
            group[-1][1].extend(ends)
        else:
            group.append((run.left, list(ends)))
    edges: Dict[float, List[Tuple[float, float]]] = {}
    for width, group in clusters.items():
        for left, ends in group:
            ends.sort()
            edges.setdefault(width, []).append((left, ends[min(len(ends) - 1, int(0.9 * len(ends)))]))
    lefts: Dict[int, float] = {}
    for run in runs:
        lefts[run.page] = min(lefts.get(run.page, run.left), run.left)
        run.right = next(right for left, right in reversed(edges[width_of(run)]) if left <= run.left)
    columns = _multi_column_pages(runs)
    for run in runs:
        if widths is None or run.page >= len(widths) or run.page in columns:
            continue
        text_width = widths[run.page] - 2 * lefts[run.page]
        if text_width > 0 and run.right - lefts[run.page] < _NARROW * text_width:
            run.right = widths[run.page] - lefts[run.page]
    for run in runs:
        run.rights = _local_edges(run)


def _local_edges(run: _Run) -> List[float]:
    """Each line's right edge: where the nearby lines that start where it does (within
    :data:`_NEARBY` lines) end, when two or more do and reach past :data:`_LOCAL_FLOOR` of
    the column's edge, else the column's edge. A quotation or an indented block set
    narrower than the column is measured against its own edge, not the column's."""
    out = []
    lines = run.lines
    # The candidates' fields read once, not once per neighbour.
    x0s = [line.x0 for line in lines]
    ends_at = [None if line.mono else line.x1 for line in lines]
    floor = _LOCAL_FLOOR * run.right
    for k, line in enumerate(lines):
        x0 = x0s[k]
        ends = [ends_at[j] for j in range(max(0, k - _NEARBY), min(len(lines), k + _NEARBY + 1))
                if ends_at[j] is not None and lines[j] is not line and abs(x0s[j] - x0) < 1.5]
        local = max(ends) if len(ends) >= 2 else 0.0
        out.append(local if local >= floor and local > line.x1 - 0.5 else run.right)
    return out


def _multi_column_pages(runs: Sequence[_Run]) -> set:
    """Pages with two runs side by side (overlapping in height, apart in width)."""
    pages = set()
    by_page: Dict[int, List[_Run]] = {}
    for run in runs:
        by_page.setdefault(run.page, []).append(run)
    for page, group in by_page.items():
        spans = [(r.left, r.right, r.lines[0].top, r.lines[-1].bottom) for r in group]
        for a in spans:
            if any(b[0] >= a[1] - 2 and b[2] < a[3] and a[2] < b[3] for b in spans if b is not a):
                pages.add(page)
                break
    return pages


def _marker(line: Line) -> bool:
    return bool(_LIST_MARKER.match(line.text))


def _item(a: Line, b: Line) -> bool:
    """Whether ``b`` opens a list item after ``a``: a bullet or number, or a dash in a list
    (``a`` an item too) or set apart from ``a`` by its indentation."""
    if _marker(b):
        return True
    return bool(_DASH.match(b.text)) and (_marker(a) or bool(_DASH.match(a.text))
                                          or abs(b.x0 - a.x0) > 0.5 * a.size)


def _ended_early(a: Line, b: Line, right: float) -> bool:
    """Whether ``a`` was broken with room to spare: ``b``'s first word would have fitted."""
    if a.hyphenated:
        return False
    # A space is about a quarter em; the column's edge as measured (its furthest glyph) may
    # lie a little past where the layout measured the line, so a word must fit with room.
    space = 0.25 * a.size
    return a.x1 + space + b.first_word < right - 0.3 * a.size


def _same_font(a: Line, b: Line) -> bool:
    return abs(a.size - b.size) <= 0.6 and a.mono == b.mono


def new_paragraph(a: Line, b: Line, run: _Run, metrics: Metrics) -> bool:
    """Whether ``b``, the line after ``a`` in the same column, starts a new block."""
    if not _same_font(a, b) or _item(a, b) or (a.text[-1:].isdigit() and is_dot_leader(a.text)):
        return True
    if b.baseline - a.baseline > _PITCH_RATIO * metrics.pitch(a.size):
        return True
    if a.mono:
        return False  # code keeps its lines together, whatever their length
    if _ended_early(a, b, run.right_of(a)):
        return True
    em = a.size
    return (b.x0 > a.x0 + _INDENT_EM * em and a.x0 <= run.left + _INDENT_EM * em and not _marker(a)
            and not _DASH.match(a.text))


def _continues(a: Line, a_run: _Run, b: Line, b_run: _Run, metrics: Metrics) -> bool:
    """Whether the block ending with ``a`` goes on with ``b`` at the top of the next column or page."""
    if not _same_font(a, b) or _item(a, b) or metrics.heading(b.size):
        return False
    if a.mono:
        return True
    return not _ended_early(a, b, a_run.right_of(a)) and b.x0 <= b_run.left + _INDENT_EM * b.size


def _kind(line: Line, metrics: Metrics) -> str:
    if line.mono:
        return "code"
    return "heading" if metrics.heading(line.size) else "text"


def blocks(pages: Sequence[Sequence[Line]], widths: Optional[Sequence[float]] = None,
           metrics: Optional[Metrics] = None, apart: Optional[Set[int]] = None) -> List[Block]:
    """Group the pages' lines (furniture already removed) into blocks in reading order.

    Args:
        pages: Each page's lines in PDFium's order; the index is the 0-based page.
        widths: Each page's width in points, for the right edge of pages with no full
            column of text. Default ``None``: unknown.
        metrics: Document measures; computed from ``pages`` when not given.
        apart: ``id()`` of lines that are blocks of their own and interrupt nothing (running
            headers and footers kept in the text): the paragraph they stand in goes on past
            them, and they follow it. Default none.
    """
    metrics = metrics or Metrics(pages)
    apart = apart or set()
    # Right-to-left pages are read mirrored, so that the rules above (indents, lines that
    # ended early) hold as written; the blocks get their lines back as drawn.
    flipped = {page: _flip_axis(widths, page) for page, lines in enumerate(pages) if _right_to_left(lines)}
    if flipped:
        pages, apart = _mirrored(pages, flipped, apart)
    runs = [run for page, lines in enumerate(pages) for run in _runs(page, lines)]
    _widen(runs, widths)
    out: List[Block] = []
    open_block: Optional[Block] = None  # the block the next line may extend
    open_run: Optional[_Run] = None
    held: List[Block] = []  # footnotes waiting for the paragraph they interrupt to end
    captioned: Optional[Block] = None  # a paragraph that stopped mid-sentence where a caption began
    captioned_run: Optional[_Run] = None  # the run of its last line

    def close() -> None:
        nonlocal open_block
        if open_block is not None:
            out.append(open_block)
            open_block = None
        out.extend(held)
        held.clear()

    for run in runs:
        fresh = True  # no line of this run read yet: the next one may continue a page or column
        for line in run.lines:
            if id(line) in apart:
                # Held while a paragraph may still go on past it; else in its place.
                (held if open_block is not None else out).append(Block("text", [(run.page, line)]))
                continue
            k, fresh = (0 if fresh else 1), False
            if open_block is not None:
                prev = open_block.lines[-1][1]
                if k == 0:
                    # Only to the next page: pages left out between (contents, blank) end it.
                    joins = (run.page <= open_block.lines[-1][0] + 1
                             and _continues(prev, open_run, line, run, metrics))
                else:
                    joins = not new_paragraph(prev, line, run, metrics)
                if joins and open_block.kind == "heading" and len(open_block.lines) >= 3:
                    joins = False
                if joins:
                    open_block.lines.append((run.page, line))
                    open_run = run
                    continue
                if k == 0 and not apart and _footnotes_after(out, held, open_block, run, metrics):
                    # The open block was small print at a page foot: hold it, and reopen the
                    # paragraph it interrupted if this line continues that one.
                    held.append(open_block)
                    resumed = out.pop()
                    open_block = resumed
                    prev = resumed.lines[-1][1]
                    if (run.page == resumed.lines[-1][0] + 1
                            and _continues(prev, _run_of(runs, resumed), line, run, metrics)):
                        open_block.lines.append((run.page, line))
                        open_run = run
                        continue
                if (captioned is not None and out and out[-1] is captioned
                        and run.page <= captioned.lines[-1][0] + 1
                        and _continues(captioned.lines[-1][1], captioned_run, line, run, metrics)):
                    # The caption (or small print) interrupted this paragraph: it goes on
                    # here, and the caption follows it.
                    held.append(open_block)
                    open_block, captioned = out.pop(), None
                    open_block.lines.append((run.page, line))
                    open_run = run
                    continue
                interrupted = open_block if _interrupts(open_block, line, metrics) else None
                close()
                captioned, captioned_run = interrupted, open_run
            open_block = Block(_kind(line, metrics), [(run.page, line)])
            open_run = run
    close()
    _mark_compounds(out, pages)
    for block in out if flipped else ():
        block.lines = [(page, _mirror(line, flipped[page]) if page in flipped else line) for page, line in block.lines]
    return out


def _right_to_left(lines: Sequence[Line]) -> bool:
    """Whether most letters of a page's lines are of a right-to-left script."""
    if not any(_RTL.search(line.text) for line in lines):
        return False
    rtl = sum(len(_RTL.findall(line.text)) for line in lines)
    letters = sum(1 for line in lines for ch in line.text if ch.isalpha())
    return 2 * rtl > letters


def _flip_axis(widths: Optional[Sequence[float]], page: int) -> float:
    """The sum ``x + x'`` of a page's mirror: its width when known."""
    return widths[page] if widths is not None and page < len(widths) else 0.0


def _mirror(line: Line, axis: float) -> Line:
    """``line`` mirrored left to right (its own inverse)."""
    return line._replace(x0=axis - line.x1, x1=axis - line.x0)


def _mirrored(pages: Sequence[Sequence[Line]], flipped: Dict[int, float], apart: Set[int]):
    """The pages with the ``flipped`` ones mirrored, and ``apart`` for the mirrored lines."""
    out, moved = [], set(apart)
    for page, lines in enumerate(pages):
        if page not in flipped:
            out.append(lines)
            continue
        mirrored = [_mirror(line, flipped[page]) for line in lines]
        moved.update(id(new) for old, new in zip(lines, mirrored) if id(old) in apart)
        out.append(mirrored)
    return out, moved


def _caption(line: Line, metrics: Metrics) -> bool:
    """Whether ``line`` may open a caption or a note set in the text: a ``Figure 2:``-style
    label, or print smaller than the body."""
    return not line.mono and (bool(_CAPTION.match(line.text)) or line.size < metrics.body - 0.6)


def _interrupts(block: Block, line: Line, metrics: Metrics) -> bool:
    """Whether ``line``, opening a block after ``block``, may be a caption standing in
    ``block``'s paragraph: ``block`` is body text that stopped mid-sentence."""
    last = block.lines[-1][1]
    return (block.kind == "text" and _caption(line, metrics) and not _caption(block.lines[0][1], metrics)
            and not _SENTENCE_END.search(last.text))


def _footnotes_after(out: List[Block], held: List[Block], block: Block, run: _Run, metrics: Metrics) -> bool:
    """Whether ``block``, ending the page before ``run``, is small print under a paragraph of
    body text on the same page (and the page turns here)."""
    if not out or block.page == run.page or held:
        return False
    before = out[-1]
    last_page = before.lines[-1][0]
    return (last_page == block.page and before.kind == "text" and block.kind == "text"
            and block.size < before.size - 0.6 and not metrics.heading(block.size))


def _run_of(runs: Sequence[_Run], block: Block) -> _Run:
    """The run that holds the block's last line."""
    page, line = block.lines[-1]
    for run in runs:
        if run.page == page and any(other is line for other in run.lines):
            return run
    return runs[-1]


__all__ = ["Block", "HEADING_RATIO", "Metrics", "blocks", "new_paragraph"]
