"""Parsers from a document's bytes to text and sections, registered by content type.

``parse(document)`` picks the parser for ``document.content_type``; an unsupported type
(a zip, an executable, an image) raises
:class:`~beam_chunking.errors.UnsupportedContentType` and is never read as text. Every
parser has the signature ``parser(document, *, errors="strict", limits=ParseLimits(), keep=frozenset())``.
Parsers of binary formats import their library lazily: without the ``parsers`` extra they
fail the document with an error naming it.
"""
from __future__ import annotations

import dataclasses
import hashlib
from typing import Dict, FrozenSet

from beam_chunking.errors import UnsupportedContentType
from beam_chunking.parsers.detect import detect_content_type
from beam_chunking.parsers.drops import KEEP_NOTHING, check_keep
from beam_chunking.parsers.formats import EMAIL, FORMAT_PARSERS, Parser
from beam_chunking.parsers.limits import DEFAULT_LIMITS, ParseLimits
from beam_chunking.parsers.mail import parse_email
from beam_chunking.types import Document, ParsedDocument

#: content type -> parser: the single-format parsers and the e-mail parser.
PARSERS: Dict[str, Parser] = {**FORMAT_PARSERS, EMAIL: parse_email}


def parse(document: Document, *, decode_errors: str = "strict", limits: ParseLimits = DEFAULT_LIMITS,
          keep: FrozenSet[str] = KEEP_NOTHING) -> ParsedDocument:
    """Parse ``document`` with the parser registered for its content type.

    Args:
        document: Raw document.
        decode_errors: ``"strict"`` (default) or ``"replace"``; see
            :func:`beam_chunking.parsers.decode.decode_text`.
        limits: Safety caps (see :class:`ParseLimits`).
        keep: Parts that parsers drop by default to keep instead (names of
            :data:`~beam_chunking.parsers.drops.DROPS`). Default none: drop them all.

    Raises:
        UnsupportedContentType: no parser for the content type.
        ParseError: the parser rejected the bytes (the message says why).
        MissingExtra: the format's library is not installed (names the extra).
    """
    keep = check_keep(keep)
    parser = PARSERS.get(document.content_type)
    if parser is None:
        raise UnsupportedContentType(
            f"content type {document.content_type!r} has no parser (supported: "
            f"{', '.join(sorted(PARSERS))})",
            document_id=document.id,
            uri=document.uri,
        )
    parsed = parser(document, errors=decode_errors, limits=limits, keep=keep)
    return dataclasses.replace(
        parsed, size_bytes=len(document.data), sha256=hashlib.sha256(document.data).hexdigest()
    )


__all__ = ["PARSERS", "ParseLimits", "parse", "detect_content_type"]
