"""LLMUsage: what one document's model calls cost, for the documents table."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict


@dataclass
class LLMUsage:
    """Counts of one document's model calls.

    Args:
        calls: Requests answered (by the server or the cache).
        cached_calls: Of those, answered from the cache (they cost nothing).
        failed_calls: Requests that failed after their retries, or were refused.
        prompt_tokens: Prompt tokens the server reported for the calls it answered.
        completion_tokens: Completion tokens the server reported.
        fallbacks: Units (passages, documents) whose answer was unusable, so the source text
            was emitted instead.
    """

    calls: int = 0
    cached_calls: int = 0
    failed_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    fallbacks: int = 0

    def add(self, reply) -> None:
        """Count one :class:`~beam_chunking.llm.client.Reply`."""
        self.calls += 1
        if reply.cached:
            self.cached_calls += 1
        else:
            self.prompt_tokens += reply.prompt_tokens
            self.completion_tokens += reply.completion_tokens

    def columns(self) -> Dict[str, int]:
        """The documents-table columns: ``llm_calls``, ``llm_cached_calls``, ``llm_failed_calls``,
        ``llm_prompt_tokens``, ``llm_completion_tokens``, ``llm_fallbacks``."""
        return {"llm_calls": self.calls, "llm_cached_calls": self.cached_calls, "llm_failed_calls": self.failed_calls,
                "llm_prompt_tokens": self.prompt_tokens, "llm_completion_tokens": self.completion_tokens,
                "llm_fallbacks": self.fallbacks}
