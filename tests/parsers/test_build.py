"""TextBuilder, HeadingSections and the text helpers shared by the parsers."""
from __future__ import annotations

from beam_chunking.parsers._build import HeadingSections, TextBuilder, clean, collapse, markdown_table
from beam_chunking.types import Document
from tests.parsers.fixtures import check_sections, section_texts

DOC = Document("d", "u", b"", "text/html", {"team": "search"})


def test_collapse_and_clean():
    assert collapse("  a \t b\u00a0c \n\n  d  ") == "a b c\nd"
    assert clean("a\r\nb\rc\x00d\te") == "a\nb\ncd\te"


def test_builder_spans_are_exact_and_metadata_merges():
    b = TextBuilder()
    assert not b.add("   \n ")
    assert b.add("\n\n    indented first line\n", kind="code")
    assert b.add("second", page=2)
    assert b.extend("more")
    doc = b.build(DOC, {"title": "T"})
    check_sections(doc)
    assert section_texts(doc) == ["    indented first line", "second\n\nmore"]
    assert doc.metadata == {"team": "search", "title": "T"} and doc.sections[1].page == 2


def test_markdown_table_pads_escapes_and_adds_missing_header():
    assert markdown_table([["a", "b|c"], ["1"]], caption="Cap") == "Cap\n| a | b\\|c |\n|---|---|\n| 1 |  |"
    assert markdown_table([["x\ny"]], header=False) == "|  |\n|---|\n| x y |"
    assert markdown_table([]) == ""


def test_heading_sections_absorb_bare_headings_into_tables():
    s = HeadingSections()
    s.heading(1, "A", ["h1"])
    s.unit("| t |\n|---|", "table", ["table"])
    s.paragraph("after", ["p"])
    s.heading(2, "B")
    s.heading(1, "C")
    doc = s.builder.build(DOC)
    assert section_texts(doc) == ["A\n\n| t |\n|---|", "after", "B", "C"]
    assert [(x.kind, x.heading_path) for x in doc.sections] == [
        ("table", ("A",)), ("text", ("A",)), ("text", ("A", "B")), ("text", ("C",))]
    assert doc.sections[0].metadata == {"element_path": "table"}
