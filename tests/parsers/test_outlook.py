"""Outlook .msg parser: the same sections as the equivalent .eml, nesting, caps, damaged files."""
from __future__ import annotations

import io
import logging
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from beam_chunking.domains.email import EmailChunker
from beam_chunking.errors import MissingExtra, ParseError
from beam_chunking.parsers.limits import ParseLimits
from beam_chunking.parsers.mail import parse_email
from beam_chunking.parsers.outlook import OUTLOOK, parse_outlook
from beam_chunking.types import Document
from tests.parsers.fixtures import check_sections, document, eml_bytes, section_texts
from tests.parsers.msgfile import CFB_MAGIC, Embedded, cfb_bytes, message_tree, msg_bytes

ATTACHMENTS = [("notes.txt", b"Remember this.\n", "text/plain"), ("data.csv", b"k,v\na,1\n", "text/csv"),
               ("logo.png", b"\x89PNG\r\n\x1a\n" + b"\0" * 20, "image/png")]


def parse(data: bytes, **kwargs):
    return parse_outlook(Document("doc", "message.msg", data, OUTLOOK), **kwargs)


def parts(doc):
    return [s.metadata["part"] for s in doc.sections]


def test_fixture_is_a_valid_msg_file():
    import extract_msg
    import olefile

    big = b"x" * 5000  # over the 4,096-byte mini stream cutoff: stored in regular sectors
    data = msg_bytes(cc=[("Bob", "bob@example.org")], message_id="<m1@example.org>",
                     attachments=[("big.bin", big, "application/octet-stream"), Embedded("Inner")])
    assert data[:8] == CFB_MAGIC and len(data) % 512 == 0
    ole = olefile.OleFileIO(io.BytesIO(data), raise_defects=olefile.DEFECT_INCORRECT)
    assert ole.parsing_issues == []
    assert ole.openstream("__attach_version1.0_#00000000/__substg1.0_37010102").read() == big
    assert ole.exists("__attach_version1.0_#00000001/__substg1.0_3701000D/__properties_version1.0")
    msg = extract_msg.openMsg(io.BytesIO(data))
    try:
        assert (msg.subject, msg.sender, msg.cc) == ("Quarterly report", "Zoë Ångström <zoe@example.org>",
                                                     "Bob <bob@example.org>")
        assert msg.date.isoformat() == "2026-11-30T10:00:00+00:00" and msg.messageId == "<m1@example.org>"
        assert msg.body == "Hello team,\r\nnumbers attached."
        first, second = msg.attachments
        assert (first.longFilename, first.mimetype, first.data) == ("big.bin", "application/octet-stream", big)
        assert second.data.subject == "Quarterly report" and second.name == "Inner.msg"
    finally:
        msg.close()


def test_same_sections_as_the_equivalent_eml():
    doc = parse(msg_bytes(attachments=ATTACHMENTS))
    eml = parse_email(document("message.eml", eml_bytes(attachments=ATTACHMENTS)))
    check_sections(doc)
    assert doc.content_type == OUTLOOK
    assert parts(doc) == ["headers", "body", "attachment:notes.txt", "attachment:data.csv", "attachment:data.csv"]
    assert section_texts(doc) == section_texts(eml)
    assert section_texts(doc)[0].splitlines() == [
        "From: Zoë Ångström <zoe@example.org>", "To: team@example.org", "Date: Mon, 30 Nov 2026 10:00:00 +0000",
        "Subject: Quarterly report"]
    assert section_texts(doc)[1] == "Hello team,\nnumbers attached."  # Outlook's CRLF line ends go
    assert [(s.kind, s.heading_path, s.metadata) for s in doc.sections] == \
        [(s.kind, s.heading_path, s.metadata) for s in eml.sections]
    assert doc.metadata == eml.metadata == {"subject": "Quarterly report",
                                            "attachments_skipped": ["logo.png (image/png)"]}


