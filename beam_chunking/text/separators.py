"""Recursive separator splitting: the content spans behind :class:`RecursiveChunker`.

A range that fits the ceiling is one span. Otherwise it is split on the first separator and
consecutive parts are packed greedily; a part still too large recurses with the next
separator, and ``""`` (or running out of separators) means a hard cut that splits no
grapheme. Each later span may then start up to ``overlap`` characters earlier, at a word
start, without breaking the ceiling. See :class:`~beam_chunking.strategies.recursive.RecursiveChunker`
for the rules as a user sees them.

:func:`separator_spans` runs a C implementation when the package was installed with it
(``NATIVE`` is then ``True``) and :func:`python_separator_spans` otherwise; the two give the
same spans, which the tests check on adversarial text. The C code calls back into
:func:`~beam_chunking.text.spans.safe_cut` and :func:`unaligned_overlap` for hard cuts and
overlaps in text without spaces, so grapheme rules are defined once.

Example:
    >>> separator_spans("One. Two. Three.", 0, 16, (". ", " ", ""), 10, 0)
    [(0, 9, None), (10, 16, None)]
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from beam_chunking.text.spans import NONSPACE, WORD_START, safe_cut, safe_cut_forward, trim_end

try:
    from beam_chunking.text import _separators as _native
except ImportError:  # built without a C compiler: the pure-Python implementation serves
    _native = None

#: Whether :func:`separator_spans` runs the C implementation.
NATIVE = _native is not None

# Larger sizes than this go to the Python implementation (C offsets are 64-bit at most).
_NATIVE_MAX_SIZE = 2 ** 62

#: ``(start, end, None)``: a span as strategies return it (character sizes carry no count).
Span = Tuple[int, int, Optional[int]]


def separator_spans(text: str, start: int, end: int, separators: Sequence[str], max_size: int,
                    overlap: int) -> List[Span]:
    """Return the spans of ``text[start:end]`` cut at separators, overlap included.

    Args:
        text: The document text; offsets refer to it.
        start: First character of the range.
        end: One past its last character.
        separators: From coarsest to finest; ``""`` is a hard cut.
        max_size: The ceiling per span, in characters, overlap included (at least 1).
        overlap: Characters a span may take from the one before it (``0 <= overlap <
            max_size``).

    Returns:
        ``(start, end, None)`` spans in order, each trimmed of surrounding whitespace.
    """
    if _native is not None and max_size < _NATIVE_MAX_SIZE:
        return _native.separator_spans(text, start, end, tuple(separators), max_size, overlap, safe_cut,
                                       unaligned_overlap)
    return python_separator_spans(text, start, end, separators, max_size, overlap)


def python_separator_spans(text: str, start: int, end: int, separators: Sequence[str], max_size: int,
                           overlap: int) -> List[Span]:
    """:func:`separator_spans` in Python: the reference the C implementation must equal."""
    content: List[Tuple[int, int]] = []
    _split(text, start, end, tuple(separators), 0, max_size, overlap, content)
    if not overlap or len(content) < 2:
        return [(s, e, None) for s, e in content]
    find_word = WORD_START.search
    out: List[Span] = [(content[0][0], content[0][1], None)]
    for (ps, _), (s, e) in zip(content, content[1:]):
        # Overlap: up to `overlap` characters before the content, as the ceiling allows.
        room = min(overlap, max_size - (e - s))
        lo = max(s - room, ps + 1)
        if room <= 0 or lo >= s:
            out.append((s, e, None))
            continue
        m = find_word(text, lo, s)
        out.append((m.start() if m else unaligned_overlap(text, lo, s), e, None))
    return out


def unaligned_overlap(text: str, lo: int, s: int) -> int:
    """Where an overlap over ``[lo, s)`` starts when no word starts there.

    Text without spaces (CJK, identifiers) overlaps from the first grapheme boundary at or
    after ``lo``; otherwise only part of a word would fit, and there is no overlap (``s``).
    """
    if not any(ch.isspace() for ch in text[lo:s]):
        return safe_cut_forward(text, lo, s)
    return s


def _split(text: str, s: int, e: int, seps: Tuple[str, ...], level: int, max_size: int, overlap: int,
           out: List[Tuple[int, int]]) -> None:
    sep = seps[level] if level < len(seps) else ""
    n_sep, keep = len(sep), len(sep.rstrip())
    # The first span of a range gets no overlap, so it may use the full ceiling.
    later = max_size - overlap
    search = NONSPACE.search
    e = trim_end(text, s, e)  # once, so that "the rest fits" is one comparison per span
    while True:
        m = search(text, s, e)
        if m is None:
            return
        s = m.start()
        limit = s + (later if out else max_size)
        if limit >= e:  # the rest fits
            out.append((s, e))
            return
        if not n_sep:
            cut = safe_cut(text, limit, s)
            out.append((s, trim_end(text, s, cut)))
            s = cut
            continue
        # Furthest separator whose trimmed span still fits: greedy packing of siblings.
        idx = text.rfind(sep, s, min(e, limit - keep + n_sep))
        if idx >= 0:
            # sep.rstrip() ends in non-whitespace, so the trimmed end is known without a walk.
            out.append((s, idx + keep if keep else trim_end(text, s, idx)))
            s = idx + n_sep
            continue
        # The first part at this level is too large: recurse into it alone.
        nxt = text.find(sep, s, e)
        part_end = e if nxt < 0 else nxt + n_sep
        _split(text, s, part_end, seps, level + 1, max_size, overlap, out)
        s = part_end
