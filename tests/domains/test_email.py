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


def test_a_mailbox_is_one_chunk_per_part_of_each_message():
    box = b"".join(b"From sender@example.com  Thu Apr  5 13:27:43 2001\n" + eml_bytes(
        subject=f"Report {k}", attachments=[("report.pdf", pdf_bytes([f"Page of report {k}."]), "application/pdf")])
        + b"\n\n" for k in (1, 2))
    doc = parse(document("archive.mbox", box))
    chunks = EmailChunker().chunk_document(doc)
    assert [c.metadata["part"] for c in chunks] == [
        f"message-{k}/{part}" for k in (1, 2) for part in ("headers", "body", "attachment:report.pdf")]
    assert [c.metadata["heading"] for c in chunks] == ["Report 1"] * 3 + ["Report 2"] * 3
    chunks, dropped = EmailChunker(include_headers=False, include_attachments=False).chunk_with_drops(doc)
    assert [c.metadata["part"] for c in chunks] == ["message-1/body", "message-2/body"]
    assert len(dropped) == 4


def test_any_document_is_one_body_part():
    [chunk] = EmailChunker().chunk("Just text, not from the e-mail parser.")
    assert chunk.metadata["part"] == "body"
