"""Scanned PDF pages (an image, no text layer) read by OCR, with their boxes in page points."""
from __future__ import annotations

import io

from beam_chunking.parsers.pdf import parse_pdf
from tests.parsers.fixtures import document
from tests.parsers.ocr_images import draw, needs_ocr, recovered

PARAGRAPHS = [
    ["The harbour master kept a ledger of every ship", "that entered the bay during the winter storms."],
    ["Each entry named the vessel, its cargo and the", "hour the pilot boat brought it to the quay."],
]


def scanned_pdf() -> bytes:
    """A one-page PDF whose page is only an image of two paragraphs of text."""
    from fpdf import FPDF

    image, _ = draw([(60, 60, PARAGRAPHS[0]), (60, 200, PARAGRAPHS[1])], size=(1240, 400), font_size=30)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    pdf = FPDF(unit="pt", format=(620, 200))
    pdf.add_page()
    pdf.image(buffer, x=0, y=0, w=620, h=200)  # 2 pixels per point
    return bytes(pdf.output())


def test_a_scanned_page_is_read_by_ocr_into_paragraphs_with_boxes_in_points():
    needs_ocr()
    doc = parse_pdf(document("scan.pdf", scanned_pdf()), ocr="auto")
    expected = " ".join(" ".join(p) for p in PARAGRAPHS)
    assert recovered(expected, doc.text) >= 0.95
    assert len(doc.text.split("\n\n")) == 2  # the gap between the two paragraphs
    assert doc.metadata["ocr_pages"] == 1 and 0.5 < doc.metadata["ocr_confidence"] <= 1.0
    assert "pdf_pages_without_text" not in doc.metadata
    # The first line was drawn from (60, 60) px, which is (30, 30) pt on the page.
    first = doc.boxes[0]
    assert first.page == 1 and abs(first.x0 - 30) < 8 and abs(first.y0 - 30) < 8 and first.x1 < 620


def test_ocr_never_leaves_a_scanned_page_counted_as_without_text():
    doc = parse_pdf(document("scan.pdf", scanned_pdf()), ocr="never")
    assert doc.text == "" and doc.metadata["pdf_pages_without_text"] == 1
