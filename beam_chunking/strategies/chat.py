"""ChatModelChunker: what the strategies that call a chat model share.

Such a strategy holds only a picklable :class:`~beam_chunking.llm.LLMConfig` (or ``None``, the
job's), an instruction and a tokenizer; the client is the worker process's shared one. It
implements :meth:`ChatModelChunker.chunk_with_usage`; the documents-table counters of its
calls come with every outcome.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, List, Tuple, Union

from beam_chunking.errors import ConfigError, LLMError
from beam_chunking.llm import LLMConfig, LLMUsage, Reply, shared_client
from beam_chunking.sizing import TiktokenSizer, tiktoken_sizer
from beam_chunking.strategies.base import Chunker, Outcome
from beam_chunking.types import Chunk, ParsedDocument


@dataclass(frozen=True)
class ChatModelChunker(Chunker):
    """Base of strategies that call a chat model (``proposition``, ``resume``).

    Args:
        llm: The chat model: an :class:`~beam_chunking.llm.LLMConfig` or a mapping of its
            options; ``None`` (default) takes the job's ``llm`` settings (``--llm-model``,
            ``--llm-base-url`` ...) or, outside a job, :class:`LLMConfig` defaults.
        prompt: The instruction sent as the system message; each strategy has its own default.
        tokenizer: tiktoken encoding or model name that sizes are counted with. Default
            ``"cl100k_base"``.
    """

    #: Names the task in the cache key, beside a hash of the prompt.
    task: ClassVar[str] = ""
    llm: Any = None
    prompt: str = ""
    tokenizer: str = "cl100k_base"

    def __post_init__(self) -> None:
        owner = type(self).__name__
        if not isinstance(self.prompt, str) or not self.prompt.strip():
            raise ConfigError(f"{owner}.prompt must be a non-empty string", field="prompt")
        try:
            object.__setattr__(self, "llm", None if self.llm is None else LLMConfig.of(self.llm))
        except ConfigError as exc:
            raise ConfigError(f"{owner}.{exc}", field="llm") from None
        object.__setattr__(self, "_sizer", tiktoken_sizer(self.tokenizer))

    @property
    def sizer(self) -> TiktokenSizer:
        """The tokenizer sizes and token counts use."""
        return self._sizer

    @property
    def llm_config(self) -> LLMConfig:
        """The chat model this strategy calls (``llm``, or the defaults)."""
        return self.llm or LLMConfig()

    @property
    def prompt_version(self) -> str:
        """Names the prompt in the cache key: ``<task>/<12 hex digits of its SHA-256>``, so a
        replaced prompt is never answered from an old prompt's cache."""
        return f"{self.task}/" + hashlib.sha256(self.prompt.encode("utf-8")).hexdigest()[:12]

    @staticmethod
    def answered(reply: Union[Reply, LLMError], usage: LLMUsage,
                 read: Callable[[str], Tuple[Any, str]]) -> Tuple[Any, str]:
        """``read(answer)`` of a reply, ``(value, problem)``, its cost counted in ``usage``;
        ``(None, why)`` for a request that failed."""
        if isinstance(reply, LLMError):
            usage.failed_calls += 1
            return None, str(reply)
        usage.add(reply)
        return read(reply.text)

    def setup(self) -> None:
        """Build the process's chat client (shared by every copy of the strategy)."""
        shared_client(self.llm_config)

    def chunk_with_usage(self, doc: ParsedDocument) -> Tuple[List[Chunk], LLMUsage]:  # pragma: no cover
        """Return the chunks and what the model calls cost."""
        raise NotImplementedError

    def chunk_document(self, doc: ParsedDocument) -> List[Chunk]:
        """Return the chunks of ``doc`` (see :meth:`chunk_with_usage`)."""
        return self.chunk_with_usage(doc)[0]

    def chunk_outcome(self, doc: ParsedDocument) -> Outcome:
        """The chunks, with the model calls' cost as documents-table counters."""
        chunks, usage = self.chunk_with_usage(doc)
        return Outcome(chunks, counts=usage.columns())
