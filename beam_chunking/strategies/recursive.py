"""Recursive separator splitting with greedy packing: the default strategy."""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Tuple

from beam_chunking.errors import ConfigError
from beam_chunking.strategies.base import SectionChunker, Span, require_overlap, require_positive
from beam_chunking.text.spans import NONSPACE, WORD_START, safe_cut, safe_cut_forward, trim_end

DEFAULT_SEPARATORS: Tuple[str, ...] = ("\n\n", "\n", ". ", " ", "")


@dataclass(frozen=True)
class RecursiveChunker(SectionChunker):
    """Split on the first separator that helps, pack siblings greedily, recurse on the rest.

    Text that fits is emitted whole (the fit check runs before any split). Otherwise the text
    is split on ``separators[0]`` and consecutive parts are packed greedily towards the size;
    a part that is still too large recurses with the next separator, and its pieces are
    emitted as they are (never joined across separator levels). ``""`` means a hard cut,
    which never splits a grapheme cluster; if the list lacks ``""`` a hard cut still happens
    as the last resort, because the size is a ceiling.

    Unlike splitters that consume separators, the separator stays in the text (a sentence
    keeps its period) and every chunk is the exact span ``text[start:end]``, trimmed of
    surrounding whitespace.

    Overlap: each chunk after the first of its section starts up to ``overlap`` characters
    before its own content, at a word start (or at any grapheme boundary in text without
    spaces). To keep ``max_chunk_size`` a hard ceiling with overlap included, chunks after a
    section's first pack at most ``max_chunk_size - overlap`` new characters.

    Args:
        max_chunk_size: Ceiling per chunk, in characters, overlap included. Default 512.
        overlap: Characters taken from the previous chunk, at most. Default 50.
        separators: Separators from coarsest to finest. Default
            ``("\\n\\n", "\\n", ". ", " ", "")``.
        min_chunk_size: Smallest chunk kept alone, in characters: a shorter one (a section's
            tail, a heading line) joins a neighbour, or is rebalanced with it, when the
            result fits ``max_chunk_size``; else it is kept with ``undersized=True``. At
            most a quarter of ``max_chunk_size`` applies; 0 turns it off. Default 64.

    Example:
        >>> [c.text for c in RecursiveChunker(max_chunk_size=8, overlap=0).chunk("A. B. C")]
        ['A. B. C']
    """

    name = "recursive"
    max_chunk_size: int = 512
    overlap: int = 50
    separators: Tuple[str, ...] = DEFAULT_SEPARATORS
    min_chunk_size: int = 64

    def __post_init__(self) -> None:
        require_positive("RecursiveChunker", "max_chunk_size", self.max_chunk_size)
        require_overlap("RecursiveChunker", "max_chunk_size", self.max_chunk_size, "overlap", self.overlap)
        require_positive("RecursiveChunker", "min_chunk_size", self.min_chunk_size, minimum=0)
        seps = tuple(self.separators)
        if not seps or not all(isinstance(s, str) for s in seps):
            raise ConfigError(f"RecursiveChunker.separators must be a non-empty list of strings, got {self.separators!r}", field="separators")
        object.__setattr__(self, "separators", seps)

    def section_spans(self, text: str, start: int, end: int) -> List[Span]:
        """Return the chunks of ``text[start:end]`` as ``(start, end, None)``."""
        content: List[Tuple[int, int]] = []
        self._split(text, start, end, 0, content)
        if not self.overlap or len(content) < 2:
            return [(s, e, None) for s, e in content]
        size, overlap, find_word = self.max_chunk_size, self.overlap, WORD_START.search
        out: List[Span] = [(content[0][0], content[0][1], None)]
        for (ps, _), (s, e) in zip(content, content[1:]):
            # Overlap: up to `overlap` characters before the content, as the ceiling allows.
            room = min(overlap, size - (e - s))
            lo = max(s - room, ps + 1)
            if room <= 0 or lo >= s:
                out.append((s, e, None))
                continue
            m = find_word(text, lo, s)
            out.append((m.start() if m else self._unaligned_overlap(text, lo, s), e, None))
        return out

    def _split(self, text: str, s: int, e: int, level: int, out: List[Tuple[int, int]]) -> None:
        seps = self.separators
        sep = seps[level] if level < len(seps) else ""
        n_sep, keep = len(sep), len(sep.rstrip())
        # The first chunk of a section gets no overlap, so it may use the full ceiling.
        size, later = self.max_chunk_size, self.max_chunk_size - self.overlap
        search = NONSPACE.search
        e = trim_end(text, s, e)  # once, so that "the rest fits" is one comparison per chunk
        while True:
            m = search(text, s, e)
            if m is None:
                return
            s = m.start()
            limit = s + (later if out else size)
            if limit >= e:  # the rest fits
                out.append((s, e))
                return
            if not n_sep:
                cut = safe_cut(text, limit, s)
                out.append((s, trim_end(text, s, cut)))
                s = cut
                continue
            # Furthest separator whose trimmed chunk still fits: greedy packing of siblings.
            idx = text.rfind(sep, s, min(e, limit - keep + n_sep))
            if idx >= 0:
                # sep.rstrip() ends in non-whitespace, so the trimmed end is known without a walk.
                out.append((s, idx + keep if keep else trim_end(text, s, idx)))
                s = idx + n_sep
                continue
            # The first part at this level is too large: recurse into it alone.
            nxt = text.find(sep, s, e)
            part_end = e if nxt < 0 else nxt + n_sep
            self._split(text, s, part_end, level + 1, out)
            s = part_end

    @staticmethod
    def _unaligned_overlap(text: str, lo: int, s: int) -> int:
        if not any(ch.isspace() for ch in text[lo:s]):
            # No spaces to align on (CJK, identifiers): overlap at a grapheme boundary.
            return safe_cut_forward(text, lo, s)
        return s  # only a partial word fits: no overlap rather than half a word
