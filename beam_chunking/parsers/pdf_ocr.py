"""OCR of PDF pages that have no text layer: render the page, recognise it, make lines.

A page is rendered with PDFium at :data:`RENDER_DPI` and recognised by
:func:`beam_chunking.parsers.ocr.recognise`; each recognised line becomes a
:class:`~beam_chunking.parsers.pdf_lines.Line` in page points, so the layout analysis
(paragraphs, headings, boxes) treats a scan like any other page. The recognised text has no
fonts: every line gets the height of its box as its size (the page's usual height for lines
within a quarter of it), and none is bold or monospaced.
"""
from __future__ import annotations

import statistics
from typing import List, Optional, Tuple

from beam_chunking.errors import ParseError
from beam_chunking.parsers.pdf_lines import Line
from beam_chunking.types import Document

#: Resolution pages are rendered at for OCR, dots per inch. On a dense A4 page of 11 pt text
#: 300 dpi reads 98.8% of the words back in order and 200 dpi 92.3%, for about the same time
#: (``bench/ocr.py``): the recogniser scales its input anyway.
RENDER_DPI = 300
#: Points per inch.
_POINTS = 72.0


def want_ocr(mode: str, has_text: bool) -> bool:
    """Whether a page is recognised: every page with ``"always"``; with ``"auto"`` a page
    without text, when the ``ocr`` extra is installed; never with ``"never"``."""
    if mode == "never" or (mode == "auto" and has_text):
        return False
    from beam_chunking.parsers.ocr import ocr_available

    if mode == "auto" and not ocr_available():
        return False
    return True


def ocr_lines(page, index: int, doc: Document) -> Tuple[List[Line], Optional[float]]:
    """The recognised lines of a pypdfium2 page, and their mean confidence (``None`` when
    nothing was recognised).

    Raises:
        MissingExtra: the ``ocr`` extra is not installed (``ocr="always"``).
        ParseError: the page cannot be rendered.
    """
    from beam_chunking.parsers.ocr import recognise

    scale = RENDER_DPI / _POINTS
    try:
        image = page.render(scale=scale).to_pil()
    except Exception as exc:
        raise ParseError(f"PDF: page {index + 1} cannot be rendered for OCR ({exc})",
                         document_id=doc.id, uri=doc.uri) from None
    found = recognise(image)
    lines = []
    for item in found:
        text = " ".join(item.text.split())
        if not text:
            continue
        x0, top, x1, bottom = (v / scale for v in item.box)
        size = max(1.0, bottom - top)
        # The first word's width, by its share of the line's characters.
        first = len(text.split(" ", 1)[0])
        lines.append(Line(text=text, x0=x0, top=top, x1=x1, bottom=bottom, baseline=bottom - 0.2 * size,
                          size=size, bold=False, mono=False,
                          first_word=(x1 - x0) * first / max(1, len(text))))
    if not lines:
        return [], None
    # Box heights vary with ascenders and descenders: lines within a quarter of the usual
    # height are one size, so that only a real change of size (a heading) breaks a paragraph.
    usual = statistics.median(line.size for line in lines)
    lines = [line._replace(size=usual) if abs(line.size - usual) <= 0.25 * usual else line for line in lines]
    confidence = sum(item.confidence for item in found) / len(found)
    return lines, confidence


__all__ = ["RENDER_DPI", "ocr_lines", "want_ocr"]
