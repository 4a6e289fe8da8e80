"""The contract every strategy follows, and the per-section document loop.

A strategy is a frozen dataclass (validated at construction, picklable, comparable) with
``chunk(text)`` and ``chunk_document(doc)``. Per-section strategies implement
``section_spans`` and inherit the loop that turns spans into :class:`Chunk` objects carrying
the section's provenance (heading path, page range, section metadata). Every strategy,
template and refiner builds its chunks with :func:`make_chunk` (one span) or
:func:`make_chunks` (a section's spans), the one place that turns spans of a document into
:class:`Chunk` objects.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

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


def make_chunk(doc: ParsedDocument, index: int, start: int, end: int, token_count: Optional[int],
               metadata: Mapping[str, Any], embedding: Optional[Sequence[float]] = None, ordinal: int = 0,
               prefix: str = "") -> Chunk:
    """Return the chunk of ``doc`` that is the span ``[start, end)`` of its text.

    Call it with keywords; the text is always ``doc.text[start:end]`` (after ``prefix``).

    Args:
        doc: The document; gives the chunk's ``document_id`` and text.
        index: 0-based position of the chunk in its document.
        start: First code point of the span.
        end: One past the last code point.
        token_count: Tokens in the chunk's text under the strategy's tokenizer, or ``None``
            when the strategy counts characters.
        metadata: The chunk's metadata, usually :func:`section_metadata` plus the
            strategy's own keys.
        embedding: A vector the strategy computed (semantic, late), or ``None`` (default).
        ordinal: Disambiguates chunks that share a ``start``. Default 0.
        prefix: Text put before the span: a repeated table header, the one case where a
            chunk's text is not a plain span (``table_header_repeated``). Default ``""``.
    """
    text = doc.text[start:end]
    # NOTE positional, in the field order DESIGN.md fixes (tests/test_layers.py checks it): a
    # keyword call to the dataclass __init__ costs ~0.4 us more per chunk, a tenth of
    # RecursiveChunker's whole time.
    return Chunk(doc.id, index, start, end, prefix + text if prefix else text, token_count, metadata, embedding,
                 ordinal)


def make_chunks(doc: ParsedDocument, spans: Iterable[Span], metadata: Mapping[str, Any], index: int = 0) -> List[Chunk]:
    """Return the chunks of ``doc`` for spans that share one metadata mapping (a section's).

    The same chunks as :func:`make_chunk` per span, numbered from ``index``, without a call
    per chunk: the per-section strategies' fast path.

    Args:
        doc: The document; gives the chunks' ``document_id`` and text.
        spans: ``(start, end, token_count or None)`` spans in order.
        metadata: Metadata every chunk shares (one mapping, not copied).
        index: Position of the first chunk in the document. Default 0.
    """
    text, doc_id = doc.text, doc.id
    return [Chunk(doc_id, k, s, e, text[s:e], n, metadata) for k, (s, e, n) in enumerate(spans, index)]


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


def chunk_recording_drops(strategy: Chunker, doc: ParsedDocument) -> Tuple[List[Chunk], Drops]:
    """Chunk ``doc`` with ``strategy``; return the chunks and every drop, the parser's first.

    What the parser left out of the sections (``doc.dropped``) and what the strategy dropped
    by design are reported together, so the documents table accounts for all of it.
    """
    chunks, dropped = strategy.chunk_with_drops(doc)
    return chunks, tuple(doc.dropped) + tuple(dropped)


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
        chunks: List[Chunk] = []
        for section in doc.sections:
            spans = self.section_spans(doc.text, section.start, section.end)
            chunks.extend(make_chunks(doc, spans, metadata=section_metadata(doc, section), index=len(chunks)))
        return chunks
