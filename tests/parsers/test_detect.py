"""Content-type detection: magic bytes, names, conservative sniffing, and types forced by pattern."""
import base64
import codecs
import gzip
import json
import random
import zlib
from email.message import EmailMessage
from pathlib import Path

import pytest

from beam_chunking.errors import ConfigError, ParseError
from beam_chunking.parsers import check_content_types, parse
from beam_chunking.parsers.detect import SNIFF_BYTES, content_type_pairs, detect_content_type, looks_binary
from beam_chunking.types import Document


def email_bytes() -> bytes:
    """A message with a text body and a base64 attachment, as a mail client saves it."""
    message = EmailMessage()
    message["From"] = "Ada <ada@example.com>"
    message["To"] = "team@example.com"
    message["Subject"] = "Quarterly figures"
    message["Date"] = "Mon, 2 Dec 2024 09:00:00 +0000"
    message.set_content("Hello team,\n\nthe figures are attached.\n\nAda\n")
    message.add_attachment(bytes(range(256)) * 8, maintype="application", subtype="octet-stream",
                           filename="figures.bin")
    return message.as_bytes()


@pytest.mark.parametrize("name", ["saved.txt", "saved", "saved.message", "inbox/1234"])
def test_email_without_eml_extension_is_parsed_as_email(name):
    data = email_bytes()
    assert detect_content_type(name, data) == "message/rfc822"
    doc = parse(Document("d", name, data, detect_content_type(name, data)))
    parts = [s.metadata["part"] for s in doc.sections]
    assert parts == ["headers", "body"]  # the binary attachment is skipped, not chunked as text
    assert doc.metadata["attachments_skipped"] == ["figures.bin (application/octet-stream)"]
    encoded = base64.b64encode(bytes(range(256)) * 8).decode()[:40]
    assert encoded not in doc.text and "the figures are attached" in doc.text


@pytest.mark.parametrize("data", [
    b"Note: buy milk\nand bread\n",
    b"Title: A walk in the park\nAuthor: Ada\n\nIt was a sunny day.\n",
    b"Subject: meeting\nDate: Monday\n\nLet us meet.\n",  # no field that only a message has
    b"From: Ada\nTo: Bob\n",  # a list of lines, no blank line ending a header block
    b"From the start, this was a story about colons: many of them.\n\nMore text.\n",
    b"Q: what is it?\nA: a plain text file.\n",
    b"---\ntitle: Front matter\n---\n# Heading\n\nSome prose follows here.\n",
    b"--- Chapter 1 ---\nIt begins.\n",
    b"key: value\nother: value\n",  # could be YAML, but so could many a text file
    b"[1] Introduction\n\nThis paper ...\n",
    b"{ this is not json }\n",
    b"<!-- a comment, then prose -->\nHello.\n",
    b"<script>alert('x')</script> & <b>bold</b>\n",  # markup in a text file is text
    b"<p>A fragment of HTML stays text: nothing in it is lost.</p>\n",
])
def test_plain_text_stays_plain(data):
    assert detect_content_type("notes.txt", data) == "text/plain"
    assert detect_content_type("notes", data) == "text/plain"


