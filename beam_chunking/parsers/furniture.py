"""Finding page furniture and tables of contents in extracted page text.

Pure functions over lines and pages, shared by the PDF parser (which cuts what they find out
of the text it builds) and usable by the plain-text parser (which must keep its text and can
only leave spans out of its sections: :func:`contents_spans`, :func:`split_around`,
:func:`visible_characters`). Nothing here knows a
document format: the rules are about how printed pages look.

- A **running header/footer** is a first/last line that repeats, digits and roman numerals
  aside, on at least 3 pages and 5% of them, and is not just as common inside pages (so a
  body line such as ``Tip`` that happens to open many pages stays). A header on the first
  page with text stays unless it carries the page number: there it is usually the title.
- A **page number** is a first/last line that is only a page label (``12``, ``- 12 -``,
  ``xiv``, ``Page 12``, ``12 of 40``, ``12 / 40``), or a header/footer line that starts or
  ends with a number that runs with the page index (the same offset on at least 3 pages and
  5% of them, as in LaTeX's ``4 CHAPTER 1. INTRODUCTION`` / ``1.2. SECTION 5``).
- A **dot-leader entry** is a line with text, a leader of at least 4 dots (``....`` or
  ``. . . .``; also ``…`` and ``·``) and a page number at its end.
- A **contents listing** is at least 3 dot-leader entries, each at most 3 lines from the
  next, that make up at least half of the lines from the first to the last; the whole run
  goes (wrapped titles, and the leader-less entries next to it such as LaTeX's chapter line
  ``2 Basics 14``), and so does a ``Contents`` / ``List of Tables`` title line above it. A
  page after a contents page continues it when most of its lines end in rising numbers. A
  listing whose numbers jump back and forth is a back-of-book **index** (Texinfo sets both
  with leaders), labelled ``"index"``.

Example:
    >>> is_dot_leader("1.2 Installing . . . . . . . 12")
    True
    >>> page_label("Page 7 of 9")
    True
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Dict, List, Optional, Sequence, Set, Tuple

#: A repeated edge line must open (or close) at least this many pages ...
MIN_PAGES = 3
#: ... and at least this share of them.
MIN_SHARE = 0.05
#: Lines longer than this (characters) are never a header or footer.
MAX_FURNITURE_CHARS = 120
#: Edge lines examined at each end of a page (a header, then a page-number line below it).
EDGE_DEPTH = 2
#: Dot-leader entries at most this many lines apart belong to one contents listing ...
MAX_ENTRY_GAP = 3
#: ... which takes the lines between them when it has at least this many entries.
MIN_LISTING = 3

_LEADER = r"(?:(?:\s?[.\u00b7\u2024\u2027])\s?){4,}|\u2026{2,}|(?:\.\s?){2,}\u2026"
_NUMBER = r"(?:\d{1,4}|[ivxlc]{1,8})"  # roman page numbers stay below 400 (front matter)
# Whether a text holds a leader anywhere: the same texts as a search for _LEADER, written to
# begin with a character class, which the regex engine scans for six times as fast.
_ANY_LEADER = re.compile(r"[.\u00b7\u2024\u2027](?:\s{0,2}[.\u00b7\u2024\u2027]){3,}|\u2026\u2026|\.\s?\.\s?\u2026")
_DOT_LEADER = re.compile(rf"^(?=.*[^\W\d_]).*?(?:{_LEADER})\s*{_NUMBER}\s*$", re.I)
_PAGE_LABEL = re.compile(
    rf"^(?:page\s+|p\.\s*)?[-\u2013\u2014\s]*({_NUMBER})[-\u2013\u2014\s]*(?:(?:/|of)\s*\d{{1,5}})?$", re.I)
_ENTRY = re.compile(rf"\S.*\s{_NUMBER}$", re.I)
_CONTENTS_TITLE = re.compile(
    r"^(?:(?:table\s+of\s+)?contents|list\s+of\s+(?:tables|figures|examples|illustrations|listings)"
    r"|(?:[\w ]{0,40}\s)?index)$", re.I)
_VARIABLE = re.compile(r"\d+|\b[ivxlc]+\b", re.I)
_EDGE_NUMBER = re.compile(rf"^(?:page\s+)?({_NUMBER})\b|\b({_NUMBER})(?:\s*(?:/|of)\s*\d{{1,5}})?$", re.I)
_ROMAN = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100}
# Only well-formed numerals: "civil" or "ill" alone are words, not page numbers.
_CANONICAL_ROMAN = re.compile(r"^(?=[ivxlc])c{0,3}(?:xc|xl|l?x{0,3})(?:ix|iv|v?i{0,3})$", re.I)


#: Lines longer than this (characters) are never a contents entry; it also keeps the leader
#: pattern linear on a text that is one huge line.
MAX_ENTRY_CHARS = 400


def is_dot_leader(line: str) -> bool:
    """Whether ``line`` is a contents entry with a dot leader: ``Title ..... 12``."""
    return len(line) <= MAX_ENTRY_CHARS and bool(_DOT_LEADER.match(line.strip()))


def page_label(line: str) -> bool:
    """Whether ``line`` is only a page label: ``12``, ``- 12 -``, ``xiv``, ``Page 12``, ``12 of 40``."""
    match = _PAGE_LABEL.match(line.strip())
    return bool(match) and _number(match.group(1)) is not None


def _shape(line: str) -> str:
    return _VARIABLE.sub("#", line.strip())


def _number(token: str) -> Optional[Tuple[str, int]]:
    """A page number token as ``(kind, value)``: arabic or roman."""
    if token.isdigit():
        return "arabic", int(token)
    if not _CANONICAL_ROMAN.match(token):
        return None
    total, last = 0, 0
    for ch in reversed(token.lower()):
        value = _ROMAN.get(ch)
        if value is None:
            return None
        total += -value if value < last else value
        last = max(last, value)
    return "roman", total


def _edge_numbers(line: str) -> List[Tuple[str, str, int]]:
    """``(end, kind, value)`` for a number at the start and/or the end of ``line``."""
    out = []
    text = line.strip()
    for m in _EDGE_NUMBER.finditer(text):
        token, end = (m.group(1), "start") if m.group(1) else (m.group(2), "end")
        parsed = _number(token)
        if parsed:
            out.append((end, parsed[0], parsed[1]))
    return out


class Furniture:
    """Learns a document's running headers, footers and page numbering from all its pages.

    Args:
        pages: The text of every page, in order (lines split on ``\\n``).

    Example:
        >>> pages = [f"Manual {n}\\nThe {w} part." for n, w in enumerate("ant bee cat dog eel fox".split())]
        >>> Furniture(pages).cut(0, pages[0].split("\\n"))
        {0: 'running header'}
    """

    def __init__(self, pages: Sequence[str]):
        self._need = max(MIN_PAGES, MIN_SHARE * len(pages))
        # The first page with text often opens with the title the running header repeats.
        self._first = next((i for i, page in enumerate(pages) if page.strip()), -1)
        edges: Counter = Counter()
        inside: Counter = Counter()
        offsets: Counter = Counter()
        for index, page in enumerate(pages):
            lines = _nonblank(page.split("\n"))
            zone = min(EDGE_DEPTH, len(lines))
            sides = [("top", depth, depth) for depth in range(zone)]
            sides += [("bottom", depth, len(lines) - 1 - depth) for depth in range(zone)]
            at_edge: Set[int] = set()
            for side, depth, k in sides:
                line = lines[k][1]
                at_edge.add(k)
                edges[side, depth, _shape(line)] += 1
                if len(line) <= MAX_FURNITURE_CHARS:
                    for end, kind, value in _edge_numbers(line):
                        offsets[side, end, kind, value - index] += 1
            for k, (_, line) in enumerate(lines):
                if k not in at_edge:
                    inside[_shape(line)] += 1
        # A repeated edge line that is as common inside pages is body text, not furniture.
        self._running: Set[Tuple[str, int, str]] = {
            key for key, n in edges.items() if n >= self._need and inside[key[2]] < n}
        self._offsets: Set[Tuple[str, str, str, int]] = {key for key, n in offsets.items() if n >= self._need}

    def _numbered(self, side: str, index: int, line: str) -> bool:
        """Whether ``line`` starts or ends with this page's number (by a learnt offset)."""
        return len(line) <= MAX_FURNITURE_CHARS and any(
            (side, end, kind, value - index) in self._offsets for end, kind, value in _edge_numbers(line))

    def cut(self, index: int, lines: Sequence[str]) -> Dict[int, str]:
        """The furniture lines of page ``index`` (0-based), given its lines.

        Returns:
            Line index -> label: ``"running header"``, ``"running footer"`` or ``"page number"``.
        """
        found: Dict[int, str] = {}
        nonblank = _nonblank(lines)
        for side, order in (("top", nonblank), ("bottom", nonblank[::-1])):
            for depth, (k, line) in enumerate(order[:EDGE_DEPTH]):
                if k in found:
                    break
                label = self._label(side, depth, index, line)
                if label is None:
                    break  # furniture sits at the very edge: stop at the first body line
                found[k] = label
        return found

    def _label(self, side: str, depth: int, index: int, line: str) -> Optional[str]:
        repeated = (side, depth, _shape(line)) in self._running
        numbered = self._numbered(side, index, line)
        if page_label(line) and (repeated or numbered):
            return "page number"
        # Below the top line only page numbers go: the line under a running header is often
        # a table's header row continued from the page before, repeated but real text. At
        # the bottom a repeated line above the page number is a footer ("Confidential").
        if side == "top":
            if depth == 0 and (numbered or (repeated and index != self._first)):
                return "running header"
        elif repeated or (numbered and depth == 0):
            return "running footer"
        return None


