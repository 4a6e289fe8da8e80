"""E-mail parser: headers, body, attachments parsed by their own parsers, every encoding."""
from __future__ import annotations

import pytest

from beam_chunking.errors import ParseError
from beam_chunking.parsers.mail import parse_email, parse_mbox
from tests.parsers.fixtures import check_sections, docx_bytes, document, eml_bytes, pdf_bytes, section_texts


def parse(data: bytes):
    return parse_email(document("message.eml", data))


def parts(doc):
    return [s.metadata["part"] for s in doc.sections]


def test_headers_body_and_attachments():
    attachments = [
        ("report.pdf", pdf_bytes(["Revenue grew.", "Costs fell."]), "application/pdf"),
        ("notes.docx", docx_bytes([("heading", 1, "Notes"), ("p", "Remember this.")]),
         "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
        ("data.csv", b"k,v\na,1\n", "text/csv"),
        ("logo.png", b"\x89PNG\r\n\x1a\n" + b"\0" * 20, "image/png"),
    ]
    doc = parse(eml_bytes(attachments=attachments))
    check_sections(doc)
    assert parts(doc) == ["headers", "body", "attachment:report.pdf",
                          "attachment:notes.docx", "attachment:data.csv", "attachment:data.csv"]
    texts = section_texts(doc)
    assert texts[0].splitlines() == [
        "From: Zoë Ångström <zoe@example.org>", "To: team@example.org", "Date: Mon, 30 Nov 2026 10:00:00 +0000",
        "Subject: Quarterly report"]
    assert texts[1] == "Hello team,\nnumbers attached."
    # The PDF's pages are one section, and its lines keep their boxes, moved with the text.
    assert doc.sections[2].page == 1 and texts[2] == "Revenue grew.\n\nCosts fell."
    assert [(doc.text[b.start:b.end], b.page) for b in doc.boxes] == [("Revenue grew.", 1), ("Costs fell.", 2)]
    assert doc.sections[3].heading_path == ("Quarterly report", "Notes")
    assert texts[4] == "k | v" and doc.sections[5].metadata["row"] == 2 and texts[5] == "k: a\nv: 1"
    assert doc.metadata["attachments_skipped"] == ["logo.png (image/png)"]
    assert all(s.heading_path[0] == "Quarterly report" for s in doc.sections)


@pytest.mark.parametrize("charset", ["utf-8", "iso-8859-1", "koi8-r", "shift_jis"])
def test_charsets_and_transfer_encodings(charset):
    body = {"koi8-r": "Привет, мир", "shift_jis": "こんにちは世界"}.get(charset, "Grüße, café")
    doc = parse(eml_bytes(subject="Ünïcödé — 件名", body=body, charset=charset))
    assert section_texts(doc)[1] == body
    assert doc.metadata["subject"] == "Ünïcödé — 件名"


@pytest.mark.parametrize("content_type", [
    "text/enriched",  # another text type
    "text/plain; charset=x-unknown",  # a charset Python does not know: read as a text file's bytes
    "text/html; charset=x-unknown",
    "multipart/report; report-type=delivery-status; bo",  # the boundary parameter cut short
    "multipart/mixed; boundary=zzz",  # a boundary that never occurs
])
def test_a_one_part_body_of_any_text_is_kept(content_type):
    raw = (f"From: a@example.com\nTo: b@example.com\nSubject: Returned mail\nMIME-Version: 1.0\n"
           f"Content-Type: {content_type}\n\nThe original message was received at 09:23.\n").encode()
    doc = parse(raw)
    check_sections(doc)
    assert "The original message was received at 09:23." in doc.text


def test_a_mailbox_is_each_of_its_messages():
    first = eml_bytes(subject="First", body="Hello list.\n\nFrom here on, a paragraph that starts with From.")
    box = (b"From barry at python.org  Thu Apr  5 13:27:43 2001\n" + first + b"\n\n"
           b"From guido@python.org Fri Apr  6 09:00:00 2001\n" + eml_bytes(subject="Re: First", body="Hi.") + b"\n"
           b"\nFrom someone Sat Apr  7 10:00:00 2001\nno headers, only words\n")
    doc = parse_mbox(document("2001-April.mbox", box))
    check_sections(doc)
    assert parts(doc) == ["message-1/headers", "message-1/body", "message-2/headers", "message-2/body",
                          "message-3/body"]
    assert "From here on, a paragraph that starts with From." in section_texts(doc)[1]  # not a From_ line
    assert [s.heading_path for s in doc.sections[:4]] == [("First",), ("First",), ("Re: First",), ("Re: First",)]
    assert doc.metadata["messages"] == 3 and doc.metadata["messages_failed"] == ["message 3: no RFC 5322 headers"]
    assert section_texts(doc)[4] == "From someone Sat Apr  7 10:00:00 2001\nno headers, only words"
    # One message: the parts of an .eml.
    single = parse_mbox(document("one.mbox", b"\nFrom a@example.com Thu Apr  5 13:27:43 2001\n" + first))
    assert parts(single) == parts(parse(first)) and single.metadata["messages"] == 1
    assert single.metadata["subject"] == parse(first).metadata["subject"] == "First"
    # Text before the first From_ line is kept, not read as a header block.
    noted = parse_mbox(document("a.mbox", b"Warning: this archive is incomplete.\n\n" + box))
    assert parts(noted)[:2] == ["preamble", "message-1/headers"]
    assert section_texts(noted)[0] == "Warning: this archive is incomplete." and noted.metadata["messages"] == 3
    # A .mbox without any From_ line (an .eml renamed) is one message.
    assert parts(parse_mbox(document("renamed.mbox", first))) == parts(parse(first))
    with pytest.raises(ParseError, match="mailbox: the file is empty"):
        parse_mbox(document("empty.mbox", b"\n"))


def test_html_only_body_is_converted_and_plain_preferred():
    html = "<html><body><h1>News</h1><p>Big <b>day</b>.</p><script>x()</script></body></html>"
    assert section_texts(parse(eml_bytes(body=None, html=html)))[1] == "News\n\nBig day."
    assert section_texts(parse(eml_bytes(body="plain wins", html=html)))[1] == "plain wins"


def test_bad_attachment_does_not_fail_the_message_and_nesting():
    inner = eml_bytes(subject="Inner", body="Forwarded body.")
    data = eml_bytes(attachments=[("broken.pdf", b"%PDF-1.4 cut", "application/pdf"),
                                  ("fwd.eml", inner, "message/rfc822")])
    doc = parse(data)
    assert "broken.pdf: ParseError" in doc.metadata["attachments_failed"][0]
    assert parts(doc)[-2:] == ["attachment:fwd.eml/headers", "attachment:fwd.eml/body"]
    assert section_texts(doc)[-1] == "Forwarded body."
    assert section_texts(doc)[-2].endswith("Subject: Inner")


def test_nesting_stops_at_max_attachment_depth():
    from beam_chunking.parsers.limits import ParseLimits

    inner = eml_bytes(subject="Innermost", body="Deepest body.")
    middle = eml_bytes(subject="Middle", body="Middle body.", attachments=[("in.eml", inner, "message/rfc822")])
    outer = eml_bytes(attachments=[("mid.eml", middle, "message/rfc822")])
    doc = parse_email(document("m.eml", outer), limits=ParseLimits(max_attachment_depth=2))
    assert "Middle body." in doc.text and "Deepest body." not in doc.text
    assert doc.metadata["attachments_skipped"] == ["in.eml (nested deeper than max_attachment_depth)"]
    assert "Deepest body." in parse_email(document("m.eml", outer)).text  # default depth 3


def test_base64_encoded_forwarded_message():
    import email.policy
    from email.message import EmailMessage

    outer = EmailMessage()
    outer["Subject"] = "Outer"
    outer.set_content("see attached")
    outer.add_attachment(eml_bytes(subject="Inner", body="Deep body."), maintype="message", subtype="rfc822",
                         filename="fwd.eml")
    doc = parse(outer.as_bytes(policy=email.policy.default))
    assert parts(doc)[-2:] == ["attachment:fwd.eml/headers", "attachment:fwd.eml/body"]
    assert section_texts(doc)[-1] == "Deep body."


def test_not_an_email():
    with pytest.raises(ParseError, match="empty"):
        parse(b"")
    with pytest.raises(ParseError, match="not an e-mail"):
        parse(b"just some words\nand more")


def test_a_spent_time_budget_fails_the_message_another_cap_only_its_attachment():
    from beam_chunking.errors import LimitExceeded
    from beam_chunking.parsers import parse as parse_any
    from beam_chunking.parsers.limits import ParseLimits
    from tests.parsers.fixtures import shared_stream_pdf

    slow = eml_bytes(attachments=[("slow.pdf", shared_stream_pdf(pages=200, lines=400), "application/pdf")])
    with pytest.raises(LimitExceeded, match="max_parse_seconds=0.05"):
        parse_any(document("message.eml", slow), limits=ParseLimits(max_parse_seconds=0.05))
    wide = eml_bytes(attachments=[("wide.csv", b"a,b,c\n1,2,3\n", "text/csv")])
    doc = parse_any(document("message.eml", wide), limits=ParseLimits(max_columns=2))
    assert doc.metadata["attachments_failed"][0].startswith("wide.csv: LimitExceeded: ")
    assert "limits.max_columns=2" in doc.metadata["attachments_failed"][0]
