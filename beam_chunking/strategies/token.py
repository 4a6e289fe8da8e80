"""Token windows with a tiktoken encoding: the sliding-window baseline."""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Tuple

from beam_chunking.errors import ConfigError
from beam_chunking.sizing import TiktokenSizer
from beam_chunking.strategies._token_windows import token_windows
from beam_chunking.strategies.base import SectionChunker, Span, require_positive

#: A window below this cannot always be honoured: one code point can take four cl100k tokens.
MIN_WINDOW_TOKENS = 4


@dataclass(frozen=True)
class TokenChunker(SectionChunker):
    """Fixed windows of tokens with token overlap, exact in characters.

    The window and overlap fall back, one property at a time, to ``max_chunk_size`` and
    ``overlap`` read as tokens (the seed's rule). ``overlap >= window`` fails at construction
    when both are given explicitly; when the fallback causes it, it fails at chunk time with a
    message naming both values and where each came from.

    Windows are cut on character boundaries (never inside a multi-byte character, never an
    empty chunk) and never exceed the window **counted on the chunk's own text tokenized
    alone**, which is what an embedding model will see. Chunks after the first may start with
    the space that begins their first word (tiktoken attaches it to the word).

    Args:
        model: Model whose tokenizer to use. Default ``"gpt-4"`` (``cl100k_base``, bundled).
        encoding: Encoding name; wins over ``model``. Default ``None``.
        window_tokens: Tokens per window; ``None`` falls back to ``max_chunk_size``.
        overlap_tokens: Tokens shared by neighbours; ``None`` falls back to ``overlap``.
        max_chunk_size: Fallback window, in tokens. Default 512.
        overlap: Fallback overlap, in tokens. Default 50.

    Example:
        >>> chunks = TokenChunker(window_tokens=8, overlap_tokens=2).chunk("one two three " * 10)
        >>> max(c.token_count for c in chunks) <= 8
        True
    """

    name = "token"
    model: Optional[str] = "gpt-4"
    encoding: Optional[str] = None
    window_tokens: Optional[int] = None
    overlap_tokens: Optional[int] = None
    max_chunk_size: int = 512
    overlap: int = 50

    def __post_init__(self) -> None:
        require_positive("TokenChunker", "max_chunk_size", self.max_chunk_size)
        require_positive("TokenChunker", "overlap", self.overlap, minimum=0)
        if self.window_tokens is not None:
            require_positive("TokenChunker", "window_tokens", self.window_tokens, minimum=MIN_WINDOW_TOKENS)
        if self.overlap_tokens is not None:
            require_positive("TokenChunker", "overlap_tokens", self.overlap_tokens, minimum=0)
        if self.window_tokens is not None and self.overlap_tokens is not None:
            if self.overlap_tokens >= self.window_tokens:
                raise ConfigError(
                    f"TokenChunker.overlap_tokens={self.overlap_tokens} must be smaller than "
                    f"TokenChunker.window_tokens={self.window_tokens}",
                    field="overlap_tokens",
                )
        # Resolve (and load, offline) now; chunking then looks the encoding up by name.
        object.__setattr__(self, "_sizer", TiktokenSizer(encoding=self.encoding, model=self.model))

    @property
    def sizer(self) -> TiktokenSizer:
        """The tokenizer this strategy counts with (resolved once, at construction)."""
        return self._sizer

    def effective(self) -> Tuple[int, int]:
        """Return ``(window, overlap)`` in tokens after the per-property fallback.

        Raises:
            ConfigError: the effective overlap is not smaller than the effective window, or
                the effective window is below 4 tokens; the message says where each came from.
        """
        window = self.window_tokens if self.window_tokens is not None else self.max_chunk_size
        overlap = self.overlap_tokens if self.overlap_tokens is not None else self.overlap
        w_src = "window_tokens" if self.window_tokens is not None else "max_chunk_size (fallback)"
        o_src = "overlap_tokens" if self.overlap_tokens is not None else "overlap (fallback)"
        if window < MIN_WINDOW_TOKENS:
            raise ConfigError(
                f"TokenChunker: effective window {window} from {w_src} is below {MIN_WINDOW_TOKENS} "
                "tokens; one character can take 4 tokens"
            )
        if overlap >= window:
            raise ConfigError(
                f"TokenChunker: effective overlap {overlap} (from {o_src}) is not smaller than the "
                f"effective window {window} (from {w_src}); set overlap_tokens explicitly"
            )
        return window, overlap

    def section_spans(self, text: str, start: int, end: int) -> List[Span]:
        """Return token windows of ``text[start:end]`` as ``(start, end, token_count)``."""
        window, overlap = self.effective()
        return token_windows(self.sizer.tiktoken_encoding, text, start, end, window, overlap)
