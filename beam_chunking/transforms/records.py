"""Records that travel between the Beam stages alongside the core types.

A failed document becomes a :class:`Failure` at the stage where it failed and then travels
through the remaining stages untouched, so ``Read | Parse | Chunk | Write`` chains with
``|`` and no failure is ever dropped: documents in = ok + empty + failed.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Optional, Tuple

from beam_chunking.ids import document_id
from beam_chunking.types import Chunk, Document, ParsedDocument


@dataclass(frozen=True)
class Failure:
    """A document that failed at ``stage`` (read, parse, chunk or validate)."""

    document_id: str
    uri: str
    stage: str
    error_type: str
    error_message: str
    content_type: Optional[str] = None
    size_bytes: Optional[int] = None
    sha256: Optional[str] = None


@dataclass(frozen=True)
class ChunkedDocument:
    """A document's chunks plus what the documents table needs to know about it."""

    document_id: str
    uri: str
    content_type: str
    size_bytes: int
    sha256: str
    section_count: int
    chunks: Tuple[Chunk, ...]
    strategy: str
    strategy_fingerprint: str
    decode_replacements: int = 0
    dropped: Tuple[Tuple[str, int], ...] = ()


def failure_from(element: Any, error: BaseException, stage: str) -> Failure:
    """Build a :class:`Failure` for the element a stage could not process."""
    error_type, message = type(error).__name__, str(error) or repr(error)
    if isinstance(element, Document):
        return Failure(
            element.id, element.uri, stage, error_type, message, element.content_type,
            len(element.data), hashlib.sha256(element.data).hexdigest(),
        )
    if isinstance(element, ParsedDocument):
        return Failure(element.id, element.uri, stage, error_type, message, element.content_type,
                       element.size_bytes, element.sha256)
    if isinstance(element, ChunkedDocument):
        return Failure(element.document_id, element.uri, stage, error_type, message, element.content_type,
                       element.size_bytes, element.sha256)
    meta = getattr(element, "metadata", None)  # a fileio.ReadableFile that failed to read
    uri = str(getattr(meta, "path", None) or getattr(element, "path", None) or element)
    return Failure(document_id(uri), uri, stage, error_type, message)
