"""PDF parser: pages, bookmarks, running headers, hostile and broken files (layout: test_pdf_layout.py)."""
from __future__ import annotations

import pytest

from beam_chunking.errors import ParseError
from beam_chunking.parsers.limits import ParseLimits
from beam_chunking.parsers.pdf import parse_pdf
from tests.parsers.fixtures import check_sections, document, pdf_bytes, section_texts


#: Distinct words for page bodies: lines that differ only in their digits look like furniture.
WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima".split()


def body(n: int) -> str:
    """A body line for page ``n`` (1-based) that no other page repeats."""
    return f"The {WORDS[n - 1]} part explains {WORDS[-n]} in detail."


def parse(data: bytes, **kwargs):
    kwargs.setdefault("ocr", "never")  # OCR has tests of its own (test_pdf_ocr.py)
    return parse_pdf(document("book.pdf", data), **kwargs)


def blocks_by_page(doc):
    """``(page, text)`` of each block of lines, from the document's boxes."""
    out = []
    for box in doc.boxes:
        if out and out[-1][0] == box.group:
            out[-1][3] = box.end
        else:
            out.append([box.group, box.page, box.start, box.end])
    return [(page, doc.text[s:e]) for _, page, s, e in out]


def page_texts(doc):
    """Each page's blocks, joined with newlines: the page as the tests' fixtures wrote it."""
    pages = {}
    for page, text in blocks_by_page(doc):
        pages.setdefault(page, []).append(text)
    return ["\n".join(texts) for _, texts in sorted(pages.items())]


def test_pages_numbered_from_one_and_empty_pages_counted():
    doc = parse(pdf_bytes(["Alpha page words.", "", "Gamma page, third."]))
    check_sections(doc)
    assert blocks_by_page(doc) == [(1, "Alpha page words."), (3, "Gamma page, third.")]
    assert [s.page for s in doc.sections] == [1, 3]  # no section spans the empty page
    assert doc.metadata["pdf_pages"] == 3 and doc.metadata["pdf_pages_without_text"] == 1


def test_bookmarks_start_heading_sections_across_pages():
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


def test_running_headers_are_dropped_and_recorded_or_kept():
    pages = [body(n) for n in range(1, 7)]
    data = pdf_bytes(pages, header="Manual - page {n}")
    doc = parse(data)
    check_sections(doc)
    assert page_texts(doc) == pages
    assert doc.dropped == (("running header", sum(len(f"Manual-page{n}") for n in range(1, 7))),)
    kept = parse(data, keep=frozenset({"page_furniture"}))
    assert kept.dropped == ()
    assert page_texts(kept) == [f"Manual - page {n}\n{text}" for n, text in enumerate(pages, 1)]


def test_running_footers_and_page_numbers_are_dropped():
    pages = [f"{body(n)}\nAcme manual, confidential\n{n}" for n in range(1, 5)]
    doc = parse(pdf_bytes(pages))
    check_sections(doc)
    assert page_texts(doc) == [body(n) for n in range(1, 5)]
    assert dict(doc.dropped) == {"running footer": 4 * len("Acmemanual,confidential"), "page number": 4}
    kept = parse(pdf_bytes(pages), keep=frozenset({"page_furniture"}))
    assert page_texts(kept) == pages


@pytest.mark.parametrize("label", ["{n}", "- {n} -", "Page {n}", "Page {n} of 12", "{n} / 12", "{r}"])
def test_page_number_lines_of_every_common_shape(label):
    romans = "i ii iii iv v vi vii viii ix x xi xii".split()
    pages = [body(n) + "\n" + label.format(n=n, r=romans[n - 1]) for n in range(1, 13)]
    doc = parse(pdf_bytes(pages))
    assert page_texts(doc) == [body(n) for n in range(1, 13)]
    assert [name for name, _ in doc.dropped] == ["page number"]