@pytest.mark.parametrize("data,expected", [
    (b"<!DOCTYPE html>\n<html><body><p>Hi</p></body></html>", "text/html"),
    (b"  <html lang='en'><head><title>x</title></head></html>", "text/html"),
    (b"<!-- generated -->\n<html><body>x</body></html>", "text/html"),
    (b'<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html>\n<html xmlns="http://www.w3.org/1999/xhtml"/>',
     "text/html"),
    (b'<?xml version="1.0"?>\n<html xmlns="http://www.w3.org/1999/xhtml"><body/></html>', "text/html"),
    (b'<?xml version="1.0"?>\n<!-- catalogue -->\n<catalog><book id="1"/></catalog>', "application/xml"),
    (b'<?xml version="1.0"?>\n<a href="x"/>', "application/xml"),  # <a> after a declaration is XML
    (b'{"name": "beam", "tags": ["a", "b"], "n": -1.5e3, "ok": true, "none": null}', "application/json"),
    (b'[\n  {"id": 1},\n  {"id": 2}\n]\n', "application/json"),
    (b'{"id": 1}\n{"id": 2}\n', "application/json"),  # JSON Lines
    (b"[]", "application/json"),
    (b"---\nname: build\non: [push]\njobs:\n  test:\n    runs-on: ubuntu\n", "application/yaml"),
    (b"%YAML 1.2\n---\na: 1\n", "application/yaml"),
    (b"#!/usr/bin/env python3\nprint('hi')\n", "text/x-python"),
    (b"#!/bin/bash\necho hi\n", "text/x-shell"),
    (b"#!/usr/bin/env -S node --no-warnings\nconsole.log(1)\n", "text/x-javascript"),
    (b"#!/usr/bin/unknown-interpreter\nstuff\n", "text/plain"),
    # A mailbox: a From_ line (mbox, RFC 4155; Mailman writes "at" for "@"), then a header block.
    (b"From MAILER-DAEMON Fri Apr 06 16:46:09 2001\nReceived: from relay\nFrom: a@example.com\n"
     b"Subject: hi\n\nbody\n", "application/mbox"),
    (b"From barry at python.org  Thu Apr  5 13:27:43 2001\nFrom: barry at python.org (Barry)\nDate: Thu, 5 Apr "
     b"2001\nSubject: hi\nMessage-ID: <1@python.org>\n\nbody\n", "application/mbox"),
    (b"From 1234@xxx Sat Jan 03 01:05:34 +0000 2019\nFrom: a@example.com\nSubject: s\n\nb\n", "application/mbox"),
    (b"From - Sat Jan  3 01:05:34 1996 +0100\nFrom: a@example.com\nSubject: s\n\nb\n", "application/mbox"),
    (b"From here on, the story takes a turn.\nFrom: nobody\n\nText.\n", "text/plain"),  # no date: prose
])
def test_sniffed_types(data, expected):
    assert detect_content_type("file", data) == expected
    assert detect_content_type("file.txt", data) == expected


