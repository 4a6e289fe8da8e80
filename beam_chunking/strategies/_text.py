"""Span helpers shared by the strategies: whitespace trimming and safe hard cuts.

All helpers work on ``(text, start, end)`` bounds of the whole document text, so no strategy
copies a section to cut it.
"""
from __future__ import annotations

import re
import unicodedata

NONSPACE = re.compile(r"\S")
WORD_START = re.compile(r"(?<=\s)\S")
# Characters that must stay glued to the character before them.
_JOINERS = {"\u200d", "\u200c", "\u034f"}


def skip_space(text: str, pos: int, end: int) -> int:
    """Return the first non-whitespace position in ``[pos, end)``, or ``end``."""
    m = NONSPACE.search(text, pos, end)
    return m.start() if m else end


def trim_end(text: str, start: int, end: int) -> int:
    """Return ``end`` moved back over trailing whitespace, never below ``start``."""
    while end > start and text[end - 1].isspace():
        end -= 1
    return end


def word_start(text: str, lo: int, hi: int) -> int:
    """Return the first position in ``[lo, hi)`` that starts a word, or ``-1``."""
    m = WORD_START.search(text, lo, hi)
    return m.start() if m else -1


def _glued(text: str, i: int) -> bool:
    """True when a cut before ``text[i]`` would split a grapheme or a CRLF pair."""
    ch = text[i]
    prev = text[i - 1]
    if prev == "\r" and ch == "\n":
        return True
    if ch in _JOINERS or prev in _JOINERS:
        return True
    o = ord(ch)
    if 0xFE00 <= o <= 0xFE0F or 0x1F3FB <= o <= 0x1F3FF or 0xE0020 <= o <= 0xE007F:
        return True
    return unicodedata.category(ch)[0] == "M"


def safe_cut(text: str, cut: int, lo: int) -> int:
    """Move a hard cut back so it splits no grapheme cluster; never below ``lo + 1``.

    When no clean position exists within 32 code points the original cut is kept: a cut
    inside a pathological run of combining marks beats an unbounded chunk.
    """
    c = cut
    floor = max(lo + 1, cut - 32)
    while c > floor and c < len(text) and _glued(text, c):
        c -= 1
    if c < len(text) and c > lo and _glued(text, c):
        return cut
    return c


def safe_cut_forward(text: str, cut: int, hi: int) -> int:
    """Move a cut forward so it splits no grapheme cluster; never above ``hi``."""
    c = cut
    while c < hi and c > 0 and _glued(text, c):
        c += 1
    return c
