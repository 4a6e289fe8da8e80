"""A bound on the pieces a tokenizer must encode whole, checked before a long text is encoded.

A BPE tokenizer first cuts text into pieces (a run of letters, of whitespace, of
punctuation; digits go in threes) and then merges each piece's bytes on its own. The merge
needs memory in proportion to the piece: tiktoken takes about 46 bytes a character (a
20-million-letter piece takes 925 MB and 15 s, where 20 MB of prose takes 14 MB and 1.7 s).
One long piece can therefore abort the whole process. A text whose longest run of one class
is over :data:`MAX_PIECE_CHARS` is refused instead, as the failure of its own document.

The runs are measured per character class (whitespace, letter, digit, anything else), which
bounds every piece from above: a piece holds characters of one class, plus at most a leading
space or sign and trailing line breaks. Digits never make long pieces (they go in threes).

Example:
    >>> check_piece_lengths("word " * 10)
    >>> check_piece_lengths("x" * 30, limit=20)
    Traceback (most recent call last):
    ...
    beam_chunking.errors.TextTooDense: more than 20 letters in a row, from character 0: ...
"""
from __future__ import annotations

import threading
from typing import Optional

import numpy as np

from beam_chunking.errors import TextTooDense

#: Longest run of one character class a tokenizer is given: 4,000,000 characters (about
#: 190 MB and 2 s of tiktoken's time; a 2-million-base genome with no line breaks fits).
#: Longer runs make the document fail.
MAX_PIECE_CHARS = 4_000_000

# Each code point's class.
_WS, _LETTER, _DIGIT, _OTHER = 0, 1, 2, 3
_NAMES = {_WS: "whitespace characters", _LETTER: "letters", _OTHER: "punctuation or symbol characters"}
#: Unicode White_Space (what a tokenizer's ``\s`` matches).
_SPACES = (0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029, 0x202F,
           0x205F, 0x3000)
_BLOCK = 1 << 22  # characters classified per step: 16 MB of code points
_TABLE: Optional[np.ndarray] = None
_LOCK = threading.Lock()


def _table(size: int) -> np.ndarray:
    """Each code point's class, for code points below ``size``."""
    table = np.full(size, _OTHER, dtype=np.uint8)
    for cp in range(size):
        ch = chr(cp)
        if ch.isalpha():
            table[cp] = _LETTER
        elif ch.isnumeric():
            table[cp] = _DIGIT
    table[[cp for cp in _SPACES if cp < size]] = _WS
    return table


_ASCII = _table(128)


def _unicode() -> np.ndarray:
    global _TABLE
    with _LOCK:
        if _TABLE is None:  # 0.4 s, once per process, on the first long text that is not ASCII
            _TABLE = _table(0x110000)
        return _TABLE


def check_piece_lengths(text: str, start: int = 0, end: Optional[int] = None, limit: int = MAX_PIECE_CHARS) -> None:
    """Refuse ``text[start:end]`` when it holds a run of one class longer than ``limit``.

    Costs nothing for spans of at most ``limit`` characters. A longer span is looked at in
    windows of ``limit // 2`` characters: a longer run covers one of them whole, so only a
    window of one class is followed to its run's ends (about 3 ms a million characters).

    Args:
        text: The text.
        start: First character of the span (default 0).
        end: One past its last (default ``None``: the end of the text).
        limit: Longest run allowed, in characters (default :data:`MAX_PIECE_CHARS`).

    Raises:
        TextTooDense: naming the run's class and first character.
    """
    end = len(text) if end is None else end
    if end - start <= limit:
        return
    width = max(1, limit // 2)
    for left in range(start, end - width + 1, width):
        classes = _classified(text, left, left + width)
        kind = int(classes[0])
        if kind == _DIGIT or classes.min() != classes.max():
            continue
        first = _run_edge(text, left, start, kind, -width)
        last = _run_edge(text, left + width, end, kind, width)
        if last - first > limit:
            _refuse(kind, first, limit)


def _classified(text: str, begin: int, end: int) -> np.ndarray:
    piece = text[begin:end]
    if piece.isascii():  # a flag on the string: one byte a character, a quarter of the traffic
        return _ASCII.take(np.frombuffer(piece.encode("ascii"), dtype=np.uint8))
    return _unicode().take(np.frombuffer(piece.encode("utf-32-le", "surrogatepass"), dtype=np.uint32))


def _run_edge(text: str, at: int, bound: int, kind: int, step: int) -> int:
    """Where the run of ``kind`` through ``at`` ends, walking by ``step`` (negative: left) up to ``bound``."""
    while at != bound:
        begin, end = (max(bound, at + step), at) if step < 0 else (at, min(bound, at + step))
        other = np.flatnonzero(_classified(text, begin, end) != kind)
        if len(other):
            return begin + int(other[-1]) + 1 if step < 0 else begin + int(other[0])
        at = begin if step < 0 else end
    return at


def _refuse(kind: int, begin: int, limit: int) -> None:
    raise TextTooDense(
        f"more than {limit:,} {_NAMES[kind]} in a row, from character {begin:,}: "
        "a tokenizer encodes such a run whole, in memory that grows with it, so it is not counted in tokens. "
        "Break the run up, or chunk this document with a strategy sized in characters (--strategy recursive)"
    )