def test_email_template_gives_one_chunk_per_part():
    chunks = EmailChunker().chunk_document(parse(msg_bytes(attachments=ATTACHMENTS)))
    assert [c.metadata["part"] for c in chunks] == ["headers", "body", "attachment:notes.txt", "attachment:data.csv"]
    assert chunks[1].text == "Hello team,\nnumbers attached."
    assert chunks[3].text == "k | v\n\nk: a\nv: 1"


def test_recipients_and_transport_headers():
    doc = parse(msg_bytes(to=[("Ann Lee", "ann@example.org"), ("", "ops@example.org")],
                          cc=[("Bob", "bob@example.org")]))
    assert section_texts(doc)[0].splitlines()[1:3] == ["To: Ann Lee <ann@example.org>, ops@example.org",
                                                       "Cc: Bob <bob@example.org>"]
    # The headers of a received message are what the sender wrote; properties fill the gaps.
    headers = "From: Real Sender <real@example.org>\r\nTo: list@example.org\r\nSubject: Re: =?utf-8?q?caf=C3=A9?=\r\n"
    lines = section_texts(parse(msg_bytes(headers=headers, cc=[("Bob", "bob@example.org")])))[0].splitlines()
    assert lines[:3] == ["From: Real Sender <real@example.org>", "To: list@example.org", "Cc: Bob <bob@example.org>"]
    assert lines[-1] == "Subject: Quarterly report"  # PR_SUBJECT is the decoded subject already


def test_html_only_body_is_converted_and_plain_preferred():
    html = "<html><body><h1>News</h1><p>Big <b>day</b> — café.</p><script>x()</script></body></html>"
    assert section_texts(parse(msg_bytes(body=None, html=html)))[1] == "News\n\nBig day — café."
    assert section_texts(parse(msg_bytes(body="plain wins", html=html)))[1] == "plain wins"


def test_rich_text_body_gives_the_html_it_encapsulates():
    rtf = (rb"{\rtf1\ansi\ansicpg1252\fromhtml1 \deff0{\fonttbl{\f0\fswiss Arial;}}{\*\htmltag1 <html>}"
           rb"{\*\htmltag50 <body>}{\*\htmltag64 <p>}Rich {\*\htmltag84 <b>}day{\*\htmltag92 </b>}."
           rb"{\*\htmltag72 </p>}{\*\htmltag58 </body>}{\*\htmltag9 </html>}}")
    assert section_texts(parse(msg_bytes(body=None, rtf=rtf)))[1] == "Rich day."
    tree = message_tree(body=None)
    tree["__substg1.0_10090102"] = b"\x10\x00\x00\x00 not LZFu at all"  # a damaged compressed RTF stream
    doc = parse(cfb_bytes(tree))
    assert parts(doc) == ["headers"] and doc.metadata["outlook_notes"][0].startswith("the RTF body cannot be read")


def test_attached_messages_nest_like_forwarded_emails():
    inner = Embedded("Inner", {"subject": "Inner", "body": "Forwarded body.",
                               "attachments": [("in.txt", b"deep text", "text/plain")]})
    doc = parse(msg_bytes(attachments=[("notes.txt", b"Remember this.", "text/plain"), inner]))
    check_sections(doc)
    assert parts(doc) == ["headers", "body", "attachment:notes.txt", "attachment:Inner.msg/headers",
                          "attachment:Inner.msg/body", "attachment:Inner.msg/attachment:in.txt"]
    assert section_texts(doc)[-3].endswith("Subject: Inner") and section_texts(doc)[-1] == "deep text"
    assert doc.sections[-1].heading_path == ("Inner",)
    chunks = EmailChunker(include_attachments=False).chunk_document(doc)
    assert [c.metadata["part"] for c in chunks] == ["headers", "body"]