def contents_lines(lines: Sequence[str], after_contents: bool = False) -> Dict[int, str]:
    """The lines of ``lines`` (one page, or a whole text) that are contents, with their label.

    Args:
        lines: The lines, without their newlines.
        after_contents: The previous page was a contents page, so a run of leader-less
            entries (``2 Basics 14``, page numbers rising) continues it. Default ``False``.

    Returns:
        Line index -> ``"table of contents"``, or ``"index"`` for a listing whose page
        numbers jump back and forth (a back-of-book index is alphabetical). Every dot-leader
        entry is one; for each listing (at least :data:`MIN_LISTING` entries, at most
        :data:`MAX_ENTRY_GAP` lines apart, making up half its lines) so is every line from
        its first entry to its last, the leader-less entries and letter heads next to it and
        the ``Contents`` / ``Index`` title just above it.
    """
    # A page without a leader anywhere (most pages) has no line to look at for one.
    leaders = [k for k, line in enumerate(lines) if is_dot_leader(line)] if _ANY_LEADER.search("\n".join(lines)) else []
    out = dict.fromkeys(leaders, "table of contents")
    runs = _listings(lines, leaders)
    if not runs and after_contents:
        runs = _leaderless(lines)
    for first, last in runs:
        taken = [k for k in range(first, last + 1) if lines[k].strip()]
        label = "index" if _jumps(lines[k] for k in taken) else "table of contents"
        above = [k for k in range(first) if lines[k].strip()]
        if above and _CONTENTS_TITLE.match(" ".join(lines[above[-1]].split())):
            taken.append(above[-1])
        out.update(dict.fromkeys(taken, label))
    return out


