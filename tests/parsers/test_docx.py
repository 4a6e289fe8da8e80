"""DOCX parser: heading styles, lists, tables in order; hostile containers."""
from __future__ import annotations

import io
import zipfile

import pytest

from beam_chunking.errors import ParseError
from beam_chunking.parsers.docx import parse_docx
from tests.parsers.fixtures import XXE, check_sections, document, docx_bytes, rezip, section_texts, zip_bomb

BLOCKS = [
    ("heading", 0, "Handbook"), ("p", "Opening words."), ("heading", 1, "Setup"), ("p", "Install it."),
    ("li", "first step"), ("li", "second step"), ("heading", 2, "Options"),
    ("table", [["name", "default"], ["size", "512"]]), ("p", "After the table."), ("heading", 1, "Usage"),
    ("p", "Run it — ünïcode ✓."),
]


def parse(data: bytes):
    return parse_docx(document("handbook.docx", data))


def test_headings_lists_tables_in_order():
    doc = parse(docx_bytes(BLOCKS))
    check_sections(doc)
    assert section_texts(doc) == [
        "Handbook\n\nOpening words.",
        "Setup\n\nInstall it.\n\n- first step\n\n- second step",
        "Options\n\n| name | default |\n|---|---|\n| size | 512 |",
        "After the table.",
        "Usage\n\nRun it — ünïcode ✓.",
    ]
    assert [s.heading_path for s in doc.sections] == [
        ("Handbook",), ("Handbook", "Setup"), ("Handbook", "Setup", "Options"),
        ("Handbook", "Setup", "Options"), ("Handbook", "Usage")]
    assert [s.kind for s in doc.sections] == ["text", "text", "table", "text", "text"]
    assert all(s.page is None for s in doc.sections)


def test_xxe_and_billion_laughs_are_refused_unresolved():
    data = rezip(docx_bytes(BLOCKS), {"word/document.xml": XXE})
    with pytest.raises(ParseError, match="declares a DTD"):
        parse(data)


def test_zip_bomb_is_refused_before_inflating():
    with pytest.raises(ParseError, match="compression ratio"):
        parse(zip_bomb(docx_bytes(BLOCKS), "word/media/bomb.bin"))


def test_not_a_docx():
    import io
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("hello.txt", "hi")
    with pytest.raises(ParseError, match="missing word/document.xml"):
        parse(out.getvalue())
    with pytest.raises(ParseError, match="not a valid zip"):
        parse(docx_bytes(BLOCKS)[:500])


def test_styles_are_resolved_once_as_python_docx_resolves_them():
    import time

    import docx

    from beam_chunking.parsers.docx import _StyleNames
    from tests.parsers.fixtures import many_styles_docx

    # Style ids python-docx resolves to the default paragraph style: none, an unknown one, and
    # the id of a character style (another type).
    data = docx_bytes([("heading", 1, "Top"), ("p", "plain"), ("li", "item"), ("heading", 2, "Sub")])
    body = zipfile.ZipFile(io.BytesIO(data)).read("word/document.xml").decode()
    body = body.replace("</w:body>", '<w:p><w:pPr><w:pStyle w:val="NoSuchStyle"/></w:pPr><w:r><w:t>lost id</w:t>'
                        '</w:r></w:p><w:p><w:pPr><w:pStyle w:val="Hyperlink"/></w:pPr><w:r><w:t>character style'
                        "</w:t></w:r></w:p></w:body>")
    for source in (rezip(data, {"word/document.xml": body.encode()}), many_styles_docx(300, 600)):
        document = docx.Document(io.BytesIO(source))
        names = _StyleNames(document)
        for paragraph in document.paragraphs:
            assert names.of(paragraph) == (paragraph.style.name or "").lower()
    # 5,000 styles and 5,000 paragraphs: python-docx's own lookup took 20 s here.
    started = time.monotonic()
    parsed = parse(many_styles_docx(5_000, 5_000))
    assert time.monotonic() - started < 10
    assert parsed.text.startswith("paragraph 0 of many") and parsed.text.endswith("paragraph 4999 of many")


def test_an_empty_table_is_dropped_and_counted():
    doc = parse(docx_bytes([("p", "Before."), ("table", [["", ""], ["", ""]]), ("p", "After.")]))
    assert section_texts(doc) == ["Before.\n\nAfter."] and "|" not in doc.text
    assert dict(doc.dropped)["empty table"] > 0
