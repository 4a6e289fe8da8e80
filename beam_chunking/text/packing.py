"""Greedy packing of consecutive spans under a size, and budgeted splitting at scored lines.

One packer serves every strategy that groups consecutive units (sentences, lines, table
rows, sections) while the group still fits: :func:`greedy_end` extends a group as far as
it fits, :func:`greedy_groups` partitions a sequence into such groups, and
:func:`split_levels` applies them recursively at scored line boundaries. The caller's
``fits`` (or ``measure``) is the ceiling: characters, or tokens counted on the group's own
text, so packing never breaks exactness (groups are spans of the source) or the hard cap.

``split_levels``: each line start of a span has a score: 0 is a hard boundary (always
cut), higher scores are weaker boundaries. A span that fits the budget is one chunk.
Otherwise it is cut at its hard boundaries, and each part at the lowest score present
inside it; consecutive pieces are packed greedily while the packed span fits, and a piece
that does not fit alone is split again at the next score. A single line that still does
not fit is handed to ``fallback`` (token or character windows). Pieces that fit are never
split, so a block that fits the budget (a function, a table, a paragraph) stays whole.
With ``min_size``, a piece smaller than it that would stand alone before a piece too large to
fit (``def run(self):`` before its oversized body, a heading before a long section) is not
emitted alone: it is split together with that piece, never cut from it, so it lands in the
first chunk of that piece's own split. Scores come from the caller: Markdown structure for
the structural strategy, the syntax tree for the code strategy.

Example:
    >>> words = [(0, 3), (4, 7), (8, 13), (14, 16)]  # "one two three go"
    >>> greedy_groups(len(words), lambda a, b: words[b - 1][1] - words[a][0] <= 8)
    [(0, 2), (2, 4)]
"""
from __future__ import annotations

from typing import Callable, List, Optional, Sequence, Tuple

from beam_chunking.text.spans import trim_span

#: ``fits(a, b)``: whether the units ``[a, b)`` fit together as one group.
Fits = Callable[[int, int], bool]
#: Size of ``text[s:e]`` in the caller's unit (characters, or tokens counted on its own).
Measure = Callable[[int, int], int]
#: Splits one over-long line ``[s, e)`` into ``(start, end)`` windows.
Fallback = Callable[[int, int], List[Tuple[int, int]]]
#: Called on a piece that does not fit before it is split by score: chunks, or ``None``.
Special = Callable[[int, int], Optional[List[Tuple[int, int, Optional[str]]]]]


def greedy_end(lo: int, hi: int, fits: Callable[[int], bool]) -> int:
    """Extend a group that ends at ``lo`` one unit at a time while it fits, up to ``hi``.

    Args:
        lo: The group's current end (exclusive unit index).
        hi: The largest end allowed.
        fits: ``fits(end)``: whether the group still fits when it ends at ``end``.

    Returns:
        The first end ``b`` in ``[lo, hi]`` with ``b == hi`` or ``not fits(b + 1)``: greedy,
        it stops at the first unit that does not fit, even if a later end would.
    """
    b = lo
    while b < hi and fits(b + 1):
        b += 1
    return b


def greedy_groups(n: int, fits: Fits) -> List[Tuple[int, int]]:
    """Partition units ``[0, n)`` into consecutive groups ``[a, b)``, each as long as it fits.

    A group starts with one unit whether or not that unit fits alone (the caller splits
    an oversized single unit); every group of two or more units satisfies ``fits``.

    Args:
        n: Number of units.
        fits: ``fits(a, b)``: whether units ``[a, b)`` fit together.

    Returns:
        ``(a, b)`` index ranges covering ``[0, n)`` in order; ``[]`` when ``n`` is 0.
    """
    out: List[Tuple[int, int]] = []
    a = 0
    while a < n:
        b = greedy_end(a + 1, n, lambda end: fits(a, end))
        out.append((a, b))
        a = b
    return out


#: Most groups :func:`balanced_groups` evens out; more are packed greedily.
MAX_BALANCED_GROUPS = 16