def _jumps(lines) -> bool:
    """Whether the page numbers ending ``lines`` fall back more than a contents listing's do
    (which restart only at the front matter or an appendix)."""
    numbers = [m.group(1) for m in (re.search(r"(\d+)\s*$", line) for line in lines) if m]
    falls = sum(1 for a, b in zip(numbers, numbers[1:]) if int(b) < int(a))
    return falls > max(2, 0.2 * (len(numbers) - 1))


def _listings(lines: Sequence[str], leaders: List[int]) -> List[Tuple[int, int]]:
    """``(first, last)`` line indexes of each listing of dot-leader entries."""
    filled = [k for k, line in enumerate(lines) if line.strip()]
    rank = {k: n for n, k in enumerate(filled)}  # position among the non-blank lines

    def beside(n: int) -> bool:
        # LaTeX sets chapter lines without a leader; an index heads each letter ("A").
        line = lines[filled[n]].strip()
        return bool(_ENTRY.match(line)) or len(line) <= 2

    groups: List[List[int]] = []
    for k in leaders:
        if groups and rank[k] - rank[groups[-1][-1]] <= MAX_ENTRY_GAP:
            groups[-1].append(k)
        else:
            groups.append([k])
    runs = []
    for group in groups:
        first, last = rank[group[0]], rank[group[-1]]
        if len(group) < MIN_LISTING or 2 * len(group) < last - first + 1:
            continue
        while first > 0 and rank[group[0]] - first < MAX_ENTRY_GAP and beside(first - 1):
            first -= 1
        while last + 1 < len(filled) and last - rank[group[-1]] < MAX_ENTRY_GAP and beside(last + 1):
            last += 1
        runs.append((filled[first], filled[last]))
    return runs


