"""Calling a chat model from batch pipelines: an OpenAI-compatible client with a cache.

:class:`LLMConfig` is the picklable description (server, model, limits, cache);
:class:`ChatClient` is built from it once per worker process and shared by its threads.
Strategies that need a model (``proposition``, the ``resume`` template) hold a config and
build the client in ``setup()``.
"""
from beam_chunking.llm.client import ChatClient, LLMError, Reply, shared_client
from beam_chunking.llm.config import DEFAULT_CACHE, LLMConfig
from beam_chunking.llm.usage import LLMUsage

__all__ = ["ChatClient", "DEFAULT_CACHE", "LLMConfig", "LLMError", "LLMUsage", "Reply", "shared_client"]
