"""Token windows over a span of text, exact in characters and bounded in tokens.

Windows end, where they can, on pre-tokenizer piece boundaries (see
:mod:`beam_chunking.token_index`), so most windows' counts are their slice counts; any other
window is counted exactly with :meth:`TokenIndex.count` and shrunk until it fits. The window
is a hard ceiling on each chunk's own token count either way.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

import numpy as np

from beam_chunking.strategies._text import skip_space, trim_end
from beam_chunking.token_index import TokenIndex


def token_windows(enc, text: str, start: int, end: int, window: int, overlap: int,
                  encoded: Optional[TokenIndex] = None) -> List[Tuple[int, int, int]]:
    """Cut ``text[start:end]`` into ``(start, end, token_count)`` windows.

    Every window's text, tokenized on its own, has at most ``window`` tokens; consecutive
    windows share about ``overlap`` tokens; no window is empty or whitespace-only; every
    non-whitespace character lies in some window. Requires ``window >= 4`` (one code point
    can take four tokens) and ``0 <= overlap < window``.

    Args:
        encoded: An encoding of a larger span that contains ``[start, end)`` (a sentence of
            an already encoded section); the span is then not encoded again.
    """
    s = skip_space(text, start, end)
    e = trim_end(text, s, end)
    if s >= e:
        return []
    tk = encoded if encoded is not None else TokenIndex(enc, text, s, e)
    first = int(np.searchsorted(tk.coff, s, side="left"))
    last = int(np.searchsorted(tk.coff, e, side="right")) - 1
    # A span encoded on its own is its own tokenization: its count is its length.
    total = tk.n if encoded is None else tk.count(text, s, e)
    if total <= window:
        return [(s, e, total)]
    if last - first < 2 and encoded is not None:
        return token_windows(enc, text, s, e, window, overlap)  # the span sits inside a token
    out: List[Tuple[int, int, int]] = []
    i, cs, prev_j = first, s, first
    exact_start = tk.piece_start(first, s)
    while True:
        hi = min(i + window, last)
        lo = max(prev_j + 1, i + 1)
        if hi == last and tk.count(text, cs, e) <= window:
            j, ce, exact_end = last, e, tk.piece_end(last, e)
        else:
            # Prefer an end that needs no trimming if it keeps the window at least half full.
            j = tk.last(tk.clean, max(lo, i + window // 2), min(hi, last - 1))
            if j < 0:
                j = tk.last(tk.good, lo, min(hi, last - 1))
            exact_end = j > 0
            if not exact_end:
                j = tk.last(tk.soft, lo, min(hi, last - 1))
            if j < 0:
                j = tk.last(tk.char_ok, lo, min(hi, last - 1))
            if j < 0:
                if i < prev_j:  # the overlap leaves no room for new content: drop it
                    i, cs = prev_j, int(tk.coff[prev_j])
                    exact_start = tk.piece_start(i, cs)
                    continue
                raise AssertionError("no token boundary inside a window")  # pragma: no cover
            ce = int(tk.coff[j])
        count, j, ce_trim = _fit(tk, text, cs, ce, i, j, exact_start and exact_end, window, lo)
        if count > window or j <= prev_j and j != last:
            if i < prev_j:
                i, cs = prev_j, int(tk.coff[prev_j])
                exact_start = tk.piece_start(i, cs)
                continue
            raise AssertionError("token window could not be fitted")  # pragma: no cover
        if ce_trim > cs and skip_space(text, cs, ce_trim) < ce_trim:
            out.append((cs, ce_trim, count))
        if ce_trim >= e or (j == last and ce == e):
            return out
        prev_j = j
        nxt = j
        if overlap:
            g = tk.first(tk.good, max(j - overlap, i + 1), j - 1)
            if g > 0:
                nxt = g
            else:
                c = tk.first(tk.char_ok, max(j - overlap, i + 1), j - 1)
                if c > 0:
                    nxt = c
        i, cs = nxt, int(tk.coff[nxt])
        exact_start = tk.piece_start(i, cs)


def _fit(tk: TokenIndex, text: str, cs: int, ce: int, i: int, j: int, exact: bool, window: int, floor: int):
    """Return ``(own token count, end boundary, trimmed end char)`` for the window ``[cs, ce)``."""
    ce_trim = trim_end(text, cs, ce)
    if exact:
        # Both ends on pre-tokenizer piece boundaries: the slice is the chunk's own tokenization.
        # Trailing whitespace removed at a token boundary removes exactly those tokens (BPE never
        # merged across that boundary). Boundaries inside a multi-byte character share the
        # character's offset, so take the last boundary at that offset, a character boundary.
        k = int(np.searchsorted(tk.coff, ce_trim, side="right")) - 1
        if i < k <= j and int(tk.coff[k]) == ce_trim and tk.char_ok[k]:
            return k - i, j, ce_trim
    count = tk.count(text, cs, ce_trim)
    while count > window:
        j = _shrink(tk, j, count - window, floor)
        if j <= i:
            break
        ce_trim = trim_end(text, cs, int(tk.coff[j]))
        count = tk.count(text, cs, ce_trim)
    return count, j, ce_trim


def _shrink(tk: TokenIndex, j: int, excess: int, floor: int) -> int:
    """Move end boundary ``j`` back by at least ``excess`` tokens to a character boundary."""
    k = j - max(1, excess)
    while k > floor and not tk.char_ok[k]:
        k -= 1
    return k