def _leaderless(lines: Sequence[str]) -> List[Tuple[int, int]]:
    """A contents page continued without leaders: most lines end in rising page numbers."""
    filled = [k for k, line in enumerate(lines) if line.strip()]
    entries = [k for k in filled if _ENTRY.match(lines[k].strip())]
    if len(entries) < MIN_LISTING or 10 * len(entries) < 8 * (filled.index(entries[-1]) - filled.index(entries[0]) + 1):
        return []
    numbers = [int(m.group(1)) for k in entries for m in [re.search(r"(\d+)$", lines[k].strip())] if m]
    return [(entries[0], entries[-1])] if numbers == sorted(numbers) else []


def contents_spans(text: str) -> List[Tuple[int, int, str]]:
    """``(start, end, label)`` of each line of ``text`` that is contents (see :func:`contents_lines`).

    For parsers whose text is the source (plain text, Markdown): they cannot cut the text,
    so they leave these spans out of their sections (:func:`split_around`) and record them
    as dropped under their label (:func:`visible_characters`). Each span is one line
    without its newline.
    """
    if not _ANY_LEADER.search(text):  # no leader anywhere: nothing to look at line by line
        return []
    lines = text.split("\n")
    found = contents_lines(lines)
    spans, pos = [], 0
    for k, line in enumerate(lines):
        if k in found:
            spans.append((pos, pos + len(line), found[k]))
        pos += len(line) + 1
    return spans


def _nonblank(lines: Sequence[str]) -> List[Tuple[int, str]]:
    return [(k, line.strip()) for k, line in enumerate(lines) if line.strip()]


def split_around(text: str, spans: Sequence[Tuple], start: int = 0,
                 end: Optional[int] = None) -> List[Tuple[int, int]]:
    """The pieces of ``text[start:end]`` outside ``spans``, for sections that leave them out.

    Args:
        text: The document text (never rewritten: the pieces are spans of it).
        spans: Sorted, disjoint spans to leave out, ``(start, end, ...)`` (further items, such
            as :func:`contents_spans`' labels, are ignored).
        start: Where the range begins. Default 0.
        end: Where it ends. Default the end of ``text``.

    Returns:
        ``[start, end)`` pieces in order, each holding non-whitespace text.

    Example:
        >>> text = "Intro\\nA . . . . 2\\nB . . . . 3\\nBody"
        >>> [text[a:b] for a, b in split_around(text, [(6, 17), (18, 29)])]
        ['Intro\\n', '\\nBody']
    """
    end = len(text) if end is None else end
    pieces, pos = [], start
    for span in spans:
        a, b = max(span[0], start), min(span[1], end)
        if a >= b:
            continue
        if text[pos:a].strip():
            pieces.append((pos, a))
        pos = max(pos, b)
    if text[pos:end].strip():
        pieces.append((pos, end))
    return pieces


def visible_characters(text: str, spans: Sequence[Tuple]) -> int:
    """Non-whitespace characters of ``text`` inside ``spans`` (``(start, end, ...)``): what a
    drop records."""
    return sum(1 for span in spans for ch in text[span[0]:span[1]] if not ch.isspace())
