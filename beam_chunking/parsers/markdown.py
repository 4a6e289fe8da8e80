"""Markdown: ATX and setext headings become sections with a heading path.

A heading starts a section that runs to the next heading; text before the first heading is a
section of level 0. Lines inside fenced code blocks (``` or ~~~) are never headings. Heading
text in the path is cleaned of links, images, emphasis, inline code and closing hashes, so
``## [Install](x.md) *now*`` has the path entry ``Install now``. Skipped levels are handled:
``#`` then ``###`` then ``##`` gives paths ``(A)``, ``(A, B)``, ``(A, C)``.
"""
from __future__ import annotations

import re
from typing import List, Optional, Tuple

from beam_chunking.parsers._build import heading_path
from beam_chunking.parsers.decode import decode_text
from beam_chunking.parsers.limits import DEFAULT_LIMITS, ParseLimits
from beam_chunking.types import Document, ParsedDocument, Section

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
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
    found: List[Tuple[int, int, str]] = []
    fence: Optional[str] = None
    pos = 0
    para: List[Tuple[int, str]] = []  # lines of the current paragraph
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        m = _FENCE.match(body)
        if fence is not None:
            closer = m.group(1) if m else ""
            if closer and closer[0] == fence[0] and len(closer) >= len(fence) and not body.strip()[len(closer):]:
                fence = None
            para = []
        elif m:
            fence = m.group(1)
            para = []
        elif atx := _ATX.match(body):
            found.append((pos, len(atx.group(1)), clean_heading(atx.group(2) or "")))
            para = []
        elif _SETEXT.match(body) and len(para) == 1:
            # Only a one-line paragraph becomes a setext title; else "---" is a rule.
            found.append((para[0][0], 1 if body.strip()[0] == "=" else 2, clean_heading(para[0][1])))
            para = []
        elif body.strip() and (para or not body.startswith(("    ", "\t"))):
            para.append((pos, body))
        else:
            para = []
        pos += len(line)
    return found


def parse_markdown(doc: Document, *, errors: str = "strict", limits: ParseLimits = DEFAULT_LIMITS) -> ParsedDocument:
    """Decode ``doc`` and split it into heading sections.

    Each section spans its heading line and the body below it, up to the next heading, and
    carries ``level`` (1-6, 0 before the first heading) and ``heading_path``.

    Args:
        doc: The raw document.
        errors: Decoding policy, ``"strict"`` or ``"replace"``.
        limits: Unused; accepted for a uniform parser signature.
    """
    text, replaced = decode_text(doc.data, uri=doc.uri, document_id=doc.id, errors=errors)
    meta = dict(doc.metadata)
    if replaced:
        meta["decode_replacements"] = replaced
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
