"""The contract every strategy follows, and the per-section document loop.

A strategy is a frozen dataclass (validated at construction, picklable, comparable) with
``chunk(text)`` and ``chunk_document(doc)``. Per-section strategies implement
``section_spans`` and inherit the loop that turns spans into :class:`Chunk` objects carrying
the section's provenance (heading path, page range, section metadata).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, Dict, Iterable, List, Optional, Tuple

from beam_chunking.errors import ConfigError
from beam_chunking.ids import fingerprint
from beam_chunking.types import Chunk, ParsedDocument, Section

#: A span produced by a strategy: ``(start, end, token_count or None)``.
Span = Tuple[int, int, Optional[int]]

#: What a strategy left out on purpose: ``(label, characters)`` per dropped part.
Drops = Tuple[Tuple[str, int], ...]


def require_positive(owner: str, name: str, value: Any, minimum: int = 1) -> None:
    """Raise :class:`ConfigError` unless ``value`` is an int of at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"{owner}.{name} must be an integer >= {minimum}, got {value!r}", field=name)


def require_overlap(owner: str, size_name: str, size: int, overlap_name: str, overlap: Any) -> None:
    """Raise :class:`ConfigError` unless ``0 <= overlap < size``, naming both fields."""
    require_positive(owner, overlap_name, overlap, minimum=0)
    if overlap >= size:
        raise ConfigError(
            f"{owner}.{overlap_name}={overlap} must be smaller than {owner}.{size_name}={size}",
            field=overlap_name,
        )


def text_document(text: str) -> ParsedDocument:
    """Wrap bare text as a one-section document with id ``""``."""
    return ParsedDocument(id="", uri="", content_type="text/plain", text=text, sections=(Section(0, len(text)),))


def section_metadata(doc: ParsedDocument, section: Section) -> Dict[str, Any]:
    """Metadata every chunk of ``section`` inherits: document tags, then section provenance."""
    meta: Dict[str, Any] = dict(doc.metadata)
    if section.heading_path:
        meta["heading"] = section.heading_path[-1]
        meta["section_path"] = list(section.heading_path)
    if section.page is not None:
        # page and page_end are always written together (a chunk within one page).
        meta["page"] = section.page
        meta["page_end"] = section.page
    if section.kind != "text":
        meta["chunk_kind"] = section.kind  # table, code, row, slide, notes, headers ...
    meta.update(section.metadata)
    return meta


@dataclass(frozen=True)
class Chunker:
    """Base of all strategies. Subclasses set ``name`` and implement ``chunk_document``."""

    name: ClassVar[str] = ""
    #: What ``max_chunk_size`` and ``overlap`` count, formatted with the strategy's fields:
    #: ``"characters"``, ``"{tokenizer} tokens"``, or ``"unbounded"`` (no size at all).
    unit_template: ClassVar[str] = "characters"

    @property
    def unit(self) -> str:
        """What this strategy's sizes count, e.g. ``"characters"`` or ``"cl100k_base tokens"``."""
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return self.unit_template.format(**values)

    def setup(self) -> None:
        """Load models or other resources; a pipeline calls it once per worker process."""

    def resolve(self, doc: ParsedDocument) -> "Chunker":
        """The strategy that actually chunks ``doc`` (a router's route; itself by default)."""
        return self

    def chunk(self, text: str) -> List[Chunk]:
        """Chunk bare text as one section of a document with id ``""``."""
        return self.chunk_document(text_document(text))

    def chunk_document(self, doc: ParsedDocument) -> List[Chunk]:  # pragma: no cover - abstract
        """Return the chunks of ``doc`` in document order."""
        raise NotImplementedError

    def chunk_with_drops(self, doc: ParsedDocument) -> Tuple[List[Chunk], Drops]:
        """Return the chunks and what was dropped by design (a book's index ...).

        Strategies that drop text on purpose override this; the pipeline records the drops in
        the documents table (``dropped``, ``dropped_characters``) so no text vanishes silently.
        """
        return self.chunk_document(doc), ()

    @property
    def fingerprint(self) -> str:
        """12 hex digits identifying this strategy's class and configuration."""
        return fingerprint(self)


@dataclass(frozen=True)
class SectionChunker(Chunker):
    """A strategy that cuts each section on its own; implement :meth:`section_spans`."""

    def section_spans(self, text: str, start: int, end: int) -> Iterable[Span]:  # pragma: no cover
        """Yield ``(start, end, token_count)`` spans of ``text[start:end]`` in order."""
        raise NotImplementedError

    def chunk_document(self, doc: ParsedDocument) -> List[Chunk]:
        """Chunk every section and number the chunks across the document."""
        # Sections do not overlap and spans start strictly later within a section, so starts
        # are unique and every chunk id is f"{doc.id}:{start:010d}" with no ordinal needed.
        text, doc_id = doc.text, doc.id
        chunks: List[Chunk] = []
        append = chunks.append
        for section in doc.sections:
            meta = section_metadata(doc, section)
            for s, e, n in self.section_spans(text, section.start, section.end):
                append(Chunk(doc_id, len(chunks), s, e, text[s:e], n, meta))
        return chunks
