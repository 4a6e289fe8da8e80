"""Records that travel between the Beam stages alongside the core types.

Every record carries one :class:`DocumentHeader` (the document's identity as the documents
table records it) instead of repeating its fields. A failed document becomes a
:class:`Failure` at the :class:`Stage` where it failed and then travels through the
remaining stages untouched, so ``Read | Parse | Chunk | Write`` chains with ``|`` and no
failure is ever dropped: documents in = ok + empty + failed.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Mapping, Optional, Tuple

from beam_chunking.ids import display_uri, document_id
from beam_chunking.types import Chunk, Document, ParsedDocument


class Stage(str, Enum):
    """Where in the pipeline a document failed (the documents table's ``stage`` column)."""

    READ = "read"
    PARSE = "parse"
    CHUNK = "chunk"
    EMBED = "embed"
    VALIDATE = "validate"


@dataclass(frozen=True)
class DocumentHeader:
    """A document's identity: its id, URI, content type, size and SHA-256 (``None`` when a
    document failed before they were known), and the text encoding its parser decoded it
    with (the ``encoding`` and ``encoding_confidence`` metadata of text parsers; ``None``
    for formats whose text is not decoded from the file as a whole, and before parsing)."""

    document_id: str
    uri: str
    content_type: Optional[str] = None
    size_bytes: Optional[int] = None
    sha256: Optional[str] = None
    encoding: Optional[str] = None
    encoding_confidence: Optional[float] = None

    @classmethod
    def of(cls, element: Any) -> "DocumentHeader":
        """The header of a :class:`Document`, :class:`ParsedDocument` or record; for anything
        else (a file that could not be read) the id and URI from its path."""
        if isinstance(element, (Failure, ChunkedDocument)):
            return element.header
        if isinstance(element, Document):
            return cls(element.id, element.uri, element.content_type, len(element.data),
                       hashlib.sha256(element.data).hexdigest())
        if isinstance(element, ParsedDocument):
            confidence = element.metadata.get("encoding_confidence")
            return cls(element.id, element.uri, element.content_type, element.size_bytes, element.sha256,
                       element.metadata.get("encoding"), None if confidence is None else float(confidence))
        meta = getattr(element, "metadata", None)  # a fileio.ReadableFile or FileMetadata
        path = str(getattr(meta, "path", None) or getattr(element, "path", None) or element)
        return cls(document_id(path), display_uri(path))

    def columns(self) -> dict:
        """The documents-table columns this header fills."""
        return {"document_id": self.document_id, "uri": self.uri, "content_type": self.content_type,
                "size_bytes": self.size_bytes, "sha256": self.sha256, "encoding": self.encoding,
                "encoding_confidence": self.encoding_confidence}


@dataclass(frozen=True)
class _HasHeader:
    header: DocumentHeader

    @property
    def document_id(self) -> str:
        """The document's id."""
        return self.header.document_id

    @property
    def uri(self) -> str:
        """The document's URI."""
        return self.header.uri

    @property
    def content_type(self) -> Optional[str]:
        """The document's content type."""
        return self.header.content_type


@dataclass(frozen=True)
class Failure(_HasHeader):
    """A document that failed at ``stage``, with the error's type and message."""

    stage: Stage
    error_type: str
    error_message: str


@dataclass(frozen=True)
class ChunkedDocument(_HasHeader):
    """A document's chunks plus what the documents table needs to know about it."""

    section_count: int
    chunks: Tuple[Chunk, ...]
    strategy: str
    strategy_fingerprint: str
    decode_replacements: int = 0
    dropped: Tuple[Tuple[str, int], ...] = ()
    parents: Tuple[Chunk, ...] = ()
    counts: Mapping[str, int] = field(default_factory=dict)


def failure_from(element: Any, error: BaseException, stage: Stage) -> Failure:
    """Build a :class:`Failure` for the element a stage could not process."""
    return Failure(DocumentHeader.of(element), Stage(stage), type(error).__name__, str(error) or repr(error))
