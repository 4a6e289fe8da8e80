"""Token windows in a tiktoken encoding or an embedding model's own tokens: the sliding-window baseline."""
from __future__ import annotations

from dataclasses import dataclass
from typing import List

from beam_chunking.errors import ConfigError
from beam_chunking.sizing import Sizer, strategy_sizer
from beam_chunking.strategies.base import SectionChunker, Span, require_overlap, require_positive

#: A window below this cannot always be honoured: one code point can take four cl100k tokens.
MIN_WINDOW_TOKENS = 4


def token_sizer(owner: str, tokenizer: str, max_chunk_size: int) -> Sizer:
    """The sizer ``tokenizer`` names, checked against ``max_chunk_size``.

    A model's special tokens (``[CLS]``, ``[SEP]``) count against every chunk, so the ceiling
    must leave room for them and for one code point (four tokens).

    Raises:
        ConfigError: an unknown tokenizer, or a ceiling that leaves no room for text.
    """
    sizer = strategy_sizer(tokenizer)
    if max_chunk_size < MIN_WINDOW_TOKENS + sizer.specials:
        raise ConfigError(f"{owner}.max_chunk_size={max_chunk_size} must be >= {MIN_WINDOW_TOKENS + sizer.specials}: "
                          f"{sizer.name} adds {sizer.specials} special tokens to every chunk", field="max_chunk_size")
    return sizer


@dataclass(frozen=True)
class TokenChunker(SectionChunker):
    """Fixed windows of tokens with token overlap, exact in characters.

    Windows are cut on character boundaries (never inside a multi-byte character, never an
    empty chunk) and never exceed ``max_chunk_size`` **counted on the chunk's own text
    tokenized alone**, which is what an embedding model will see. Chunks after the first may
    start with the space that begins their first word (tiktoken attaches it to the word).
    With an embedding model's tokenizer (``tokenizer="embedder"`` or ``"hf:PATH"``) the count
    includes the special tokens the model adds (MiniLM: ``[CLS]`` and ``[SEP]``), so
    ``max_chunk_size`` equal to the model's ``max_tokens`` means no chunk is ever windowed.

    Args:
        max_chunk_size: Tokens per window, overlap and special tokens included; at least 4
            plus the tokenizer's special tokens (one code point can take four tokens).
            Default 512.
        overlap: Tokens shared by neighbouring windows. Default 50.
        tokenizer: A tiktoken encoding or model name (``"cl100k_base"``, bundled);
            ``"embedder"``: the job's embedding model's own tokenizer (``embed:``); or
            ``"hf:PATH"`` to a ``tokenizer.json``. Default ``"cl100k_base"``.
        min_chunk_size: Smallest chunk kept alone, in tokens: a shorter one (a section's
            tail, a heading line) joins a neighbour, or is rebalanced with it, when the
            result fits ``max_chunk_size``; else it is kept with ``undersized=True``. At
            most a quarter of ``max_chunk_size`` applies; 0 turns it off. Default 32.

    Example:
        >>> chunks = TokenChunker(max_chunk_size=8, overlap=2).chunk("one two three " * 10)
        >>> max(c.token_count for c in chunks) <= 8
        True
    """

    name = "token"
    unit_template = "{tokenizer} tokens"
    max_chunk_size: int = 512
    overlap: int = 50
    tokenizer: str = "cl100k_base"
    min_chunk_size: int = 32

    def __post_init__(self) -> None:
        require_positive("TokenChunker", "max_chunk_size", self.max_chunk_size, minimum=MIN_WINDOW_TOKENS)
        require_overlap("TokenChunker", "max_chunk_size", self.max_chunk_size, "overlap", self.overlap)
        require_positive("TokenChunker", "min_chunk_size", self.min_chunk_size, minimum=0)
        # Resolve (and load, offline) now; chunking then looks the encoding up by name.
        object.__setattr__(self, "_sizer", token_sizer("TokenChunker", self.tokenizer, self.max_chunk_size))

    @property
    def sizer(self) -> Sizer:
        """The tokenizer this strategy counts with (resolved once, at construction)."""
        return self._sizer

    def span_size(self, text: str, start: int, end: int) -> int:
        """Tokens of ``text[start:end]`` encoded on its own (what the ceiling counts)."""
        return self._sizer.count(text[start:end])

    def section_spans(self, text: str, start: int, end: int) -> List[Span]:
        """Return token windows of ``text[start:end]`` as ``(start, end, token_count)``."""
        return self._sizer.windows(text, start, end, self.max_chunk_size, self.overlap)
