"""LLMConfig: which chat server and model to call, how hard, and where answers are cached."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from beam_chunking.errors import ConfigError

#: Where answers are cached unless ``cache`` says otherwise: ``$XDG_CACHE_HOME/beam-chunking/llm``
#: (``~/.cache/beam-chunking/llm`` when ``XDG_CACHE_HOME`` is unset).
DEFAULT_CACHE = "default"


def default_cache_folder(kind: str = "llm") -> str:
    """The folder :data:`DEFAULT_CACHE` stands for on this machine, for ``kind`` of answers:
    ``"llm"`` (chat answers, the default) or ``"embeddings"`` (vectors)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "beam-chunking", kind)


@dataclass(frozen=True)
class LLMConfig:
    """A chat model behind the OpenAI-compatible chat-completions protocol.

    OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp's server and most gateways speak it. The
    API key is read from the environment variable ``api_key_env`` when the client is built,
    never stored in the config or a spec file.

    Args:
        model: Model name the server knows. Default ``"gpt-4o-mini"``.
        base_url: Server URL ending in ``/v1``; ``None`` (default) is OpenAI's.
        api_key_env: Environment variable holding the API key. Default ``"OPENAI_API_KEY"``;
            a local server that needs no key works without it.
        temperature: Sampling temperature. Default 0.0 (the most repeatable answers).
        timeout: Seconds one request may take before it is retried. Default 120.
        max_retries: Retries of one request after a 429, a 5xx, a timeout or a connection
            error, with exponential backoff and jitter; other 4xx are never retried. Default 6.
        retry_initial_delay: Seconds before the first retry; doubles each time, capped at
            ``retry_max_delay``, plus up to as much again of random jitter. Default 1.0.
        retry_max_delay: Longest wait between retries, in seconds. Default 60.
        max_concurrency: Requests in flight at once per worker process. Default 4.
        requests_per_minute: Requests started per minute per worker process; ``None``
            (default) sets no rate.
        max_output_tokens: ``max_tokens`` of each request. Default 4096.
        json_mode: Ask for a JSON object (``response_format``) where the server supports it;
            a server that refuses it is asked again without, and answers are parsed
            tolerantly either way. Default ``True``.
        cache: Folder or ``gs://`` prefix of the answer cache, ``"default"`` (see
            :data:`DEFAULT_CACHE`), or ``None`` for no cache. An answer is keyed by (model,
            prompt version, input text), so a re-run pays nothing for what was answered.
    """

    model: str = "gpt-4o-mini"
    base_url: Optional[str] = None
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 0.0
    timeout: float = 120.0
    max_retries: int = 6
    retry_initial_delay: float = 1.0
    retry_max_delay: float = 60.0
    max_concurrency: int = 4
    requests_per_minute: Optional[float] = None
    max_output_tokens: int = 4096
    json_mode: bool = True
    cache: Optional[str] = DEFAULT_CACHE

    def __post_init__(self) -> None:
        if not isinstance(self.model, str) or not self.model:
            raise ConfigError(f"llm.model must be a non-empty string, got {self.model!r}", field="model")
        for name in ("timeout", "retry_initial_delay", "retry_max_delay"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise ConfigError(f"llm.{name} must be a positive number of seconds, got {value!r}", field=name)
        for name, low in (("max_retries", 0), ("max_concurrency", 1), ("max_output_tokens", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ConfigError(f"llm.{name} must be an integer >= {low}, got {value!r}", field=name)
        rpm = self.requests_per_minute
        if rpm is not None and (isinstance(rpm, bool) or not isinstance(rpm, (int, float)) or rpm <= 0):
            raise ConfigError(f"llm.requests_per_minute must be a positive number or null, got {rpm!r}",
                              field="requests_per_minute")
        if isinstance(self.temperature, bool) or not isinstance(self.temperature, (int, float)):
            raise ConfigError(f"llm.temperature must be a number, got {self.temperature!r}", field="temperature")
        if self.cache is not None and (not isinstance(self.cache, str) or not self.cache):
            raise ConfigError(f"llm.cache must be a folder, a gs:// prefix, 'default' or null, got {self.cache!r}",
                              field="cache")

    @property
    def cache_location(self) -> Optional[str]:
        """The cache's folder or ``gs://`` prefix, with ``"default"`` resolved; ``None`` if off."""
        if self.cache is None or self.cache.lower() == "none":
            return None
        return default_cache_folder() if self.cache == DEFAULT_CACHE else self.cache

    @classmethod
    def of(cls, value: Any) -> "LLMConfig":
        """Build a config from an ``LLMConfig``, a mapping of its fields, or ``None`` (defaults).

        Raises:
            ConfigError: an unknown key, naming the known ones.
        """
        if isinstance(value, cls):
            return value
        if value is None:
            return cls()
        if not isinstance(value, Mapping):
            raise ConfigError(f"llm: expected a mapping of client options, got {value!r}")
        known = cls.__dataclass_fields__
        for key in value:
            if key not in known:
                raise ConfigError(f"llm: unknown option {key!r} (known: {', '.join(known)})", field=str(key))
        return cls(**dict(value))