def test_nesting_stops_at_max_attachment_depth():
    innermost = Embedded("Innermost", {"subject": "Innermost", "body": "Deepest body."})
    middle = Embedded("Middle", {"subject": "Middle", "body": "Middle body.", "attachments": [innermost]})
    data = msg_bytes(attachments=[middle])
    doc = parse(data, limits=ParseLimits(max_attachment_depth=2))
    assert "Middle body." in doc.text and "Deepest body." not in doc.text
    assert doc.metadata["attachments_skipped"] == ["Innermost.msg (nested deeper than max_attachment_depth)"]
    assert "Deepest body." in parse(data).text  # default depth 3
    assert "Middle body." not in parse(data, limits=ParseLimits(max_attachment_depth=1)).text


def test_bodies_and_attachments_are_capped_in_bytes():
    data = msg_bytes(attachments=[("big.txt", b"word " * 2000, "text/plain")])
    with pytest.raises(ParseError, match="max_uncompressed_bytes=5000"):
        parse(data, limits=ParseLimits(max_uncompressed_bytes=5000))
    assert parse(data, limits=ParseLimits(max_uncompressed_bytes=20000)).sections[-1].metadata["part"] == \
        "attachment:big.txt"


def test_unreadable_attachment_is_listed_and_the_message_kept():
    tree = message_tree(attachments=[("notes.txt", b"Remember this.", "text/plain")])
    # No attach method and no data: MS-OXMSG requires one, so extract-msg calls it broken.
    tree["__attach_version1.0_#00000001"] = {"__substg1.0_3707001F": "x.txt".encode("utf-16-le"),
                                             "__properties_version1.0": bytes(8)}
    doc = parse(cfb_bytes(tree))
    assert parts(doc) == ["headers", "body", "attachment:notes.txt"]
    assert doc.metadata["attachments_failed"] == ["x.txt: extract-msg cannot read it"]


@pytest.mark.parametrize("data,reason", [
    (b"", "not an OLE compound file"),
    (b"From: a@example.org\r\n\r\nan .eml renamed .msg\r\n" * 50, "not an OLE compound file"),
    (msg_bytes()[:1536], "extract-msg cannot read it"),  # truncated after two sectors
    (msg_bytes()[:512] + b"\xff" * 2048, "extract-msg cannot read it"),  # sectors overwritten
    (cfb_bytes({"WordDocument": b"\0" * 100}), "extract-msg cannot read it"),  # OLE, but a .doc
])
def test_damaged_or_foreign_files_fail_with_one_clear_line(data, reason):
    with pytest.raises(ParseError) as info:
        parse(data)
    message = str(info.value)
    assert "Outlook .msg: " + reason in message and "\n" not in message
    assert "message.msg" in message  # names the file


_CORRUPTIBLE = msg_bytes(html="<p>x</p>", attachments=[*ATTACHMENTS, ("big.bin", b"y" * 6000, "application/pdf"),
                                                         Embedded("Inner", {"attachments": ATTACHMENTS[:1]})])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, len(_CORRUPTIBLE) - 1), st.integers(0, 255)), min_size=1, max_size=20),
       st.integers(0, len(_CORRUPTIBLE)))
def test_corrupted_bytes_parse_or_fail_with_a_parse_error(writes, cut):
    data = bytearray(_CORRUPTIBLE)
    for offset, value in writes:
        data[offset] = value
    try:
        doc = parse(bytes(data[:cut]))
    except ParseError as exc:
        assert str(exc).startswith("message.msg: Outlook .msg: ") and "\n" not in str(exc)
    else:
        check_sections(doc)


def test_extract_msg_is_quiet_at_info(caplog):
    with caplog.at_level(logging.INFO):
        parse(msg_bytes(body=None, html="<p>x</p>", attachments=[Embedded("Inner")]))
    assert [r.getMessage() for r in caplog.records if r.name.startswith("extract_msg")] == []


def test_without_extract_msg_the_error_names_the_msg_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "extract_msg", None)  # makes "import extract_msg" raise ImportError
    with pytest.raises(MissingExtra, match=r"beam-chunking\[msg\]"):
        parse(msg_bytes())