def test_sniffing_reads_only_the_first_bytes():
    late = b"plain words " * (SNIFF_BYTES // 12 + 1) + b"<html><body>x</body></html>"
    assert detect_content_type("file", late) == "text/plain"
    # A JSON document larger than the window, cut inside a string, is still JSON.
    big = json.dumps({"rows": [{"id": k, "text": "lorem ipsum " * 20} for k in range(100)]}).encode()
    assert len(big) > SNIFF_BYTES and detect_content_type("dump", big) == "application/json"
    # A header block longer than the window (a long Received chain) is still an e-mail.
    hops = b"".join(b"Received: from relay%d.example.com by mx.example.com;\n" % k for k in range(300))
    assert detect_content_type("msg", b"Delivered-To: a@example.com\n" + hops + b"\nbody") == "message/rfc822"


def test_utf16_with_byte_order_mark_is_sniffed_as_text():
    page = codecs.BOM_UTF16_LE + "<!DOCTYPE html><html><body>é</body></html>".encode("utf-16-le")
    assert detect_content_type("page", page) == "text/html"


@pytest.mark.parametrize("name,expected", [
    ("Main.kt", "text/x-kotlin"), ("build.gradle.kts", "text/x-kotlin"), ("App.scala", "text/x-scala"),
    ("deploy.sh", "text/x-shell"), ("schema.sql", "text/x-sql"), ("init.lua", "text/x-lua"),
    ("config.json", "application/json"), ("ci.yaml", "application/yaml"), ("ci.yml", "application/yaml"),
    ("pyproject.toml", "application/toml"), ("pom.xml", "application/xml"),
    ("Dockerfile", "text/x-dockerfile"), ("Makefile", "text/x-make"), ("CMakeLists.txt", "text/x-cmake"),
    ("app.log", "text/plain"), ("archive.mbox", "application/mbox"),
])
def test_types_by_name(name, expected):
    assert detect_content_type(f"repo/{name}", b"plain: text with a colon\n") == expected


def test_data_formats_parse_as_code_sections_with_their_language():
    data = b'{\n  "name": "beam"\n}\n'
    doc = parse(Document("d", "x.json", data, detect_content_type("x.json", data)))
    [section] = doc.sections
    assert (doc.content_type, section.kind, section.metadata["language"]) == ("application/json", "code", "json")
    assert doc.text == data.decode()


@pytest.mark.parametrize("name,data,expected", [
    ("a.txt", b"%PDF-1.7\n...", "application/pdf"),
    ("a.json", b'{"a": 1}\x00\x00', "application/octet-stream"),
    ("saved", b"From: a@example.com\nTo: b@example.com\n\n\x00\x01binary", "application/octet-stream"),
    ("a.yaml", b"\x7fELF\x02\x01", "application/x-executable"),
])
def test_binary_is_never_text(name, data, expected):
    assert detect_content_type(name, data) == expected


def test_forced_types_win_over_detection_first_pattern_first():
    forced = content_type_pairs({"*/logs/*": "text/plain", "*.log": "application/json"})
    mail = email_bytes()
    assert detect_content_type("/data/logs/saved.txt", mail, forced) == "text/plain"
    assert detect_content_type("/data/app.log", b'{"a": 1}', forced) == "application/json"
    assert detect_content_type("/data/saved.txt", mail, forced) == "message/rfc822"  # no pattern matches


def test_forced_types_match_the_gz_name_and_the_name_inside():
    forced = content_type_pairs({"*.log": "text/plain"})
    assert detect_content_type("/d/app.log", b"{}", forced, source="/d/app.log.gz") == "text/plain"
    forced = content_type_pairs({"*.dump.gz": "application/json"})
    assert detect_content_type("/d/x.dump", b"[1]", forced, source="/d/x.dump.gz") == "application/json"


def test_a_text_type_is_never_forced_on_a_binary_file():
    forced = content_type_pairs({"*.txt": "text/plain"})
    with pytest.raises(ParseError, match=r"/d/a\.txt: content_types forces text/plain on \*\.txt, but the file is "
                                         r"binary \(application/pdf\)"):
        detect_content_type("/d/a.txt", b"%PDF-1.7\n", forced)
    assert detect_content_type("/d/a.txt", b"%PDF-1.7\n", content_type_pairs({"*.txt": "application/pdf"})) == \
        "application/pdf"


def test_relative_patterns_are_made_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    [(pattern, _)] = content_type_pairs({"docs/*.log": "text/plain"})
    assert pattern == f"{tmp_path}/docs/*.log"
    assert content_type_pairs({"*.log": "text/plain"}) == (("*.log", "text/plain"),)


@pytest.mark.parametrize("value,message", [
    ({"*.log": "text/plane"}, "content_types.*.log: 'text/plane' has no parser; did you mean 'text/plain'?"),
    ({"*.kt": "text/x-kotlinn"}, "did you mean 'text/x-kotlin'?"),
    ({"": "text/plain"}, "content_types: expected file patterns"),
    ({"*.x": 3}, "content_types.*.x: 3 has no parser"),
])
def test_forced_types_must_have_a_parser(value, message):
    with pytest.raises(ConfigError) as caught:
        check_content_types(value)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_check_content_types_keeps_the_order():
    assert check_content_types([("*.b", "text/plain"), ("*.a", "text/markdown")]) == (
        ("*.b", "text/plain"), ("*.a", "text/markdown"))
    assert check_content_types(None) == ()


def info_file() -> bytes:
    """A GNU Info file as makeinfo writes it: \\x1f opens each node, the tag table marks
    node offsets with DEL, and the index node holds NUL-BS markers."""
    nodes = [b"\x1f\nFile: tool.info,  Node: Top,  Next: Usage,  Up: (dir)\n\nTool\n****\n\n"
             + b"This manual is for Tool, a program that does things.\n" * 20]
    nodes += [b"\x1f\nFile: tool.info,  Node: Usage,  Prev: Top,  Up: Top\n\n1 Usage\n*******\n\n"
              + b"Run 'tool --help' to see the options.\n" * 30]
    nodes += [b"\x1f\nFile: tool.info,  Node: Index,  Prev: Usage,  Up: Top\n\nIndex\n*****\n\n"
              + b"\x00\x08[index\x00\x08]\n* Menu:\n\n* options:   Usage.   (line 6)\n"]
    table = b"\x1f\nTag Table:\nNode: Top\x7f80\nNode: Usage\x7f1200\nNode: Index\x7f2400\n\x1f\nEnd Tag Table\n"
    return b"This is tool.info, produced by makeinfo version 7.0 from tool.texi.\n\n" + b"".join(nodes) + table


def test_gnu_info_files_are_text():
    data = info_file()
    assert looks_binary(data) is False
    assert detect_content_type("tool.info", data) == "text/plain"
    # A tag-table-only file (the head of a split manual) is mostly \x1f and DEL separators.
    table = b"This is big.info.\n\n\x1f\nIndirect:\nbig.info-1: 100\n\x1f\nTag Table:\n(Indirect)\n" + b"".join(
        b"Node: Section %d\x7f%d\n" % (k, 100 * k) for k in range(300)) + b"\x1f\nEnd Tag Table\n"
    assert looks_binary(table) is False
    # The same DEL bytes without the Info structure are binary.
    assert looks_binary(table.replace(b"\x1f", b"")) is True


def test_installed_info_manuals_are_text():
    manuals = sorted(Path("/usr/share/info").glob("*.info*.gz"))
    if not manuals:
        pytest.skip("no GNU Info manuals installed in /usr/share/info")
    for path in manuals:
        assert not looks_binary(gzip.decompress(path.read_bytes())), path


@pytest.mark.parametrize("name,data,binary", [
    ("few NUL bytes in a UTF-8 log", "ünïcode log line\n".encode() * 60 + b"\x00\x00\x00" + b"tail\n", False),
    ("terminal colours", b"\x1b[1;32mPASS\x1b[0m test_x\n" * 50, False),
    ("nroff bold (backspaces) and a form feed", b"N\bNA\bAM\bME\bE\n\tls\n\f" * 20, False),
    ("DOS end-of-file mark", "Grüße aus Köln.\r\n".encode("cp1252") * 5 + b"\x1a", False),
    ("legacy text with one stray control byte", "café crème\n".encode("latin-1") * 3 + b"\x02", False),
    ("NUL bytes in text that is not UTF-8", "café\n".encode("cp1252") * 100 + b"\x00\x00", True),
    ("UTF-16 without a byte-order mark", "plain English text\n".encode("utf-16-le") * 10, True),
    ("a NUL-padded tar header", b"notes.txt" + b"\x00" * 91 + b"0000644\x00" + b"\x00" * 404, True),
    ("compressed bytes", zlib.compress(random.Random(3).randbytes(6000)), True),
    ("random bytes without NUL", random.Random(4).randbytes(4096).replace(b"\x00", b"\x01"), True),
    ("two control bytes in a short file", b'{"a": 1}\x00\x00', True),
])
def test_text_or_binary_by_the_share_of_control_bytes(name, data, binary):
    assert looks_binary(data) is binary, name
    assert (detect_content_type("file.txt", data) == "application/octet-stream") is binary, name


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32", "utf-32-be"])
def test_utf16_and_utf32_with_byte_order_marks_are_text(encoding):
    text = "<!DOCTYPE html><html><body>é 日本</body></html>"
    data = text.encode(encoding)
    bom = {"utf-16-be": codecs.BOM_UTF16_BE, "utf-32-be": codecs.BOM_UTF32_BE}.get(encoding, b"")
    data = bom + data
    assert looks_binary(data) is False
    assert detect_content_type("page", data) == "text/html"
    assert parse(Document("d", "page.txt", data, "text/plain")).text == text
