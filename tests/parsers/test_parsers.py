import codecs

import pytest

from beam_chunking.errors import DecodeError, UnsupportedContentType
from beam_chunking.parsers import parse
from beam_chunking.parsers.decode import decode_text
from beam_chunking.parsers.detect import detect_content_type
from beam_chunking.parsers.markdown import clean_heading, parse_markdown
from beam_chunking.types import Document


def md(text):
    return parse_markdown(Document("d", "x.md", text.encode(), "text/markdown"))


@pytest.mark.parametrize("uri,data,expected", [
    ("a.txt", b"hello", "text/plain"),
    ("a.md", b"# hi", "text/markdown"),
    ("a.txt", b"%PDF-1.7\n...", "application/pdf"),
    ("a.pdf", b"%PDF-1.7", "application/pdf"),
    ("a.zip", b"PK\x03\x04....", "application/zip"),
    ("a.txt", b"\x7fELF\x02\x01", "application/x-executable"),
    ("a.txt", b"abc\x00\x00def", "application/octet-stream"),
    ("README", b"plain words", "text/plain"),
    ("a.txt", codecs.BOM_UTF16_LE + "hi".encode("utf-16-le"), "text/plain"),
    ("MZ.txt", b"MZ is how this text starts", "text/plain"),
])
def test_detect(uri, data, expected):
    assert detect_content_type(uri, data) == expected


def test_decode_boms():
    assert decode_text(codecs.BOM_UTF8 + "héllo".encode()) == ("héllo", 0)
    assert decode_text(codecs.BOM_UTF16_LE + "héllo".encode("utf-16-le")) == ("héllo", 0)
    assert decode_text(codecs.BOM_UTF16_BE + "héllo".encode("utf-16-be")) == ("héllo", 0)


def test_invalid_utf8_names_offset_or_counts_replacements():
    data = b"caf\xe9 ok \xff"
    with pytest.raises(DecodeError, match="byte offset 3"):
        decode_text(data, uri="x.txt")
    text, n = decode_text(data, errors="replace")
    assert n == 2 and text.count("\ufffd") == 2


def test_unsupported_type_is_never_text():
    with pytest.raises(UnsupportedContentType, match="image/gif"):
        parse(Document("d", "x.gif", b"GIF89a", "image/gif"))


def test_parse_records_size_and_sha():
    doc = parse(Document("d", "x.txt", b"hello", "text/plain"))
    assert doc.size_bytes == 5 and doc.sha256.startswith("2cf24dba")
    assert [doc.text[s.start:s.end] for s in doc.sections] == ["hello"]


def test_markdown_heading_paths():
    doc = md("# A\na\n### B\nb\n## C\nc\n# D\n")
    assert [s.heading_path for s in doc.sections] == [("A",), ("A", "B"), ("A", "C"), ("D",)]
    assert [s.level for s in doc.sections] == [1, 3, 2, 1]


def test_markdown_fence_hides_hashes_and_sections_cover_text():
    text = "intro\n```\n# not heading\n```\n# Real\nbody\n~~~\n## nope\n~~~\n"
    doc = md(text)
    assert [s.heading_path for s in doc.sections] == [(), ("Real",)]
    assert doc.sections[0].start == 0 and doc.sections[-1].end == len(text)
    assert all(a.end == b.start for a, b in zip(doc.sections, doc.sections[1:]))


def test_setext_and_crlf():
    doc = md("Title\r\n=====\r\ntext\r\n\r\nSub\r\n---\r\nmore\r\n")
    assert [s.heading_path for s in doc.sections] == [("Title",), ("Title", "Sub")]


def test_clean_heading_text():
    assert clean_heading("[Install](x.md) *now* `fast` **really** <b>x</b>") == "Install now fast really x"
