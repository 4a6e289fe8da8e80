"""Minimum chunk size: undersized fragments merged into a neighbour within the ceiling.

A splitter that cuts at the strongest boundary that helps can leave a piece far below its
budget: a block header (``try:``, ``class X(Base):``) whose body did not fit beside it, a
heading whose body starts the next chunk, the few words after the last full window, a lone
``|`` closing a table row. :func:`merge_undersized` is the one pass the size-bounded
strategies and the semantic refiner run over a section's spans to remove them:

- a span measuring less than ``min_size`` is joined to a neighbour: the **following** span
  when it looks like a header (:func:`looks_like_header`) or is the first span, else the
  **previous** one, then the other side;
- a join happens only when the joined span (first start to last end, so an overlap is
  counted once) measures at most ``max_size`` (the ceiling is never broken) and no hard
  boundary (``hard``) lies between the two;
- a span that can join neither neighbour is kept and reported as undersized, so the caller
  can flag it.

Spans stay exact spans of the text with strictly increasing starts and ends; joining two
neighbours is their union, so no character is lost or repeated beyond the existing overlap.

Example:
    >>> text = "try:\\n    x = compute(a, b)\\nexcept ValueError:\\n    pass"
    >>> spans = [(0, 4), (9, 26), (27, 54)]
    >>> [(text[s:e], small) for s, e, small in merge_undersized(text, spans, 10, 40, lambda s, e: e - s)]
    [('try:\\n    x = compute(a, b)', False), ('except ValueError:\\n    pass', False)]
"""
from __future__ import annotations

import bisect
import re
from typing import Callable, List, Sequence, Tuple

from beam_chunking.text.headings import looks_like_heading_line

#: Size of ``text[s:e]`` in the caller's unit (characters, or tokens counted on its own).
Measure = Callable[[int, int], int]

# A line that opens a block (Python ``try:``, C-like ``{``) or a Markdown heading: the text
# it introduces follows it, so it belongs with the next span.
_OPENS_BLOCK = re.compile(r"[:{(\[]\s*$")
_ATX = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")


def looks_like_header(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` introduces what follows it: a block header or a heading.

    True for a span ending in ``:``, ``{``, ``(`` or ``[`` (a block opens), for one whose
    first line is a Markdown ATX heading and for a one-line heading by shape
    (:func:`~beam_chunking.text.headings.looks_like_heading_line`).
    """
    piece = text[start:end]
    if _OPENS_BLOCK.search(piece) or _ATX.match(piece):
        return True
    return "\n" not in piece and "\r" not in piece and looks_like_heading_line(piece)


def effective_minimum(min_size: int, max_size: int) -> int:
    """The minimum a strategy applies: ``min_size``, at most a quarter of ``max_size``.

    The cap keeps a minimum meant for the default ceiling from reshaping every chunk when a
    caller picks a small ceiling (``max_chunk_size=40`` with the default minimum of 64).
    """
    return max(0, min(min_size, max_size // 4))


def merge_undersized(text: str, spans: Sequence[Tuple[int, int]], min_size: int, max_size: int,
                     measure: Measure, hard: Sequence[int] = ()) -> List[Tuple[int, int, bool]]:
    """Join spans under ``min_size`` to a neighbour while the result fits ``max_size``.

    Args:
        text: The document text.
        spans: ``(start, end)`` spans of one section in order, with strictly increasing
            starts and ends (neighbours may overlap).
        min_size: Smallest size kept alone, in ``measure``'s unit; 0 turns the pass off.
        max_size: The hard ceiling, in the same unit: a join never exceeds it.
        measure: Size of ``text[s:e]``.
        hard: Sorted offsets that no join may cross (a heading's start): two spans are
            never joined when one of these lies in ``(first.start, second.start]``.

    Returns:
        ``(start, end, undersized)`` in order; ``undersized`` is ``True`` for a span still
        under ``min_size`` because no neighbour could take it.
    """
    items = [[s, e] for s, e in spans]
    if min_size <= 0 or not items:
        return [(s, e, False) for s, e in items]
    sizes = [measure(s, e) for s, e in spans]  # kept up to date as spans grow

    def crosses(a: List[int], b: List[int]) -> bool:
        k = bisect.bisect_right(hard, a[0])
        return k < len(hard) and hard[k] <= b[0]

    out: List[List[int]] = []
    out_sizes: List[int] = []
    small: List[bool] = []
    # Walk left to right; ``out`` holds settled spans, ``items[i:]`` the rest.
    for i, cur in enumerate(items):
        if sizes[i] >= min_size:
            out.append(cur)
            out_sizes.append(sizes[i])
            small.append(False)
            continue
        nxt = items[i + 1] if i + 1 < len(items) else None
        prev = out[-1] if out else None
        order = ("next", "prev") if (prev is None or looks_like_header(text, cur[0], cur[1])) else ("prev", "next")
        joined = False
        for side in order:
            if side == "next" and nxt is not None and not crosses(cur, nxt):
                size = measure(cur[0], nxt[1])
                if size <= max_size:
                    # The joined span is looked at again on the next step: it may still be small.
                    items[i + 1] = [cur[0], nxt[1]]
                    sizes[i + 1] = size
                    joined = True
                    break
            if side == "prev" and prev is not None and not crosses(prev, cur):
                size = measure(prev[0], cur[1])
                if size <= max_size:
                    prev[1] = cur[1]
                    out_sizes[-1] = size
                    # The previous span may have been undersized; it may be large enough now.
                    small[-1] = size < min_size
                    joined = True
                    break
        if not joined:
            out.append(cur)
            out_sizes.append(sizes[i])
            small.append(True)
    return [(s, e, flag) for (s, e), flag in zip(out, small)]
