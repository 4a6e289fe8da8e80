"""E-mail template: one chunk per part from the e-mail parser's sections; switches."""
from __future__ import annotations

from beam_chunking.domains import EmailChunker
from beam_chunking.parsers import parse
from tests.parsers.fixtures import document, eml_bytes, pdf_bytes

MAIL = eml_bytes(attachments=[("report.pdf", pdf_bytes(["Page one.", "Page two."]), "application/pdf")])


def test_one_chunk_per_part_with_page_range():
    doc = parse(document("m.eml", MAIL))
    chunks = EmailChunker().chunk_document(doc)
    assert [c.metadata["part"] for c in chunks] == ["headers", "body", "attachment:report.pdf"]
    pdf = chunks[2]
    assert (pdf.metadata["page"], pdf.metadata["page_end"]) == (1, 2) and pdf.text == "Page one.\n\nPage two."
    assert all(c.metadata["template"] == "email" and c.metadata["heading"] == "Quarterly report" for c in chunks)
    assert all(c.text == doc.text[c.start:c.end] for c in chunks)


def test_headers_and_attachments_switch_off_and_are_reported():
    doc = parse(document("m.eml", MAIL))
    chunks, dropped = EmailChunker(include_headers=False, include_attachments=False).chunk_with_drops(doc)
    assert [c.metadata["part"] for c in chunks] == ["body"]
    assert [label for label, _ in dropped] == ["headers", "attachment:report.pdf"]


def test_any_document_is_one_body_part():
    [chunk] = EmailChunker().chunk("Just text, not from the e-mail parser.")
    assert chunk.metadata["part"] == "body"
