"""Budgeted splitting of text at scored line boundaries, coarsest boundaries first.

Each line start of a span has a score: 0 is a hard boundary (always cut), higher scores are
weaker boundaries. A span that fits the budget is one chunk. Otherwise it is cut at its
hard boundaries, and each part at the lowest score present inside it; consecutive pieces
are packed greedily while the packed span fits, and a piece that does not fit alone is
split again at the next score. A single line that still does not fit is handed to
``fallback`` (token or character windows). Pieces that fit are never split, so a block that
fits the budget (a function, a table, a paragraph) always stays whole.

Scores come from the caller: Markdown structure for :class:`StructuralChunker`, the syntax
tree for :class:`CodeChunker`.
"""
from __future__ import annotations

import re
from typing import Callable, List, Optional, Sequence, Tuple

from beam_chunking.strategies._text import skip_space, trim_end

_NEWLINE = re.compile(r"\r\n|\r|\n")

Measure = Callable[[int, int], int]
Fallback = Callable[[int, int], List[Tuple[int, int]]]
#: Called on a piece that does not fit before it is split by score: returns chunks or None.
Special = Callable[[int, int], Optional[List[Tuple[int, int, Optional[str]]]]]


def line_starts(text: str, start: int, end: int, newlines: "re.Pattern[str]" = _NEWLINE) -> List[int]:
    """Offsets of the lines of ``text[start:end]``: ``[start, ..., end]`` (the last is ``end``)."""
    out = [start]
    for m in newlines.finditer(text, start, end):
        if m.end() < end:
            out.append(m.end())
    out.append(end)
    return out


def _trim(text: str, s: int, e: int) -> Tuple[int, int]:
    s = skip_space(text, s, e)
    return s, trim_end(text, s, e)


def split_levels(text: str, lines: Sequence[int], scores: Sequence[int], budget: int, measure: Measure,
                 fallback: Fallback, special: Optional[Special] = None) -> List[Tuple[int, int, Optional[str]]]:
    """Return ``(start, end, prefix)`` chunks of the span ``lines[0]:lines[-1]``.

    Args:
        text: The document text.
        lines: Line start offsets, ending with the span's end (see :func:`line_starts`).
        scores: Score of each line start (``scores[0]`` is ignored), same length as
            ``lines`` minus one.
        budget: Largest ``measure`` of a chunk.
        measure: Size of ``text[s:e]`` (characters, or tokens counted on its own).
        fallback: Splits one over-long line into ``(start, end)`` windows.
        special: Optional hook for pieces that need their own split (oversized tables); it
            may return chunks whose ``prefix`` (a repeated table header) comes before the span.
    """
    out: List[Tuple[int, int, Optional[str]]] = []
    n = len(lines) - 1

    def piece(lo: int, hi: int, level: int) -> None:
        """Lines ``[lo, hi)``: emit as one chunk if it fits, else split at ``level`` or finer."""
        s, e = _trim(text, lines[lo], lines[hi])
        if s >= e:
            return
        if measure(s, e) <= budget:
            out.append((s, e, None))
            return
        if special is not None:
            done = special(s, e)
            if done is not None:
                out.extend(done)
                return
        inner = [scores[k] for k in range(lo + 1, hi)]
        if not inner:
            out.extend((a, b, None) for a, b in fallback(s, e))
            return
        level = max(level, min(inner))
        cuts = [lo] + [k for k in range(lo + 1, hi) if scores[k] <= level] + [hi]
        pack(cuts, level + 1)

    def pack(cuts: List[int], next_level: int) -> None:
        cur_lo = cur_hi = -1
        for a, b in zip(cuts, cuts[1:]):
            if cur_lo < 0:
                cur_lo, cur_hi = a, b
                continue
            s, e = _trim(text, lines[cur_lo], lines[b])
            if measure(s, e) <= budget:
                cur_hi = b
                continue
            piece(cur_lo, cur_hi, next_level)
            cur_lo, cur_hi = a, b
        if cur_lo >= 0:
            piece(cur_lo, cur_hi, next_level)

    hard = [0] + [k for k in range(1, n) if scores[k] == 0] + [n]
    for a, b in zip(hard, hard[1:]):
        piece(a, b, 1)
    return out
