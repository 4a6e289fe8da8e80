"""Parsers from a document's bytes to text and sections, registered by content type.

``parse(document)`` picks the parser for ``document.content_type``; an unsupported type
(a PDF before the PDF parser exists, a zip, an executable) raises
:class:`~beam_chunking.errors.UnsupportedContentType` and is never read as text.
"""
from __future__ import annotations

import dataclasses
import hashlib
from typing import Callable, Dict

from beam_chunking.errors import UnsupportedContentType
from beam_chunking.parsers.detect import detect_content_type
from beam_chunking.parsers.markdown import parse_markdown
from beam_chunking.parsers.text import parse_text
from beam_chunking.types import Document, ParsedDocument

Parser = Callable[..., ParsedDocument]

#: content type -> parser. Each parser takes ``(document, errors=...)``.
PARSERS: Dict[str, Parser] = {
    "text/plain": parse_text,
    "text/markdown": parse_markdown,
}


def parse(document: Document, *, decode_errors: str = "strict") -> ParsedDocument:
    """Parse ``document`` with the parser registered for its content type.

    Args:
        document: Raw document.
        decode_errors: ``"strict"`` (default) or ``"replace"``; see
            :func:`beam_chunking.parsers.decode.decode_text`.

    Raises:
        UnsupportedContentType: no parser for the content type.
        ParseError: the parser rejected the bytes.
    """
    parser = PARSERS.get(document.content_type)
    if parser is None:
        raise UnsupportedContentType(
            f"content type {document.content_type!r} has no parser (supported: "
            f"{', '.join(sorted(PARSERS))})",
            document_id=document.id,
            uri=document.uri,
        )
    parsed = parser(document, errors=decode_errors)
    return dataclasses.replace(
        parsed, size_bytes=len(document.data), sha256=hashlib.sha256(document.data).hexdigest()
    )


__all__ = ["PARSERS", "parse", "detect_content_type"]
