"""PPTX: one section per slide (``slide`` 1-based, the title as heading), notes on their own.

Read with python-pptx after the zip container passes the safety checks of
:mod:`beam_chunking.parsers._zipsafe`. A slide's text is its title, then every other text
shape and table in reading order (top to bottom, then left to right; group shapes are
entered), tables rendered as Markdown pipe tables. Speaker notes become a separate section
of kind ``notes`` with ``speaker_notes=True`` metadata and the slide's number and title, so
they can be kept, routed or dropped on their own. ``limits.max_pages`` caps the slide count.
"""
from __future__ import annotations

import io
from typing import FrozenSet, List

from beam_chunking.errors import ParseError
from beam_chunking.parsers._build import EMPTY_TABLE, TextBuilder, clean, collapse, empty_table, markdown_table
from beam_chunking.parsers._optional import require
from beam_chunking.parsers._zipsafe import open_container
from beam_chunking.parsers.drops import KEEP_NOTHING
from beam_chunking.parsers.limits import DEFAULT_LIMITS, ParseLimits, check_time, exceeded
from beam_chunking.types import Document, ParsedDocument


def _shape_texts(shapes, skip, group, builder: TextBuilder) -> List[str]:
    out: List[str] = []
    ordered = sorted(shapes, key=lambda s: (s.top if s.top is not None else 0, s.left if s.left is not None else 0))
    for shape in ordered:
        if shape is skip or (skip is not None and shape.shape_id == skip.shape_id):
            continue
        if shape.shape_type == group:
            out.extend(_shape_texts(shape.shapes, None, group, builder))
        elif getattr(shape, "has_table", False) and shape.has_table:
            rows = [[collapse(cell.text) for cell in row.cells] for row in shape.table.rows]
            if empty_table(rows):
                builder.drop(EMPTY_TABLE, markdown_table(rows))
            else:
                out.append(markdown_table(rows))
        elif shape.has_text_frame:
            lines = [collapse(p.text) for p in shape.text_frame.paragraphs]
            out.append("\n".join(line for line in lines if line))
    return [t for t in out if t.strip()]


def parse_pptx(doc: Document, *, errors: str = "strict", limits: ParseLimits = DEFAULT_LIMITS,
               keep: FrozenSet[str] = KEEP_NOTHING) -> ParsedDocument:
    """Parse a PowerPoint deck into slide and notes sections (see the module docstring).

    Args:
        doc: The raw document.
        errors: Unused (PPTX text is Unicode XML); accepted for a uniform signature.
        limits: Zip container caps, ``max_pages`` (slides, default 5,000) and
            ``max_page_chars`` (one slide's text, notes apart, default 1,000,000).
        keep: Unused (nothing is dropped from this format); accepted for a uniform signature.
    """
    pptx = require("pptx", "python-pptx")
    group = require("pptx.enum.shapes", "python-pptx").MSO_SHAPE_TYPE.GROUP
    open_container(doc, limits, ["ppt/presentation.xml"], "PPTX").close()
    try:
        deck = pptx.Presentation(io.BytesIO(doc.data))
        slides = list(deck.slides)
    except Exception as exc:
        raise ParseError(f"PPTX: python-pptx cannot read it ({type(exc).__name__}: {exc})",
                         document_id=doc.id, uri=doc.uri) from None
    if len(slides) > limits.max_pages:
        raise ParseError(f"PPTX: {len(slides)} slides exceed max_pages={limits.max_pages}; raise the limit to parse it",
                         document_id=doc.id, uri=doc.uri)
    builder = TextBuilder(max_chars=limits.max_text_chars)
    for number, slide in enumerate(slides, start=1):
        check_time(f"slide {number} of {len(slides)}")
        title_shape = slide.shapes.title
        title = " ".join(collapse(title_shape.text).split()) if title_shape is not None else ""
        path = (title,) if title else ()
        body = _shape_texts(slide.shapes, title_shape, group, builder)
        text = "\n\n".join([title] + body if title else body)
        if len(text) > limits.max_page_chars:
            raise exceeded(limits, "max_page_chars", f"PPTX: slide {number} has {len(text)} characters")
        builder.add(text, heading_path=path, level=1 if title else 0,
                    kind="slide", metadata={"slide": number})
        if slide.has_notes_slide:
            notes = slide.notes_slide.notes_text_frame
            text = collapse(clean(notes.text)) if notes is not None else ""
            builder.add(text, heading_path=path, level=1 if title else 0, kind="notes",
                        metadata={"slide": number, "speaker_notes": True})
    return builder.build(doc, {"slides": len(slides)})
