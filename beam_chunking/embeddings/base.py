"""The two embedder protocols the strategies and the embedding stage rely on."""
from __future__ import annotations

from typing import Protocol, Sequence, Tuple, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Embeds texts as L2-normalised ``float32`` vectors of shape ``[n, dimension]``."""

    name: str

    @property
    def dimension(self) -> int:  # pragma: no cover - protocol
        """Vector dimension."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:  # pragma: no cover - protocol
        """Return ``float32 [len(texts), dimension]``, each row of unit length."""


@runtime_checkable
class TokenEmbedder(Protocol):
    """Embeds one text token by token (for late chunking)."""

    def embed_tokens(self, text: str) -> Tuple[np.ndarray, np.ndarray]:  # pragma: no cover - protocol
        """Return ``(vectors float32 [n_tokens, d], offsets int64 [n_tokens, 2])``.

        Offsets are ``str`` code-point spans of ``text`` (special tokens excluded), in order.
        """


def embedder_label(embedder: object) -> str:
    """What a vector's ``embedding_model`` metadata records: the embedder's ``identity``
    (its name plus the options that change its vectors) when it has one, else its ``name``,
    else its class name. Vectors are reused only under the same label."""
    return getattr(embedder, "identity", None) or getattr(embedder, "name", None) or type(embedder).__name__


def normalize(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero), as ``float32``."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)


def embed_batches(embedder: Embedder, texts: Sequence[str], batch_size: int, dimension: int = 1) -> np.ndarray:
    """Embed ``texts`` in calls of at most ``batch_size`` texts; one row per text, in order.

    Args:
        embedder: Anything with ``embed(texts) -> (n, d) array``.
        texts: The texts.
        batch_size: Texts per call, at least 1.
        dimension: Columns of the empty result when there is no text. Default 1.
    """
    parts = [embedder.embed(list(texts[k:k + batch_size])) for k in range(0, len(texts), batch_size)]
    return np.concatenate(parts) if parts else np.zeros((0, dimension), dtype=np.float32)
