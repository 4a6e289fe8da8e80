"""The parser registry by content type, and the in-process parse.

:data:`PARSERS` maps every content type with a parser to it; :func:`parse_in_process` runs
the one for a document's type in this process, under the document's time budget. Kept apart
from :func:`beam_chunking.parsers.parse`, which may hand the document to the watchdog's child
process instead (:mod:`beam_chunking.parsers.watchdog`), so that the child, and the watchdog,
import this module and not the package that imports them.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import inspect
from typing import Dict, FrozenSet

from beam_chunking.errors import LimitExceeded, ParseError, UnsupportedContentType
from beam_chunking.parsers.drops import KEEP_NOTHING, check_keep
from beam_chunking.parsers.formats import EMAIL, FORMAT_PARSERS, Parser
from beam_chunking.parsers.image import IMAGE_TYPES, parse_image
from beam_chunking.parsers.limits import DEFAULT_LIMITS, ParseLimits, parse_budget
from beam_chunking.parsers.mail import parse_email, parse_mbox
from beam_chunking.parsers.ocr import DEFAULT_OCR, check_ocr
from beam_chunking.parsers.outlook import OUTLOOK, parse_outlook
from beam_chunking.parsers.sniff import MBOX
from beam_chunking.types import Document, ParsedDocument

#: content type -> parser: the single-format parsers, the e-mail parsers (.eml, Outlook .msg)
#: and the image parser. Images are not in ``FORMAT_PARSERS``, which the e-mail parsers read
#: attachments with: an e-mail's pictures are mostly logos and signatures, each worth seconds
#: of OCR and no text; they stay listed in ``attachments_skipped``.
PARSERS: Dict[str, Parser] = {**FORMAT_PARSERS, EMAIL: parse_email, MBOX: parse_mbox, OUTLOOK: parse_outlook,
                              **{ctype: parse_image for ctype in IMAGE_TYPES}}


@functools.lru_cache(maxsize=256)  # one entry per parser function: a few dozen
def takes_ocr(parser: Parser) -> bool:
    """Whether ``parser`` accepts the ``ocr`` keyword (the image and PDF parsers)."""
    try:
        return "ocr" in inspect.signature(parser).parameters
    except (TypeError, ValueError):  # a callable without a signature (a builtin)
        return False


def parse_in_process(document: Document, *, decode_errors: str = "strict", limits: ParseLimits = DEFAULT_LIMITS,
                     keep: FrozenSet[str] = KEEP_NOTHING, ocr: str = DEFAULT_OCR) -> ParsedDocument:
    """:func:`beam_chunking.parsers.parse` in this process, whatever ``limits.watchdog`` says:
    the time budget is only checked between pages, rows, paragraphs and elements. The
    watchdog's child parses with it. Arguments and exceptions are those of ``parse``."""
    keep = check_keep(keep)
    check_ocr(ocr)
    parser = PARSERS.get(document.content_type)
    if parser is None:
        raise UnsupportedContentType(
            f"content type {document.content_type!r} has no parser (supported: "
            f"{', '.join(sorted(PARSERS))})",
            document_id=document.id,
            uri=document.uri,
        )
    try:
        with parse_budget(limits):
            # Only the parsers that OCR take the mode: the others' signatures stay as they are.
            extra = {"ocr": ocr} if takes_ocr(parser) else {}
            parsed = parser(document, errors=decode_errors, limits=limits, keep=keep, **extra)
    except LimitExceeded as exc:
        if exc.uri is None and exc.document_id is None:
            raise LimitExceeded(str(exc), limit=exc.limit, document_id=document.id, uri=document.uri) from None
        raise
    except ParseError as exc:
        if exc.uri is None and exc.document_id is None:  # raised below the parser, unnamed
            raise ParseError(str(exc), document_id=document.id, uri=document.uri) from None
        raise
    return dataclasses.replace(
        parsed, size_bytes=len(document.data), sha256=hashlib.sha256(document.data).hexdigest()
    )


__all__ = ["PARSERS", "parse_in_process", "takes_ocr"]
