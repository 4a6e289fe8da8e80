"""Fixed-size character windows that end at whitespace."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator

from beam_chunking.strategies.base import SectionChunker, Span, require_overlap, require_positive
from beam_chunking.text.spans import safe_cut, skip_space, trim_end, word_start

# Greedy ".*\s" backtracks from the window's end to its last whitespace, in C.
_LAST_SPACE = re.compile(r".*\s", re.DOTALL)


@dataclass(frozen=True)
class FixedSizeChunker(SectionChunker):
    """Windows of at most ``max_chunk_size`` characters, cut at the nearest whitespace.

    Each window starts at a word and is cut at the last whitespace before the limit (walking
    back from it); a hard cut happens only when the window holds no whitespace beyond the
    previous chunk, and even then never inside a grapheme cluster or a CRLF pair. The next
    window starts ``overlap`` characters before the previous end, moved forward to a word
    start. ``max_chunk_size`` is a hard ceiling **with the overlap included**.

    Args:
        max_chunk_size: Ceiling per chunk, in characters (code points). Default 512.
        overlap: Characters shared with the previous chunk, at most. Default 50.
        min_chunk_size: Smallest chunk kept alone, in characters: a shorter one (a section's
            tail, a heading line) joins a neighbour, or is rebalanced with it, when the
            result fits ``max_chunk_size``; else it is kept with ``undersized=True``. At
            most a quarter of ``max_chunk_size`` applies; 0 turns it off. Default 64.

    Example:
        >>> [c.text for c in FixedSizeChunker(max_chunk_size=10, overlap=0).chunk("alpha beta gamma")]
        ['alpha beta', 'gamma']
    """

    name = "fixed"
    max_chunk_size: int = 512
    overlap: int = 50
    min_chunk_size: int = 64

    def __post_init__(self) -> None:
        require_positive("FixedSizeChunker", "max_chunk_size", self.max_chunk_size)
        require_overlap("FixedSizeChunker", "max_chunk_size", self.max_chunk_size, "overlap", self.overlap)
        require_positive("FixedSizeChunker", "min_chunk_size", self.min_chunk_size, minimum=0)

    def section_spans(self, text: str, start: int, end: int) -> Iterator[Span]:
        """Yield the windows of ``text[start:end]`` as ``(start, end, None)``."""
        size = self.max_chunk_size
        pos = skip_space(text, start, end)
        prev_end = pos
        while pos < end:
            cut = self._cut(text, pos, end, prev_end)
            if cut is None and pos < prev_end:
                # The overlap left no whitespace beyond the previous chunk: drop it.
                pos = skip_space(text, prev_end, end)
                continue
            if cut is None:
                cut = safe_cut(text, pos + size, pos)
            chunk_end = trim_end(text, pos, cut)
            yield pos, chunk_end, None
            nxt = skip_space(text, cut, end)
            if nxt >= end:
                return
            if self.overlap:
                lo = max(pos + 1, chunk_end - self.overlap)
                w = word_start(text, lo, chunk_end)
                if w > 0:
                    nxt = w
            pos, prev_end = nxt, chunk_end

    def _cut(self, text: str, pos: int, end: int, prev_end: int):
        """Return where the window at ``pos`` ends, or ``None`` when it needs a hard cut."""
        limit = pos + self.max_chunk_size
        if limit >= end or skip_space(text, limit, end) >= end:
            return end
        lo = max(pos + 1, prev_end + 1)
        if lo > limit:
            return None
        m = _LAST_SPACE.match(text, lo, limit + 1)
        return m.end() - 1 if m else None
