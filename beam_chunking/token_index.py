"""A text encoded once with a tiktoken encoding, and exact token counts of any of its spans.

:class:`TokenIndex` maps token boundaries to ``str`` offsets and knows which boundaries are
boundaries of tiktoken's pre-tokenizer pieces: a token that starts with a space and an ASCII
letter always begins a piece, in every OpenAI encoding and in every string that holds that
space and letter. That makes two things cheap:

* a span whose ends sit on such boundaries tokenizes on its own into exactly its slice of
  the document's tokens (no second encode), and
* any span's own token count is the document's tokens between its first and last such
  boundary plus two short encodes of its head and tail (:meth:`TokenIndex.count`).
"""
from __future__ import annotations

import threading
from typing import Dict, Tuple

import numpy as np


_LOCK = threading.Lock()
_TABLES: Dict[str, Tuple[np.ndarray, np.ndarray]] = {}

# Per-token flags.
_GOOD = 1  # starts with b" " + an ASCII letter: always the first token of a pre-tokenizer piece
_SOFT = 2  # starts with ASCII whitespace
_ENDS_WS = 4  # ends with ASCII whitespace, or with a non-ASCII byte (it may end NBSP & co.)
_WS = b" \n\t\r"


def _tables(enc) -> Tuple[np.ndarray, np.ndarray]:
    """Per token id: byte length and flags (built once per encoding and process)."""
    t = _TABLES.get(enc.name)
    if t is not None:
        return t
    with _LOCK:
        t = _TABLES.get(enc.name)
        if t is None:
            n = enc.n_vocab
            lens = np.zeros(n, dtype=np.int64)
            flags = np.zeros(n, dtype=np.uint8)
            for i in range(n):
                try:
                    b = enc.decode_single_token_bytes(i)
                except KeyError:
                    continue
                lens[i] = len(b)
                f = 0
                if b[0] in _WS:
                    f |= _SOFT
                    if len(b) > 1 and b[0] == 32 and (65 <= b[1] <= 90 or 97 <= b[1] <= 122):
                        f |= _GOOD
                if b[-1] in _WS or b[-1] >= 0x80:
                    f |= _ENDS_WS
                flags[i] = f
            t = (lens, flags)
            _TABLES[enc.name] = t
        return t


class TokenIndex:
    """``text[start:end]`` encoded once, with token-boundary to character-offset maps.

    Args:
        enc: A ``tiktoken.Encoding``.
        text: The document text.
        start: First character of the encoded span.
        end: One past its last character.
    """

    def __init__(self, enc, text: str, start: int, end: int):
        self.enc = enc
        piece = text[start:end]
        # encode_to_numpy skips the Python list; with no allowed specials, special-token
        # strings are encoded as the ordinary text they are, as encode_ordinary does.
        ids = enc.encode_to_numpy(piece, allowed_special=set(), disallowed_special=())
        lens, flags = _tables(enc)
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
        # Flags of the token after each boundary, and of the token before it.
        nxt = np.zeros(self.n + 1, dtype=np.uint8)
        nxt[:-1] = flags[ids]
        prev = np.zeros(self.n + 1, dtype=np.uint8)
        prev[1:] = flags[ids]
        self.good = ((nxt & _GOOD) != 0) & char_ok
        # A clean end needs no trimming: its chunk is exactly the slice's tokens.
        self.clean = self.good & ((prev & _ENDS_WS) == 0)
        self.soft = ((nxt & _SOFT) != 0) & char_ok
        self.char_ok = char_ok
        self._clean_idx = None  # built on the first count(): most windows never need it

    def count(self, text: str, cs: int, ce: int) -> int:
        """Tokens of ``text[cs:ce]`` encoded on its own, with at most two short encodes.

        A boundary before a token that starts with a space and a letter begins a piece in
        any string that holds that space and letter, so inside the chunk the tokens between
        the first such clean boundary ``P`` and the last such boundary ``Q`` are exactly the
        document's. Only the head ``[cs, P)`` and the tail ``[Q, ce)`` are encoded; ``P`` is
        clean (no whitespace before it), so the head ends as it does inside the chunk.
        """
        if self._clean_idx is None:
            self._clean_idx = np.flatnonzero(self.clean)
            self._good_idx = np.flatnonzero(self.good)
            self._good_coff = self.coff[self._good_idx]
        a = int(np.searchsorted(self._clean_idx, np.searchsorted(self.coff, cs, side="left")))
        b = int(np.searchsorted(self._good_coff, ce - 1, side="left")) - 1
        if a < len(self._clean_idx) and b >= 0:
            p, q = int(self._clean_idx[a]), int(self._good_idx[b])
            if q >= p and self.coff[p] + 1 < ce:
                cp, cq = int(self.coff[p]), int(self.coff[q])
                head = len(self.enc.encode_ordinary(text[cs:cp])) if cp > cs else 0
                return head + (q - p) + len(self.enc.encode_ordinary(text[cq:ce]))
        return len(self.enc.encode_ordinary(text[cs:ce])) if ce > cs else 0

    def piece_start(self, k: int, char: int) -> bool:
        """True when a chunk starting at ``char`` starts exactly at pre-tokenizer piece boundary ``k``."""
        return int(self.coff[k]) == char and (k == 0 or bool(self.good[k]))

    def piece_end(self, k: int, char: int) -> bool:
        """True when a chunk ending at ``char`` ends exactly at piece boundary ``k``."""
        return int(self.coff[k]) == char and (k == self.n or bool(self.good[k]))

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


