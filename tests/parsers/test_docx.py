"""DOCX parser: heading styles, lists, tables in order; hostile containers."""
from __future__ import annotations

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
