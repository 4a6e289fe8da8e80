"""Résumé template: a chat model extracts a CV's sections, each becomes a chunk.

Costs one model call per document (answered from the cache on a re-run).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from beam_chunking.llm import LLMUsage, shared_client
from beam_chunking.llm.replies import parse_json
from beam_chunking.strategies.base import make_chunk
from beam_chunking.strategies.chat import ChatModelChunker
from beam_chunking.types import Chunk, ParsedDocument

_LOG = logging.getLogger(__name__)

#: The sections extracted, in the order their chunks are emitted.
RESUME_FIELDS = ("contact", "summary", "experience", "education", "skills", "certifications")

#: The default extraction instruction; replace it with ``prompt`` (the cache key holds a hash
#: of the prompt, so a new prompt is never answered from an old one's cache).
RESUME_PROMPT = (
    "Extract the sections of the résumé (CV) in the user's text. Answer with a JSON object with "
    "these keys and nothing else: "
    '"contact" (an object: name, email, phone, location, links), '
    '"summary" (a string), '
    '"experience" (an array of objects: title, organization, location, start, end, description), '
    '"education" (an array of objects: degree, institution, location, start, end, details), '
    '"skills" (an array of strings), '
    '"certifications" (an array of objects: name, issuer, date). '
    "Copy names, dates and numbers exactly as written; use null or [] for what the text does not "
    "say; add nothing that is not in the text."
)

_LABELS = {"contact": "Contact", "summary": "Summary", "experience": "Experience", "education": "Education",
           "skills": "Skills", "certifications": "Certifications"}


def _scalar(value: Any) -> Optional[str]:
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        text = " ".join(str(value).split())
        return text or None
    return None


def render(value: Any) -> str:
    """One extracted value as readable lines: ``Key: value`` for objects, ``a, b`` for lists."""
    if isinstance(value, dict):
        lines = []
        for key, item in value.items():
            text = render(item)
            if text:
                lines.append(f"{str(key).replace('_', ' ').capitalize()}: {text}")
        return "\n".join(lines)
    if isinstance(value, list):
        parts = [render(v) for v in value]
        return ", ".join(p for p in parts if p)
    return _scalar(value) or ""


@dataclass(frozen=True)
class ResumeChunker(ChatModelChunker):
    """One chunk per section of a CV, extracted by a chat model in one call per document.

    The model returns contact details, a summary, experience entries, education entries,
    skills and certifications; each experience or education entry is a chunk of its own.
    Field chunks are rewrites (``rewrite=True``, ``chunk_kind="field"``, ``resume_field``
    names the section, ``resume_entry`` numbers entries from 1) with no source span
    (``start == end == 0``) and no page keys; ordinals ``1..n`` keep their ids apart.

    When the call fails, the answer is not a JSON object, or it holds no field, the whole
    text is one chunk (``chunk_kind="document"``) over the document-wide range, counted in
    the documents table's ``llm_fallbacks``.

    Args:
        llm: The chat model (an :class:`~beam_chunking.llm.LLMConfig` or a mapping of its
            options); ``None`` (default) takes the job's ``llm`` settings.
        prompt: The extraction instruction. Default :data:`RESUME_PROMPT`.
        tokenizer: tiktoken encoding or model of the chunks' ``token_count``. Default
            ``"cl100k_base"``.
    """

    name = "resume"
    task = "resume"
    template = "resume"
    unit_template = "unbounded"
    prompt: str = RESUME_PROMPT

    def chunk_with_usage(self, doc: ParsedDocument) -> Tuple[List[Chunk], LLMUsage]:
        """Return the chunks and what the model call cost."""
        usage = LLMUsage()
        if not doc.text.strip():
            return [], usage
        reply = shared_client(self.llm_config).complete_many([(self.prompt, doc.text, self.prompt_version)],
                                                             accept=lambda answer: bool(self._fields(answer)[0]))[0]
        fields, problem = self.answered(reply, usage, self._fields)
        if not fields:
            usage.fallbacks += 1
            _LOG.warning("%s: résumé kept as one chunk: %s", doc.uri or doc.id, problem)
            return [self._full_text(doc)], usage
        base = {**doc.metadata, "template": "resume", "chunk_kind": "field", "rewrite": True}
        chunks = [make_chunk(doc, index=k, start=0, end=0, token_count=self.sizer.count(text),
                             metadata={**base, "resume_field": field, **({"resume_entry": entry} if entry else {})},
                             ordinal=k + 1, rewrite=text)
                  for k, (field, entry, text) in enumerate(fields)]
        return chunks, usage

    def _fields(self, answer: str) -> Tuple[List[Tuple[str, int, str]], str]:
        try:
            value = parse_json(answer)
        except ValueError:
            return [], "the answer is not JSON"
        if not isinstance(value, dict):
            return [], "the answer is not a JSON object"
        out: List[Tuple[str, int, str]] = []
        for field in RESUME_FIELDS:
            item = value.get(field)
            label = _LABELS[field]
            if field in ("experience", "education") and isinstance(item, list):
                for entry, one in enumerate(item, start=1):
                    text = render(one)
                    if text:
                        out.append((field, entry, f"{label}:\n{text}"))
                continue
            text = render(item)
            if text:
                out.append((field, 0, f"{label}: {text}" if "\n" not in text else f"{label}:\n{text}"))
        return out, "" if out else "the answer holds none of the résumé's sections"

    def _full_text(self, doc: ParsedDocument) -> Chunk:
        meta: Dict[str, Any] = {**doc.metadata, "template": "resume", "chunk_kind": "document"}
        pages = [s.page for s in doc.sections if s.page is not None]
        if pages:
            meta["page"], meta["page_end"] = min(pages), max(pages)
        return make_chunk(doc, index=0, start=0, end=len(doc.text), token_count=self.sizer.count(doc.text),
                          metadata=meta)