def balanced_groups(n: int, size: Callable[[int, int], int], limit: int) -> List[Tuple[int, int]]:
    """Partition units ``[0, n)`` into as few consecutive groups as fit ``limit``, evened out.

    The group count is the greedy one (the fewest that fit); the groups are then made as
    even as that count allows: the smallest group limit that still gives that count is
    found by bisection, and the units are packed greedily under it. A paragraph of 230
    tokens under a 200-token limit becomes two groups of about 115, not 200 and 30. Past
    :data:`MAX_BALANCED_GROUPS` groups the greedy ones are returned: an uneven last group
    matters in a paragraph, not in a megabyte-long line, and each bisection step is a pass.

    Args:
        n: Number of units.
        size: ``size(a, b)``: the measure of units ``[a, b)`` together (it must grow with
            ``b``); a single unit over ``limit`` stands alone.
        limit: The largest group size, in ``size``'s unit.

    Returns:
        ``(a, b)`` index ranges covering ``[0, n)`` in order; ``[]`` when ``n`` is 0.
    """
    def pack(cap: int) -> List[Tuple[int, int]]:
        return greedy_groups(n, lambda a, b: size(a, b) <= cap)

    best = pack(limit)
    if not 2 <= len(best) <= MAX_BALANCED_GROUPS:
        return best
    low, high = max(1, -(-size(0, n) // len(best))), limit - 1
    while low <= high:
        mid = (low + high) // 2
        groups = pack(mid)
        if len(groups) <= len(best):
            best, high = groups, mid - 1
        else:
            low = mid + 1
    return best


def split_levels(text: str, lines: Sequence[int], scores: Sequence[int], budget: int, measure: Measure,
                 fallback: Fallback, special: Optional[Special] = None,
                 min_size: int = 0) -> List[Tuple[int, int, Optional[str]]]:
    """Return ``(start, end, prefix)`` chunks of the span ``lines[0]:lines[-1]``.

    Args:
        text: The document text.
        lines: Line start offsets, ending with the span's end (see
            :func:`beam_chunking.text.spans.line_starts`).
        scores: Score of each line start (``scores[0]`` is ignored), ``len(lines) - 1``
            of them.
        budget: Largest ``measure`` of a chunk, in the measure's unit.
        measure: Size of ``text[s:e]`` (characters, or tokens counted on its own).
        fallback: Splits one over-long line into ``(start, end)`` windows.
        special: Optional hook for pieces that need their own split (oversized tables); it
            may return chunks whose ``prefix`` (a repeated table header) comes before the span.
        min_size: Pieces under this ``measure`` are split together with a following piece
            that does not fit, instead of standing alone (see the module docstring). Default
            0 (off).

    Returns:
        Chunks in order, trimmed of whitespace; ``prefix`` is ``None`` except for chunks
        from ``special``.
    """
    out: List[Tuple[int, int, Optional[str]]] = []
    n = len(lines) - 1

    def piece(lo: int, hi: int, level: int, glue: Optional[int] = None) -> None:
        """Lines ``[lo, hi)``: emit as one chunk if it fits, else split at ``level`` or finer.

        ``glue``: no cut at or before this line (a small piece rides on the next one)."""
        s, e = trim_span(text, lines[lo], lines[hi])
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
        first = lo if glue is None else glue
        inner = [scores[k] for k in range(first + 1, hi)]
        if not inner:
            out.extend((a, b, None) for a, b in fallback(s, e))
            return
        level = max(level, min(inner))
        cuts = [lo] + [k for k in range(first + 1, hi) if scores[k] <= level] + [hi]

        def fits(a: int, b: int) -> bool:
            return measure(*trim_span(text, lines[cuts[a]], lines[cuts[b]])) <= budget

        groups = greedy_groups(len(cuts) - 1, fits)

        def _special(g: int) -> bool:
            # A piece with its own split (a table repeating its header) keeps its start.
            if special is None:
                return False
            return special(*trim_span(text, lines[cuts[groups[g][0]]], lines[cuts[groups[g][1]]])) is not None
        pending: Optional[int] = None  # first line of a small piece riding on the next one
        for k, (a, b) in enumerate(groups):
            begin, hold = (cuts[a], None) if pending is None else (pending, cuts[a])
            pending = None
            if (min_size and hold is None and b - a == 1 and k + 1 < len(groups)
                    and groups[k + 1][1] - groups[k + 1][0] == 1 and not fits(*groups[k + 1])
                    and measure(*trim_span(text, lines[cuts[a]], lines[cuts[b]])) < min_size
                    and not _special(k + 1)):
                pending = cuts[a]
                continue
            piece(begin, cuts[b], level + 1, hold)

    hard = [0] + [k for k in range(1, n) if scores[k] == 0] + [n]
    for a, b in zip(hard, hard[1:]):
        piece(a, b, 1)
    return out
