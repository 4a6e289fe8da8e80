"""Recursive separator splitting with greedy packing: the default strategy."""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Tuple

from beam_chunking.errors import ConfigError
from beam_chunking.strategies.base import SectionChunker, Span, require_overlap, require_positive
from beam_chunking.text.separators import separator_spans

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
        return separator_spans(text, start, end, self.separators, self.max_chunk_size, self.overlap)
