"""Core value types that flow through every stage.

All types are frozen dataclasses so they pickle cheaply, hash by value where it makes sense,
and cannot be mutated by a later stage behind an earlier one's back. Offsets are always Python
``str`` code-point offsets into :attr:`ParsedDocument.text` (never UTF-8 byte offsets).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, NamedTuple, Optional, Sequence, Tuple, Union

#: The value types metadata may hold. Each survives the Parquet round trip with its type.
MetadataValue = Union[str, int, float, bool, None, Tuple[str, ...], list]

#: Metadata keys that become typed columns of the chunks table rather than map entries.
RESERVED_KEYS = (
    "heading",
    "section_path",
    "page",
    "page_end",
    "boxes",
    "slide",
    "sheet",
    "row",
    "element_path",
    "language",
    "chunk_kind",
    "template",
    "parent_id",
)


@dataclass(frozen=True)
class Document:
    """Raw bytes of one input file, before parsing.

    Args:
        id: Deterministic document id (see :func:`beam_chunking.ids.document_id`).
        uri: Where the bytes came from (local path or ``gs://`` URI).
        data: The file's bytes.
        content_type: MIME type detected from the extension and magic bytes.
        metadata: Caller-supplied document tags, copied onto every chunk.
    """

    id: str
    uri: str
    data: bytes
    content_type: str
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Section:
    """A span ``[start, end)`` of a parsed document's text with its provenance.

    Args:
        start: First code point of the section in ``ParsedDocument.text``.
        end: One past the last code point.
        level: Heading depth (0 for body text without a heading, 1 for ``#``).
        heading_path: Headings from the outermost to this section's own heading.
        kind: What the span is: ``"text"``, ``"heading"``, ``"code"``, ``"table"`` ...
        page: 1-based page number where known, else ``None``.
        metadata: Further typed provenance (``slide``, ``sheet``, ``row`` ...).
    """

    start: int
    end: int
    level: int = 0
    heading_path: Tuple[str, ...] = ()
    kind: str = "text"
    page: Optional[int] = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.start < 0 or self.end < self.start:
            raise ValueError(f"Section span must satisfy 0 <= start <= end, got [{self.start}, {self.end})")


class TextBox(NamedTuple):
    """Where one line of a parsed document's text lies on its page: ``text[start:end]`` is
    drawn inside the rectangle ``(x0, y0)``-``(x1, y1)``.

    Coordinates are PDF points (1/72 inch) with the origin at the page's top-left corner, y
    growing downwards; for an image document they are the image's pixels. Consecutive boxes
    with the same ``group`` belong to one block of lines (a paragraph, a table, a caption), so
    a chunk's regions are one rectangle per group it touches.

    Args:
        start: First code point of the line in ``ParsedDocument.text``.
        end: One past its last code point.
        page: 1-based page (or image frame) number.
        x0: Left edge.
        y0: Top edge.
        x1: Right edge.
        y1: Bottom edge.
        group: The block of lines the line belongs to, numbered in reading order.
    """

    start: int
    end: int
    page: int
    x0: float
    y0: float
    x1: float
    y1: float
    group: int


@dataclass(frozen=True)
class ParsedDocument:
    """A document decoded to text, with sections that partition the parts worth chunking.

    Args:
        id: Document id.
        uri: Source URI.
        content_type: MIME type the parser handled.
        text: The full decoded text; every offset refers to it.
        sections: Non-overlapping spans of ``text`` in document order.
        metadata: Document-level metadata (tags, decoding notes); copied to chunks.
        size_bytes: Size of the raw input in bytes.
        sha256: Hex SHA-256 of the raw input.
        dropped: What the parser left out of ``sections`` on purpose (running headers, page
            numbers, tables of contents ...), as ``(label, characters)`` pairs, one per label.
            The pipeline adds them to the documents table's ``dropped`` and
            ``dropped_characters`` columns beside the strategy's own drops.
        boxes: Where the text lies on its pages, one :class:`TextBox` per line in text
            order; empty for formats without geometry. Chunks get their ``boxes`` from it.
    """

    id: str
    uri: str
    content_type: str
    text: str
    sections: Tuple[Section, ...]
    metadata: Mapping[str, Any] = field(default_factory=dict)
    size_bytes: int = 0
    sha256: str = ""
    dropped: Tuple[Tuple[str, int], ...] = ()
    boxes: Tuple[TextBox, ...] = ()


@dataclass(frozen=True, slots=True)
class Chunk:
    """One retrieval unit: an exact span of its document's text.

    ``text == document_text[start:end]`` holds for every strategy that cuts the source.
    Overlap is part of the span, so neighbouring chunks may overlap.

    Args:
        document_id: Id of the document the chunk came from (``""`` for bare text).
        index: 0-based position of the chunk within its document.
        start: First code point of the chunk in the document text.
        end: One past the last code point.
        text: The chunk's text.
        token_count: Tokens in ``text`` under the strategy's tokenizer, or ``None`` when the
            strategy counts characters (the pipeline can fill it in).
        metadata: Typed metadata; reserved keys become columns of the chunks table.
        embedding: Optional vector, filled by an embedding stage.
        ordinal: Disambiguates chunks of one document that share a ``start``.
    """

    document_id: str
    index: int
    start: int
    end: int
    text: str
    token_count: Optional[int] = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    embedding: Optional[Sequence[float]] = None
    ordinal: int = 0

    @classmethod
    def of_span(cls, document_id: str, index: int, start: int, end: int, text: str,
                token_count: Optional[int], metadata: Mapping[str, Any]) -> "Chunk":
        """The chunk ``Chunk(document_id, index, start, end, text, token_count, metadata)``,
        built without the frozen dataclass's keyword handling; strategies build every chunk
        this way."""
        chunk = _new(cls)
        _SET_DOCUMENT(chunk, document_id)
        _SET_INDEX(chunk, index)
        _SET_START(chunk, start)
        _SET_END(chunk, end)
        _SET_TEXT(chunk, text)
        _SET_TOKENS(chunk, token_count)
        _SET_METADATA(chunk, metadata)
        _SET_EMBEDDING(chunk, None)
        _SET_ORDINAL(chunk, 0)
        return chunk

    def with_token_count(self, token_count: Optional[int]) -> "Chunk":
        """A copy with ``token_count`` set: what ``dataclasses.replace`` gives, at a fraction
        of its cost (the pipeline does this for every chunk of a character strategy)."""
        copy = type(self).of_span(self.document_id, self.index, self.start, self.end, self.text, token_count,
                                  self.metadata)
        if self.embedding is not None:
            _SET_EMBEDDING(copy, self.embedding)
        if self.ordinal:
            _SET_ORDINAL(copy, self.ordinal)
        return copy

    def __reduce__(self):
        # Explicit: the constructor's arguments pickle and load about a quarter faster than
        # the slots' state that pickle would otherwise save (Beam's coders pickle chunks).
        return type(self), (self.document_id, self.index, self.start, self.end, self.text, self.token_count,
                       self.metadata, self.embedding, self.ordinal)

    @property
    def id(self) -> str:
        """Deterministic id: ``f"{document_id}:{start:010d}"`` plus ``#k`` when ``ordinal`` > 0."""
        base = f"{self.document_id}:{self.start:010d}"
        return f"{base}#{self.ordinal}" if self.ordinal else base


_new = object.__new__
# The slots' own setters: the dataclass is frozen, so its __setattr__ refuses.
(_SET_DOCUMENT, _SET_INDEX, _SET_START, _SET_END, _SET_TEXT, _SET_TOKENS, _SET_METADATA, _SET_EMBEDDING,
 _SET_ORDINAL) = (Chunk.__dict__[name].__set__ for name in ("document_id", "index", "start", "end", "text",
                                                            "token_count", "metadata", "embedding", "ordinal"))
