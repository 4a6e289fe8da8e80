"""Turning an ``embedder`` option into an embedder object, for strategies, refiners and the embed stage.

One function accepts every spelling the Python API, the CLI and the YAML spec allow, so a
strategy's ``embedder`` field, ``SemanticRefiner(embedder=...)``, ``EmbedChunks(embedder)``
and the spec's ``embed:`` key resolve the same way. Models are imported lazily: resolving
``"minilm"`` locates the packaged files but loads no session until the embedder is used.

Example:
    >>> class Fake:
    ...     def embed(self, texts): ...
    >>> fake = Fake()
    >>> resolve_embedder(fake, "SemanticChunker") is fake
    True
"""
from __future__ import annotations

from typing import Any

from beam_chunking.embeddings.hosted import PROVIDERS, HostedEmbedder
from beam_chunking.errors import ConfigError

#: The name of the packaged default model.
DEFAULT_EMBEDDER = "minilm"


def resolve_embedder(value: Any, owner: str) -> Any:
    """Return the embedder that ``value`` names.

    Args:
        value: ``None`` or ``"minilm"`` (the packaged default, from the ``minilm`` extra),
            a mapping of :class:`~beam_chunking.embeddings.onnx.OnnxEmbedder` options,
            ``"openai:MODEL"`` or a mapping with ``provider: openai`` (a
            :class:`~beam_chunking.embeddings.hosted.HostedEmbedder`), or an object with
            ``embed(texts)`` or ``embed_tokens(text)``, returned as it is.
        owner: Who asks (``"SemanticChunker"``, ``"embed"`` ...); named in the error.

    Raises:
        ConfigError: ``value`` is none of these (the message names ``owner.embedder``), or a
            mapping with an unknown option (the message lists the known ones).
        MissingExtra: ``"minilm"`` without the ``minilm`` extra installed.
    """
    if value is None or value == DEFAULT_EMBEDDER:
        from beam_chunking.embeddings.minilm import minilm

        return minilm()
    if (isinstance(value, str) and value.partition(":")[0] in PROVIDERS) or (isinstance(value, dict)
                                                                             and "provider" in value):
        return HostedEmbedder.of(value)
    if isinstance(value, dict):
        from beam_chunking.embeddings.onnx import OnnxEmbedder

        return OnnxEmbedder.of(value)
    if hasattr(value, "embed") or hasattr(value, "embed_tokens"):
        return value
    raise ConfigError(f"{owner}.embedder must be 'minilm', 'openai:MODEL', a mapping of OnnxEmbedder options or "
                      f"of hosted-model options (provider: openai), or an embedder, got {value!r}", field="embedder")
