"""Proposition chunking: a chat model rewrites each passage as self-contained single facts.

Costs one model call per passage (``max_passage_tokens`` tokens of the document, packed from
consecutive sections), answered from the cache on a re-run.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

from beam_chunking.llm import LLMUsage, shared_client
from beam_chunking.llm.replies import parse_json, string_items
from beam_chunking.strategies.base import make_chunk, require_positive, section_metadata
from beam_chunking.strategies.chat import ChatModelChunker
from beam_chunking.text.tokens import token_windows
from beam_chunking.types import Chunk, ParsedDocument, Section

_LOG = logging.getLogger(__name__)

#: The default instruction. A replacement gets its own cache entries (the cache key holds a
#: hash of the prompt), so answers to an old prompt are never reused for a new one.
PROPOSITION_PROMPT = (
    "Decompose the user's text into propositions. A proposition is one self-contained fact "
    "stated as a single complete sentence that can be understood without the rest of the text: "
    "replace pronouns and references (he, it, this, the company) with what they stand for, keep "
    "names, numbers and dates exact, keep the text's language, and add nothing the text does not "
    "say. Cover every fact of the text, in order. Answer with a JSON object of the form "
    '{"propositions": ["first proposition", "second proposition"]} and nothing else.'
)
#: A proposition longer than this (characters) is not one fact: the answer is not usable.
MAX_PROPOSITION_CHARS = 2000


@dataclass(frozen=True)
class Passage:
    """A span of the document sent to the model in one call, with its provenance."""

    start: int
    end: int
    tokens: int
    metadata: Dict[str, Any]


def _passage_metadata(doc: ParsedDocument, sections: Sequence[Section]) -> Dict[str, Any]:
    meta = section_metadata(doc, sections[0])
    pages = [s.page for s in sections if s.page is not None]
    if pages:  # a passage over several pages reports their range
        meta["page"], meta["page_end"] = min(pages), max(pages)
    return meta


@dataclass(frozen=True)
class PropositionChunker(ChatModelChunker):
    """Each passage becomes its propositions, one chunk each, at one chat-model call per passage.

    The document's sections are packed in order into passages of at most
    ``max_passage_tokens`` tokens (no overlap; a longer section is cut into token windows),
    and each passage is sent to the chat model in one call that returns a JSON array of
    propositions. Each proposition is a chunk with ``chunk_kind="proposition"``; its text is
    a rewrite (``rewrite=True``) and its ``start``/``end`` are its passage's span, also in
    ``parent_start``/``parent_end``, with the passage's page range. Proposition ``k`` of a
    passage has ordinal ``k`` (ids end in ``#k``).

    When the call fails after its retries, the answer is not JSON, or no usable proposition
    survives (blank, longer than 2,000 characters), the passage itself is emitted
    (``chunk_kind="passage"``) and counted in the documents table's ``llm_fallbacks``.
    Anything else, a cancellation included, propagates.

    Args:
        max_passage_tokens: Tokens per passage, counted with ``tokenizer``; one model call
            each. Default 1000.
        max_propositions_per_passage: Propositions kept per passage; the rest of an answer
            is ignored. Default 50.
        emit_parent_passages: Also emit each passage (``chunk_kind="passage"``, ordinal 0)
            before its propositions, for a second index of passages. Default ``False``.
        tokenizer: tiktoken encoding or model name of ``max_passage_tokens``. Default
            ``"cl100k_base"``.
        llm: The chat model: an :class:`~beam_chunking.llm.LLMConfig` or a mapping of its
            options; ``None`` (default) takes the job's ``llm`` settings (``--llm-model``,
            ``--llm-base-url`` ...) or, outside a job, :class:`LLMConfig` defaults.
        prompt: The instruction sent as the system message. Default
            :data:`PROPOSITION_PROMPT`.

    Example:
        >>> PropositionChunker(max_passage_tokens=500).name
        'proposition'
    """

    name = "proposition"
    task = "proposition"
    unit_template = "{tokenizer} tokens per passage"
    prompt: str = PROPOSITION_PROMPT
    max_passage_tokens: int = 1000
    max_propositions_per_passage: int = 50
    emit_parent_passages: bool = False

    def __post_init__(self) -> None:
        require_positive("PropositionChunker", "max_passage_tokens", self.max_passage_tokens, minimum=16)
        require_positive("PropositionChunker", "max_propositions_per_passage", self.max_propositions_per_passage)
        super().__post_init__()

    def passages(self, doc: ParsedDocument) -> List[Passage]:
        """The document's passages: consecutive sections packed under ``max_passage_tokens``."""
        enc, text, limit = self.sizer.tiktoken_encoding, doc.text, self.max_passage_tokens
        windows: List[Tuple[int, int, int, Section]] = []
        for section in doc.sections:
            windows.extend((s, e, n, section) for s, e, n in token_windows(enc, text, section.start, section.end,
                                                                           limit, 0))
        out: List[Passage] = []
        k = 0
        while k < len(windows):
            start, end, tokens, first = windows[k]
            sections = [first]
            j = k + 1
            while j < len(windows) and tokens + windows[j][2] <= limit:
                joined = self.sizer.count(text[start:windows[j][1]])  # separators count too
                if joined > limit:
                    break
                end, tokens = windows[j][1], joined
                if windows[j][3] is not sections[-1]:
                    sections.append(windows[j][3])
                j += 1
            out.append(Passage(start, end, tokens, _passage_metadata(doc, sections)))
            k = j
        return out


    def chunk_with_usage(self, doc: ParsedDocument) -> Tuple[List[Chunk], LLMUsage]:
        """Return the chunks and what the model calls cost (see :class:`LLMUsage`)."""
        passages = self.passages(doc)
        usage = LLMUsage()
        if not passages:
            return [], usage
        version = self.prompt_version
        replies = shared_client(self.llm_config).complete_many(
            [(self.prompt, doc.text[p.start:p.end], version) for p in passages],
            accept=lambda answer: bool(self._propositions(answer)[0]))
        chunks: List[Chunk] = []
        for passage, reply in zip(passages, replies):
            found, problem = self.answered(reply, usage, self._propositions)
            if not found:
                usage.fallbacks += 1
                _LOG.warning("%s: passage [%d, %d) emitted as it is: %s", doc.uri or doc.id, passage.start,
                             passage.end, problem)
            chunks.extend(self._passage_chunks(doc, passage, found or [], len(chunks)))
        return chunks, usage

    def _propositions(self, answer: str) -> Tuple[Optional[List[str]], str]:
        try:
            items = string_items(parse_json(answer), keys=("propositions",), text_keys=("text", "proposition"))
        except ValueError:
            return None, "the answer is not JSON"
        if items is None:
            return None, "the answer holds no array of propositions"
        usable = list(dict.fromkeys(p for p in items if len(p) <= MAX_PROPOSITION_CHARS))
        if not usable:
            return None, "no usable proposition in the answer"
        return usable[: self.max_propositions_per_passage], ""

    def _passage_chunks(self, doc: ParsedDocument, passage: Passage, propositions: List[str],
                        index: int) -> List[Chunk]:
        span = {"parent_start": passage.start, "parent_end": passage.end}
        out: List[Chunk] = []
        if self.emit_parent_passages or not propositions:
            meta = {**passage.metadata, **span, "chunk_kind": "passage"}
            out.append(make_chunk(doc, index=index, start=passage.start, end=passage.end,
                                  token_count=passage.tokens, metadata=meta))
        meta = {**passage.metadata, **span, "chunk_kind": "proposition", "rewrite": True}
        for k, text in enumerate(propositions, start=1):
            out.append(make_chunk(doc, index=index + len(out), start=passage.start, end=passage.end,
                                  token_count=self.sizer.count(text), metadata=meta, ordinal=k, rewrite=text))
        return out
