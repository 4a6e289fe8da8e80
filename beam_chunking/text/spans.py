"""Span helpers: whitespace trimming, line starts and hard cuts that split no grapheme.

Every helper works on ``(text, start, end)`` bounds of the whole document text, so no
caller copies a section to cut it. Offsets are Python ``str`` code points; ``end`` is one
past the last character, as in a slice.

Example:
    >>> text = "  two words \\n"
    >>> trim_span(text, 0, len(text))
    (2, 11)
"""
from __future__ import annotations

import re
import unicodedata
from typing import List, Tuple

#: The first non-whitespace character of a range.
NONSPACE = re.compile(r"\S")
#: A non-whitespace character right after whitespace: the start of a word.
WORD_START = re.compile(r"(?<=\s)\S")
#: Line breaks as ``line_starts`` counts them by default: ``\r\n``, ``\r`` and ``\n``.
NEWLINES = re.compile(r"\r\n|\r|\n")
#: Every line break ``str.splitlines`` knows (adds ``\v``, ``\f``, ``\x1c-\x1e``, NEL, LS, PS).
ALL_NEWLINES = re.compile(r"\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
# Characters that must stay glued to the character before them.
_JOINERS = {"\u200d", "\u200c", "\u034f"}
#: A hard cut looks back at most this many code points for a grapheme boundary.
MAX_CUT_BACKOFF = 32


def skip_space(text: str, pos: int, end: int) -> int:
    """Return the first non-whitespace position in ``[pos, end)``, or ``end`` when none."""
    if pos < end and not text[pos].isspace():  # the common case, without a regex search
        return pos  # (``str.isspace`` and ``re``'s ``\s`` agree on every character)
    m = NONSPACE.search(text, pos, end)
    return m.start() if m else end


def trim_end(text: str, start: int, end: int) -> int:
    """Return ``end`` moved back over trailing whitespace, never below ``start``."""
    while end > start and text[end - 1].isspace():
        end -= 1
    return end


def trim_span(text: str, start: int, end: int) -> Tuple[int, int]:
    """Return ``[start, end)`` without its leading and trailing whitespace.

    An all-whitespace range gives an empty span ``(end, end)``.
    """
    start = skip_space(text, start, end)
    return start, trim_end(text, start, end)


def word_start(text: str, lo: int, hi: int) -> int:
    """Return the first position in ``[lo, hi)`` that starts a word, or ``-1`` when none."""
    m = WORD_START.search(text, lo, hi)
    return m.start() if m else -1


def line_starts(text: str, start: int, end: int, newlines: "re.Pattern[str]" = NEWLINES) -> List[int]:
    """Return the line offsets of ``text[start:end]``: ``[start, ..., end]``.

    The list holds each line's first offset and ends with ``end``, so line ``k`` is
    ``text[lines[k]:lines[k + 1]]`` (line break included). A break at the very end starts
    no empty line.

    Args:
        text: The document text.
        start: First character of the range.
        end: One past its last character.
        newlines: What counts as a line break. Default :data:`NEWLINES` (``\\r\\n``, ``\\r``,
            ``\\n``).
    """
    out = [start]
    for m in newlines.finditer(text, start, end):
        if m.end() < end:
            out.append(m.end())
    out.append(end)
    return out


def _glued(text: str, i: int) -> bool:
    """True when a cut before ``text[i]`` would split a grapheme cluster or a CRLF pair."""
    ch = text[i]
    prev = text[i - 1]
    if prev == "\r" and ch == "\n":
        return True
    if ch in _JOINERS or prev in _JOINERS:
        return True
    o = ord(ch)
    # Variation selectors, skin-tone modifiers and tag characters attach to what precedes.
    if 0xFE00 <= o <= 0xFE0F or 0x1F3FB <= o <= 0x1F3FF or 0xE0020 <= o <= 0xE007F:
        return True
    return unicodedata.category(ch)[0] == "M"


def safe_cut(text: str, cut: int, lo: int) -> int:
    """Move a hard cut back so it splits no grapheme cluster; never below ``lo + 1``.

    When no clean position exists within :data:`MAX_CUT_BACKOFF` (32) code points the
    original cut is kept: a cut inside a pathological run of combining marks beats an
    unbounded chunk.

    Args:
        text: The document text.
        cut: The wanted cut (a code-point offset).
        lo: Start of the chunk being cut; the cut stays above it.
    """
    c = cut
    floor = max(lo + 1, cut - MAX_CUT_BACKOFF)
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
