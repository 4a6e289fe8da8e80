"""HostedEmbedder: an embedding model behind the OpenAI-compatible ``/v1/embeddings`` protocol.

OpenAI, Azure OpenAI, vLLM, Ollama, Hugging Face TEI, LiteLLM and most gateways speak it.
The embedder is a picklable, frozen description (server, model, limits, cache); the HTTP
client is built from it once per worker process
(:func:`~beam_chunking.embeddings.hosted_client.shared_embedding_client`) and shared by the
process's threads. It needs the ``llm`` extra (``openai`` and ``tenacity``).

Spellings accepted wherever an embedder is (the spec's ``embed:``, a strategy's
``embedder``, ``EmbedChunks``): ``"openai:text-embedding-3-small"``, or a mapping
``{provider: openai, model: ..., base_url: ..., dimensions: 512}``.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from beam_chunking.errors import ConfigError

#: Providers known by name; each is a protocol, not a vendor: ``openai`` is the
#: OpenAI-compatible embeddings protocol, whoever serves it.
PROVIDERS = ("openai",)

#: Vector sizes of OpenAI's models, so a job needs no request to learn its dimension.
KNOWN_DIMENSIONS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536}


@dataclass(frozen=True)
class HostedEmbedder:
    """Embeddings from a server, batched, paced, retried and cached.

    What shapes the vectors (``provider``, ``model``, ``base_url``, ``dimensions``,
    ``name``) makes up its identity: equality, and the fingerprints incremental runs compare.
    The other options only say how to call the server, so changing them re-embeds nothing.
    The API key is read from the environment variable ``api_key_env`` when the client is
    built, never stored in the embedder or a spec.

    Args:
        provider: ``"openai"`` (the OpenAI-compatible protocol; the only one).
        model: Model name the server knows. Default ``"text-embedding-3-small"``.
        base_url: Server URL ending in ``/v1``; ``None`` (default) is OpenAI's.
        dimensions: Vector size to ask for (models that can shorten their vectors, such as
            ``text-embedding-3-*``); ``None`` (default) sends none and takes the model's own.
        name: Label recorded with the vectors (``embedding_model`` metadata). Default
            ``"openai:MODEL"``, plus ``":DIMENSIONS"`` when ``dimensions`` is set.
        api_key_env: Environment variable holding the API key. Default ``"OPENAI_API_KEY"``;
            a local server that needs no key works without it.
        tokenizer: Sizer counting each text's tokens for batching and ``tokens_per_minute``
            (``cl100k_base``, ``characters``, ``hf:PATH/tokenizer.json``). Default
            ``"cl100k_base"``, the tokenizer of OpenAI's embedding models.
        max_batch_size: Texts per request, at most. Default 64 (TEI serves at most 32
            unless started with a larger ``--max-client-batch-size``; OpenAI takes 2048).
        max_batch_tokens: Tokens per request, at most (a longer text goes alone). Default
            100000 (OpenAI refuses more than 300000).
        timeout: Seconds one request may take before it is retried. Default 60.
        max_retries: Retries of one request after a 429, a 5xx, a timeout or a connection
            error, with exponential backoff and jitter; other 4xx are never retried. Default 6.
        retry_initial_delay: Seconds before the first retry; doubles each time, capped at
            ``retry_max_delay``, plus up to as much again of random jitter. Default 1.0.
        retry_max_delay: Longest wait between retries, in seconds. Default 60.
        max_concurrency: Requests in flight at once per worker process. Default 4.
        requests_per_minute: Requests started per minute per worker process; ``None``
            (default) sets no rate.
        tokens_per_minute: Tokens (of ``tokenizer``) sent per minute per worker process;
            ``None`` (default) sets no rate.
        cache: Folder or ``gs://`` prefix of the vector cache, ``"default"``
            (``$XDG_CACHE_HOME/beam-chunking/embeddings``, ``~/.cache/...`` when unset), or
            ``None`` for no cache. A vector is keyed by (model, dimensions, text), so a
            re-run, an ``--overwrite`` or an incremental run pays nothing for what it has.

    Example:
        >>> e = HostedEmbedder.of("openai:text-embedding-3-small")
        >>> (e.model, e.name, e.dimension)
        ('text-embedding-3-small', 'openai:text-embedding-3-small', 1536)
    """

    provider: str = "openai"
    model: str = "text-embedding-3-small"
    base_url: Optional[str] = None
    dimensions: Optional[int] = None
    name: Optional[str] = None
    api_key_env: str = field(default="OPENAI_API_KEY", compare=False)
    tokenizer: str = field(default="cl100k_base", compare=False)
    max_batch_size: int = field(default=64, compare=False)
    max_batch_tokens: int = field(default=100_000, compare=False)
    timeout: float = field(default=60.0, compare=False)
    max_retries: int = field(default=6, compare=False)
    retry_initial_delay: float = field(default=1.0, compare=False)
    retry_max_delay: float = field(default=60.0, compare=False)
    max_concurrency: int = field(default=4, compare=False)
    requests_per_minute: Optional[float] = field(default=None, compare=False)
    tokens_per_minute: Optional[float] = field(default=None, compare=False)
    cache: Optional[str] = field(default="default", compare=False)

    def __post_init__(self) -> None:
        if self.provider not in PROVIDERS:
            raise ConfigError(f"embed.provider must be one of {', '.join(PROVIDERS)} (the OpenAI-compatible "
                              f"/v1/embeddings protocol), got {self.provider!r}", field="provider")
        for name in ("model", "api_key_env", "tokenizer"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value:
                raise ConfigError(f"embed.{name} must be a non-empty string, got {value!r}", field=name)
        for name in ("timeout", "retry_initial_delay", "retry_max_delay"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise ConfigError(f"embed.{name} must be a positive number of seconds, got {value!r}", field=name)
        for name, low in (("max_retries", 0), ("max_concurrency", 1), ("max_batch_size", 1), ("max_batch_tokens", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ConfigError(f"embed.{name} must be an integer >= {low}, got {value!r}", field=name)
        dims = self.dimensions
        if dims is not None and (isinstance(dims, bool) or not isinstance(dims, int) or dims < 1):
            raise ConfigError(f"embed.dimensions must be a positive integer or null, got {dims!r}", field="dimensions")
        for name in ("requests_per_minute", "tokens_per_minute"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0):
                raise ConfigError(f"embed.{name} must be a positive number or null, got {value!r}", field=name)
        if self.cache is not None and (not isinstance(self.cache, str) or not self.cache):
            raise ConfigError(f"embed.cache must be a folder, a gs:// prefix, 'default' or null, got {self.cache!r}",
                              field="cache")
        if self.name is None:
            label = f"{self.provider}:{self.model}" + (f":{dims}" if dims else "")
            object.__setattr__(self, "name", label)

    @classmethod
    def of(cls, value: Any) -> "HostedEmbedder":
        """Build one from a ``HostedEmbedder``, ``"openai:MODEL"`` or a mapping of its fields.

        Raises:
            ConfigError: another string, an unknown key (naming the known ones) or a bad value.
        """
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            provider, sep, model = value.partition(":")
            if not sep or provider not in PROVIDERS or not model:
                raise ConfigError(f"embed: expected 'openai:MODEL' for a hosted model, got {value!r}")
            return cls(provider=provider, model=model)
        if not isinstance(value, Mapping):
            raise ConfigError(f"embed: expected 'openai:MODEL' or a mapping of hosted-model options, got {value!r}")
        known = [f.name for f in dataclasses.fields(cls)]
        for key in value:
            if key not in known:
                raise ConfigError(f"embed: unknown option {key!r} of a hosted model (known: {', '.join(known)})",
                                  field=str(key))
        return cls(**dict(value))

    @property
    def cache_location(self) -> Optional[str]:
        """The cache's folder or ``gs://`` prefix, with ``"default"`` resolved; ``None`` if off."""
        from beam_chunking.llm.config import DEFAULT_CACHE, default_cache_folder

        if self.cache is None or self.cache.lower() == "none":
            return None
        return default_cache_folder("embeddings") if self.cache == DEFAULT_CACHE else self.cache

    def options(self) -> tuple:
        """Every field's value, in order: what tells two clients apart (equality does not
        compare the calling options)."""
        return tuple(getattr(self, f.name) for f in dataclasses.fields(self))

    @property
    def client(self):
        """This process's client for this embedder (built on first use)."""
        from beam_chunking.embeddings.hosted_client import shared_embedding_client

        return shared_embedding_client(self)

    def setup(self) -> None:
        """Build the client now (workers call this in ``DoFn.setup``).

        Raises:
            MissingExtra: ``openai`` or ``tenacity`` is missing (the ``llm`` extra).
        """
        _ = self.client

    @property
    def dimension(self) -> int:
        """Vector dimension: ``dimensions`` when set, else the model's known size, else
        learnt from one request (cached like any other vector)."""
        if self.dimensions:
            return self.dimensions
        if self.model in KNOWN_DIMENSIONS and self.provider == "openai" and self.base_url is None:
            return KNOWN_DIMENSIONS[self.model]
        return self.client.dimension()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalised vectors ``float32 [len(texts), dimension]``, from the cache where it
        holds them (an empty text gets a zero vector and no request).

        Raises:
            EmbeddingError: a request failed after its retries, or was refused.
        """
        return self.client.embed(texts).vectors

    def embed_with_usage(self, texts: Sequence[str]):
        """As :meth:`embed`, with what each text cost: an
        :class:`~beam_chunking.embeddings.hosted_client.Embedded`."""
        return self.client.embed(texts)


def with_options(base: Any, options: Mapping[str, Any]) -> Any:
    """A hosted embedder's ``base`` spelling (``None``, ``"openai:MODEL"`` or a mapping) with
    ``options`` laid over it, as a mapping: how ``--embed-OPTION`` flags overlay ``--embed``
    and the spec's ``embed:``.

    Raises:
        ConfigError: ``base`` names a local model (``minilm``, an ONNX mapping), which takes
            no hosted-model options.
    """
    if not options:
        return base
    if base is None:
        mapping: dict = {}
    elif isinstance(base, str) and base.partition(":")[0] in PROVIDERS and ":" in base:
        provider, _, model = base.partition(":")
        mapping = {"provider": provider, "model": model}
    elif isinstance(base, Mapping) and "model_path" not in base:
        mapping = dict(base)
    else:
        flags = ", ".join(f"--embed-{k.replace('_', '-')}" for k in options)
        raise ConfigError(f"{flags}: options of a hosted embedding model, but embed is {base!r}; "
                          "use --embed openai:MODEL")
    return {"provider": "openai", **mapping, **options}