def test_a_header_that_changes_but_carries_the_page_number_is_dropped():
    # LaTeX book style: the number at the outer end, the chapter or section title beside it,
    # changing every few pages (too seldom repeated to count as a running header).
    titles = ["Intro", "Basics", "Setup", "Tuning", "Backup", "Network", "Storage", "Printing"]
    pages, heads = [], []
    for n in range(1, 9):
        heads.append(f"{n} CHAPTER {n}. {titles[n - 1].upper()}" if n % 2 == 0 else f"{n}.1. {titles[n - 1]} {n}")
        pages.append(body(n))
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    for head, text in zip(heads, pages):
        pdf.add_page()
        pdf.cell(0, 8, head, new_x="LMARGIN", new_y="NEXT")
        pdf.multi_cell(0, 6, text, new_x="LMARGIN", new_y="NEXT")
    doc = parse(bytes(pdf.output()))
    assert page_texts(doc) == pages
    assert [name for name, _ in doc.dropped] == ["running header"]


CONTENTS = ("Contents\n1 Introduction 2\n1.1 Getting started . . . . . . . . . . 2\n"
            "1.2 A long section title . . . . . . . . . . . . 3\n2 Advanced use 4\n"
            "2.1 Tuning ............................ 4\n2.2 Backups \u00b7\u00b7\u00b7\u00b7\u00b7\u00b7\u00b7 5")


def test_a_dot_leader_contents_page_is_dropped_or_kept():
    pages = [CONTENTS, "Introduction\nThe body has 2 numbers at line ends like 2", "More body text. . ."]
    doc = parse(pdf_bytes(pages))
    check_sections(doc)
    assert page_texts(doc) == pages[1:]
    assert [page for page, _ in blocks_by_page(doc)] == [2, 2, 3]
    assert doc.dropped == (("table of contents", sum(1 for ch in CONTENTS if not ch.isspace())),)
    kept = parse(pdf_bytes(pages), keep=frozenset({"contents"}))
    assert page_texts(kept) == pages and kept.dropped == ()


def test_a_lone_dot_leader_line_is_dropped_but_a_page_with_few_is_not_a_contents_page():
    page = "Setup notes for 2 hosts\nSee also . . . . . . . 12\nA paragraph of prose that ends in 3\nlast line"
    doc = parse(pdf_bytes([page]))
    assert page_texts(doc) == ["Setup notes for 2 hosts\nA paragraph of prose that ends in 3\nlast line"]
    assert doc.dropped == (("table of contents", len("Seealso.......12")),)


def test_a_line_opening_many_pages_that_is_also_common_inside_pages_stays():
    pages = [f"Tip\n{body(n)}\nTip\nAgain {WORDS[n]}.\nTip\n{body(n + 5)}" for n in range(1, 6)]
    doc = parse(pdf_bytes(pages))
    assert page_texts(doc) == pages and doc.dropped == ()


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
    assert section_texts(doc) == ["Intro words here.", "Chapter 2 The Middle\n\nMiddle words."]
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
    assert page_texts(parse(data, limits=ParseLimits(max_pages=3))) == ["a", "b", "c"]


def test_a_page_the_table_finder_fails_on_keeps_its_text(monkeypatch, caplog):
    import beam_chunking.parsers.pdf as pdf_module

    def broken(page, textpage, lines=None):
        raise RuntimeError("unreadable drawing")

    monkeypatch.setattr(pdf_module, "find_tables", broken)
    with caplog.at_level("WARNING"):
        doc = parse(pdf_bytes([body(1), body(2)]))
    assert doc.text == f"{body(1)}\n\n{body(2)}"
    assert "page 1: tables not looked for (RuntimeError: unreadable drawing)" in caplog.text


def test_an_unknown_ocr_mode_is_refused():
    from beam_chunking.errors import ConfigError

    with pytest.raises(ConfigError, match="ocr"):
        parse(pdf_bytes([body(1)]), ocr="sometimes")
