"""Plain text: the whole decoded text is one section, less its table of contents.

A table of contents with dot leaders (``1.2 Setup ........ 14``) is left out of the sections
and recorded as dropped (``"table of contents"``, or ``"index"``); the text itself is never
cut, so every chunk stays a span of it. ``keep={"contents"}`` keeps it.
"""
from __future__ import annotations

from typing import FrozenSet

from beam_chunking.parsers.decode import decode
from beam_chunking.parsers.drops import KEEP_NOTHING
from beam_chunking.parsers.furniture import contents_spans, split_around, visible_characters
from beam_chunking.parsers.limits import DEFAULT_LIMITS, ParseLimits
from beam_chunking.types import Document, ParsedDocument, Section


def parse_text(doc: Document, *, errors: str = "strict", limits: ParseLimits = DEFAULT_LIMITS,
               keep: FrozenSet[str] = KEEP_NOTHING) -> ParsedDocument:
    """Decode ``doc`` and return it as one section of kind ``"text"`` (or the pieces around its
    table of contents).

    The metadata records the ``encoding`` and ``encoding_confidence`` the text was decoded with.

    Args:
        doc: The raw document.
        errors: Decoding policy for bytes in no known encoding, ``"strict"`` (default: fail)
            or ``"replace"`` (U+FFFD, counted); see :func:`~beam_chunking.parsers.decode.decode`.
        limits: Unused; accepted for a uniform parser signature.
        keep: Names of :data:`~beam_chunking.parsers.drops.DROPS` to keep instead of dropping.
            Default none.
    """
    decoded = decode(doc.data, uri=doc.uri, document_id=doc.id, errors=errors)
    text = decoded.text
    meta = {**doc.metadata, **decoded.metadata()}
    spans = [] if "contents" in keep else contents_spans(text)
    if not spans:
        sections = (Section(0, len(text)),) if text else ()
        return ParsedDocument(doc.id, doc.uri, doc.content_type, text, sections, meta)
    dropped = {}
    for span in spans:
        dropped[span[2]] = dropped.get(span[2], 0) + visible_characters(text, [span])
    sections = tuple(Section(a, b) for a, b in split_around(text, spans))
    return ParsedDocument(doc.id, doc.uri, doc.content_type, text, sections, meta,
                          dropped=tuple((label, n) for label, n in dropped.items() if n))
