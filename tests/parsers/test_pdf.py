"""PDF parser: pages, bookmarks, running headers, hostile and broken files."""
from __future__ import annotations

import pytest

from beam_chunking.errors import ParseError
from beam_chunking.parsers.limits import ParseLimits
from beam_chunking.parsers.pdf import parse_pdf
from tests.parsers.fixtures import check_sections, document, pdf_bytes, section_texts


def parse(data: bytes, **kwargs):
    return parse_pdf(document("book.pdf", data), **kwargs)


def test_one_section_per_page_numbered_from_one():
    doc = parse(pdf_bytes(["Alpha page words.", "", "Gamma page, third."]))
    check_sections(doc)
    assert [s.page for s in doc.sections] == [1, 3]
    assert section_texts(doc) == ["Alpha page words.", "Gamma page, third."]
    assert doc.metadata["pdf_pages"] == 3 and doc.metadata["pdf_pages_without_text"] == 1


def test_bookmarks_split_pages_and_build_heading_paths():
    pages = ["Intro text before.", "End of intro.\nMore words here.", "Last page text."]
    marks = [(0, 0, "Chapter One"), (1, 1, "Section A"), (2, 0, "Chapter Two")]
    doc = parse(pdf_bytes(pages, sections=marks))
    check_sections(doc)
    got = [(s.page, s.heading_path, doc.text[s.start:s.end].split("\n")[0]) for s in doc.sections]
    assert got == [
        (1, ("Chapter One",), "Chapter One"),
        (2, ("Chapter One", "Section A"), "Section A"),
        (3, ("Chapter Two",), "Chapter Two"),
    ]


def test_running_headers_are_flagged_not_dropped():
    pages = [f"Body of page {n} with words." for n in range(1, 7)]
    doc = parse(pdf_bytes(pages, header="Manual - page {n}"))
    assert all(s.metadata["page_header"] == f"Manual - page {s.page}" for s in doc.sections)
    assert all(doc.text[s.start:s.end].startswith("Manual - page") for s in doc.sections)


def test_running_footers_are_flagged():
    pages = [f"Body of page {n}.\nAcme manual, page {n}" for n in range(1, 5)]
    doc = parse(pdf_bytes(pages))
    assert [s.metadata["page_footer"] for s in doc.sections] == [f"Acme manual, page {n}" for n in range(1, 5)]


def test_a_label_line_above_a_bookmarked_title_starts_its_section():
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    pdf.add_page()
    for line in ("Intro words here.", "Chapter 2"):
        pdf.cell(0, 8, line, new_x="LMARGIN", new_y="NEXT")
    pdf.start_section("The Middle")
    for line in ("The Middle", "Middle words."):
        pdf.cell(0, 8, line, new_x="LMARGIN", new_y="NEXT")
    doc = parse(bytes(pdf.output()))
    assert section_texts(doc) == ["Intro words here.", "Chapter 2\nThe Middle\nMiddle words."]
    assert [s.heading_path for s in doc.sections] == [(), ("The Middle",)]


def test_encrypted_truncated_fake_and_empty_pdfs_fail_specifically():
    good = pdf_bytes(["Secret words."])
    with pytest.raises(ParseError, match="encrypted, a password is needed"):
        parse(pdf_bytes(["Secret words."], password="pw"))
    with pytest.raises(ParseError, match="truncated"):
        parse(good[: len(good) // 2])
    with pytest.raises(ParseError, match="not a PDF"):
        parse(b"just text pretending to be a pdf")
    with pytest.raises(ParseError, match="empty"):
        parse(b"")
    damaged = good[:9] + b"\0" * (len(good) - 16) + good[-7:]
    with pytest.raises(ParseError, match="damaged"):
        parse(damaged)


def test_owner_password_only_opens():
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    pdf.cell(0, 8, "Readable without a password.")
    pdf.set_encryption(owner_password="owner")
    assert "Readable" in parse(bytes(pdf.output())).text


def test_page_cap():
    data = pdf_bytes(["a", "b", "c"])
    with pytest.raises(ParseError, match="3 pages exceed max_pages=2"):
        parse(data, limits=ParseLimits(max_pages=2))
    assert len(parse(data, limits=ParseLimits(max_pages=3)).sections) == 3
