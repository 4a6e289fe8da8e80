"""Markdown: ATX and setext headings become sections with a heading path.

A heading starts a section that runs to the next heading; text before the first heading is a
section of level 0. Lines inside fenced code blocks (``` or ~~~) are never headings. Heading
text in the path is cleaned of links, images, emphasis, inline code and closing hashes, so
``## [Install](x.md) *now*`` has the path entry ``Install now``. Skipped levels are handled:
``#`` then ``###`` then ``##`` gives paths ``(A)``, ``(A, B)``, ``(A, C)``.
"""
from __future__ import annotations

import re
from typing import FrozenSet, List, Tuple

from beam_chunking.parsers.decode import decode
from beam_chunking.parsers.drops import KEEP_NOTHING
from beam_chunking.parsers.limits import DEFAULT_LIMITS, ParseLimits
from beam_chunking.text.headings import heading_path, scan_markdown
from beam_chunking.text.spans import ALL_NEWLINES, line_starts
from beam_chunking.types import Document, ParsedDocument, Section

_IMAGE_OR_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_REF_LINK = re.compile(r"!?\[([^\]]*)\]\[[^\]]*\]")
_AUTOLINK = re.compile(r"<((?:https?|mailto):[^>]*)>")
_EMPHASIS = re.compile(r"(\*{1,3}|_{1,3}|~~)(?=\S)(.+?)(?<=\S)\1")
_CODE = re.compile(r"`+([^`]*)`+")
_TAG = re.compile(r"</?[A-Za-z][^>]*>")


def clean_heading(raw: str) -> str:
    """Return heading text without Markdown markup (links, emphasis, code, HTML tags)."""
    text = _IMAGE_OR_LINK.sub(r"\1", raw)
    text = _REF_LINK.sub(r"\1", text)
    text = _AUTOLINK.sub(r"\1", text)
    text = _CODE.sub(r"\1", text)
    for _ in range(3):  # nested emphasis such as ***a*** or **_a_**
        text = _EMPHASIS.sub(r"\2", text)
    text = _TAG.sub("", text)
    text = text.replace("\\", "")
    return " ".join(text.split())


def _headings(text: str) -> List[Tuple[int, int, str]]:
    """Return ``(line_start, level, title)`` for every heading line, in order."""
    # Lines as str.splitlines() sees them: every Unicode line break ends a line.
    lines = line_starts(text, 0, len(text), ALL_NEWLINES)
    return [(lines[h.line], h.level, clean_heading(h.title)) for h in scan_markdown(text, lines).headings]


def parse_markdown(doc: Document, *, errors: str = "strict", limits: ParseLimits = DEFAULT_LIMITS,
                   keep: FrozenSet[str] = KEEP_NOTHING) -> ParsedDocument:
    """Decode ``doc`` and split it into heading sections.

    Each section spans its heading line and the body below it, up to the next heading, and
    carries ``level`` (1-6, 0 before the first heading) and ``heading_path``.

    Args:
        doc: The raw document.
        errors: Decoding policy, ``"strict"`` or ``"replace"``.
        limits: Unused; accepted for a uniform parser signature.
        keep: Unused (nothing is dropped from this format); accepted for a uniform signature.
    """
    decoded = decode(doc.data, uri=doc.uri, document_id=doc.id, errors=errors)
    text = decoded.text
    meta = {**doc.metadata, **decoded.metadata()}
    sections: List[Section] = []
    stack: List[Tuple[int, str]] = []
    heads = _headings(text)
    if not heads or heads[0][0] > 0:
        first = heads[0][0] if heads else len(text)
        if text[:first].strip():
            sections.append(Section(0, first))
    for k, (start, level, title) in enumerate(heads):
        end = heads[k + 1][0] if k + 1 < len(heads) else len(text)
        path = heading_path(stack, level, title)
        sections.append(Section(start, end, level=level, heading_path=path, kind="text"))
    return ParsedDocument(doc.id, doc.uri, doc.content_type, text, tuple(sections), meta)
