"""Token windows over a span of text, exact in characters and bounded in tokens.

The span is encoded once. Windows end at token boundaries that are also boundaries of
tiktoken's pre-tokenizer pieces (the next token starts with a space and an ASCII letter;
such a token always begins a piece in every OpenAI encoding). A chunk whose both ends sit
on such boundaries tokenizes on its own into exactly the tokens of its slice, so its count
is known without encoding it again. Any other cut (text without spaces, CJK, an end
trimmed of whitespace) is verified by encoding the chunk alone and shrunk until it
fits, so the window is a hard ceiling on the chunk's own token count either way.
"""
from __future__ import annotations

import threading
from typing import Dict, List, Tuple

import numpy as np

from beam_chunking.strategies._text import skip_space, trim_end

_LOCK = threading.Lock()
_TABLES: Dict[str, Tuple[np.ndarray, np.ndarray, np.ndarray]] = {}


def _tables(enc) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per token id: byte length; starts with b" " + ASCII letter; starts with whitespace."""
    with _LOCK:
        t = _TABLES.get(enc.name)
        if t is None:
            n = enc.n_vocab
            lens = np.zeros(n, dtype=np.int64)
            good = np.zeros(n, dtype=bool)
            soft = np.zeros(n, dtype=bool)
            for i in range(n):
                try:
                    b = enc.decode_single_token_bytes(i)
                except KeyError:
                    continue
                lens[i] = len(b)
                if b[:1] in (b" ", b"\n", b"\t", b"\r"):
                    soft[i] = True
                    if len(b) > 1 and b[0] == 32 and (65 <= b[1] <= 90 or 97 <= b[1] <= 122):
                        good[i] = True
            t = (lens, good, soft)
            _TABLES[enc.name] = t
        return t


class _Encoded:
    """A span encoded once, with token-boundary → character-offset maps."""

    def __init__(self, enc, text: str, start: int, end: int):
        self.enc = enc
        piece = text[start:end]
        ids = np.asarray(enc.encode_ordinary(piece), dtype=np.int64)
        lens, good, soft = _tables(enc)
        self.n = len(ids)
        boff = np.zeros(self.n + 1, dtype=np.int64)
        np.cumsum(lens[ids], out=boff[1:])
        if piece.isascii():
            coff = boff
            char_ok = np.ones(self.n + 1, dtype=bool)
        else:
            raw = np.frombuffer(piece.encode("utf-8"), dtype=np.uint8)
            is_start = np.empty(len(raw) + 1, dtype=bool)
            is_start[:-1] = (raw & 0xC0) != 0x80
            is_start[-1] = True
            counts = np.zeros(len(raw) + 1, dtype=np.int64)
            np.cumsum(is_start[:-1], out=counts[1:])
            coff = counts[boff]
            char_ok = is_start[boff]
        self.coff = coff + start
        nxt_good = np.zeros(self.n + 1, dtype=bool)
        nxt_good[:-1] = good[ids]
        nxt_soft = np.zeros(self.n + 1, dtype=bool)
        nxt_soft[:-1] = soft[ids]
        self.good = nxt_good & char_ok
        self.soft = nxt_soft & char_ok
        self.char_ok = char_ok

    def last(self, mask: np.ndarray, lo: int, hi: int) -> int:
        """Largest boundary index in ``[lo, hi]`` where ``mask`` holds, or -1."""
        if hi < lo:
            return -1
        hits = np.flatnonzero(mask[lo:hi + 1])
        return int(hits[-1]) + lo if len(hits) else -1

    def first(self, mask: np.ndarray, lo: int, hi: int) -> int:
        """Smallest boundary index in ``[lo, hi]`` where ``mask`` holds, or -1."""
        if hi < lo:
            return -1
        hits = np.flatnonzero(mask[lo:hi + 1])
        return int(hits[0]) + lo if len(hits) else -1


def token_windows(enc, text: str, start: int, end: int, window: int, overlap: int) -> List[Tuple[int, int, int]]:
    """Cut ``text[start:end]`` into ``(start, end, token_count)`` windows.

    Every window's text, tokenized on its own, has at most ``window`` tokens; consecutive
    windows share about ``overlap`` tokens; no window is empty or whitespace-only; every
    non-whitespace character lies in some window. Requires ``window >= 4`` (one code point
    can take four tokens) and ``0 <= overlap < window``.
    """
    s = skip_space(text, start, end)
    e = trim_end(text, s, end)
    if s >= e:
        return []
    tk = _Encoded(enc, text, s, e)
    n = tk.n
    if n <= window:
        return [(s, e, n)]
    out: List[Tuple[int, int, int]] = []
    i, prev_j, exact_start = 0, 0, True
    while True:
        hi = min(i + window, n)
        if hi == n:
            j, exact_end = n, True
        else:
            j = tk.last(tk.good, max(prev_j + 1, i + 1), hi)
            exact_end = j > 0
            if not exact_end:
                j = tk.last(tk.soft, max(prev_j + 1, i + 1), hi)
            if j < 0:
                j = tk.last(tk.char_ok, max(prev_j + 1, i + 1), hi)
            if j < 0 and i < prev_j:
                # The overlap leaves no room for new content: restart without it.
                i, exact_start = prev_j, bool(tk.good[prev_j])
                continue
        cs = int(tk.coff[i])
        count, j, ce_trim = _fit(enc, tk, text, i, j, exact_start and exact_end, window, max(prev_j + 1, i + 1))
        if count > window or j <= prev_j:
            if i < prev_j:
                i, exact_start = prev_j, bool(tk.good[prev_j])
                continue
            raise AssertionError("token window could not be fitted")  # pragma: no cover
        if ce_trim > cs and skip_space(text, cs, ce_trim) < ce_trim:
            out.append((cs, ce_trim, count))
        if j >= n:
            return out
        prev_j = j
        nxt = j
        if overlap:
            lo = max(j - overlap, i + 1)
            g = tk.first(tk.good, lo, j - 1)
            if g > 0:
                nxt, exact_start = g, True
            else:
                c = tk.first(tk.char_ok, lo, j - 1)
                if c > 0:
                    nxt, exact_start = c, False
        if nxt == j:
            exact_start = bool(tk.good[j])
        i = nxt


def _fit(enc, tk: _Encoded, text: str, i: int, j: int, exact: bool, window: int, floor: int):
    """Return ``(own token count, end boundary, trimmed end char)`` for the window ``[i, j)``."""
    cs = int(tk.coff[i])
    ce_trim = trim_end(text, cs, int(tk.coff[j]))
    if exact and ce_trim == int(tk.coff[j]):
        # Both ends on pre-tokenizer piece boundaries: the slice is the chunk's own tokenization.
        # A trimmed end is verified instead (property tests found a case where it differs).
        return j - i, j, ce_trim
    count = len(enc.encode_ordinary(text[cs:ce_trim])) if ce_trim > cs else 0
    while count > window:
        j = _shrink(tk, j, count - window, floor)
        if j <= i:
            break
        ce_trim = trim_end(text, cs, int(tk.coff[j]))
        count = len(enc.encode_ordinary(text[cs:ce_trim])) if ce_trim > cs else 0
    return count, j, ce_trim


def _shrink(tk: _Encoded, j: int, excess: int, floor: int) -> int:
    """Move end boundary ``j`` back by at least ``excess`` tokens to a character boundary."""
    k = j - max(1, excess)
    while k > floor and not tk.char_ok[k]:
        k -= 1
    return k
