"""PPTX parser: one section per slide, titles as headings, notes flagged, tables."""
from __future__ import annotations

import pytest

from beam_chunking.errors import ParseError
from beam_chunking.parsers.limits import ParseLimits
from beam_chunking.parsers.pptx import parse_pptx
from tests.parsers.fixtures import check_sections, document, pptx_bytes, section_texts

SLIDES = [
    {"title": "Roadmap", "body": "Ship parsers\nShip strategies", "notes": "Mention the deadline."},
    {"title": "Numbers", "table": [["quarter", "revenue"], ["Q1", "10"]]},
    {"body": "Untitled slide text"},
]


def parse(data: bytes, **kwargs):
    return parse_pptx(document("deck.pptx", data), **kwargs)


def test_slides_titles_notes_and_tables():
    doc = parse(pptx_bytes(SLIDES))
    check_sections(doc)
    assert section_texts(doc) == [
        "Roadmap\n\nShip parsers\nShip strategies", "Mention the deadline.",
        "Numbers\n\n| quarter | revenue |\n|---|---|\n| Q1 | 10 |", "Untitled slide text"]
    assert [(s.kind, s.metadata["slide"], s.heading_path) for s in doc.sections] == [
        ("slide", 1, ("Roadmap",)), ("notes", 1, ("Roadmap",)), ("slide", 2, ("Numbers",)), ("slide", 3, ())]
    assert doc.sections[1].metadata["speaker_notes"] is True
    assert "speaker_notes" not in doc.sections[0].metadata
    assert doc.metadata["slides"] == 3


def test_slide_cap():
    with pytest.raises(ParseError, match="3 slides exceed max_pages=2"):
        parse(pptx_bytes(SLIDES), limits=ParseLimits(max_pages=2))


def test_an_empty_table_is_dropped_and_counted():
    doc = parse(pptx_bytes([{"title": "Grid", "table": [["", ""], ["", ""]]}, {"body": "Words."}]))
    assert "|" not in doc.text and dict(doc.dropped)["empty table"] > 0
    assert section_texts(doc) == ["Grid", "Words."]
