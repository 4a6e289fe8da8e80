"""The Debian Reference as PDF, HTML and plain text: the same book three ways.

The plain-text edition is the yardstick: the PDF and HTML parsers must keep the book's words
(compared as multisets of words of 3+ letters), and the HTML parser must keep what the HTML
itself holds as text (its own text content without the navigation bars).
"""
from __future__ import annotations

import collections
import gzip
import re

import pytest

from beam_chunking.parsers import parse
from tests.parsers.fixtures import check_sections, document, realdocs_dir

ROOT = realdocs_dir()
pytestmark = pytest.mark.skipif(ROOT is None, reason="../shared/realdocs/debian-reference is absent (not part of a user checkout)")


def words(text: str) -> collections.Counter:
    return collections.Counter(re.findall(r"[A-Za-z]{3,}", text))


def share(part: collections.Counter, whole: collections.Counter) -> float:
    """How much of ``whole`` (with multiplicity) ``part`` holds."""
    return sum((part & whole).values()) / sum(whole.values())


DOT_LEADER = re.compile(r"(?:\.\s?){4,}\s*(?:\d+|[ivxlc]+)\s*$", re.M)
RUNNING_HEADER = re.compile(r"^Debian Reference (?:\d+ / 233|[ivxlc]+)$", re.M)
ADMONITIONS = ("Tip", "Note", "Warning", "Caution", "Important")


@pytest.fixture(scope="module")
def book_text():
    return gzip.decompress((ROOT / "debian-reference.en.txt.gz").read_bytes()).decode("utf-8")


@pytest.fixture(scope="module")
def book_words(book_text):
    return words(book_text)


@pytest.fixture(scope="module")
def body_words(book_text):
    """The text edition's words without its own front contents listing (the PDF's is dropped)."""
    lines = book_text.split("\n")
    start = lines.index("Table of Contents")
    end = lines.index("Preface", lines.index("Preface", start) + 1)  # listed first, then where it starts
    return words("\n".join(lines[:start] + lines[end:]))


@pytest.fixture(scope="module")
def pdf_data():
    return (ROOT / "debian-reference.en.pdf").read_bytes()


@pytest.fixture(scope="module")
def pdf(pdf_data):
    # The cover is an image: OCR would read it (test_pdf_ocr.py covers OCR) at 20 s a run.
    return parse(document("debian-reference.en.pdf", pdf_data), ocr="never")


def test_pdf_keeps_the_books_words(pdf, body_words):
    check_sections(pdf)
    found = words(pdf.text)
    # measured: 99.85% of the PDF's words are the book's, 98.1% of the book's words are found
    # (the rest are text-edition-only markup); before running headers and the contents pages
    # were dropped, only 99.1% of the PDF's words were the book's
    assert share(found, body_words) >= 0.975
    assert share(body_words, found) >= 0.995


def test_pdf_drops_running_headers_and_contents_pages_and_records_them(pdf):
    assert pdf.metadata["pdf_pages"] == 261 and pdf.metadata["title"] == "Debian Reference"
    assert not RUNNING_HEADER.search(pdf.text) and not DOT_LEADER.search(pdf.text)
    assert "List of Tables" not in pdf.text
    dropped = dict(pdf.dropped)
    assert set(dropped) == {"running header", "table of contents"}
    assert dropped["running header"] > 259 * len("DebianReference") and dropped["table of contents"] > 40_000
    # pages 5-22 are the contents and list of tables: nothing of them is left
    pages = {box.page for box in pdf.boxes}
    assert pages.isdisjoint(range(5, 23)) and {2, 3, 4, 23, 261} <= pages


def test_pdf_pages_headings_and_running_headers_when_kept(pdf_data):
    pdf = parse(document("debian-reference.en.pdf", pdf_data), keep=frozenset({"page_furniture", "contents"}),
                ocr="never")
    assert pdf.dropped == ()
    pages = [s.page for s in pdf.sections]
    assert pages == sorted(pages) and len({box.page for box in pdf.boxes}) == 260  # the cover has no text layer
    shell = [s for s in pdf.sections if s.heading_path == ("GNU/Linux tutorials", "Console basics", "The shell prompt")]
    assert shell and pdf.text[shell[0].start:shell[0].end].startswith("1.1.1 The shell prompt")
    # The running headers stay, each a paragraph of its own on its page.
    assert "\n\nDebian Reference 73 / 233\n\n" in pdf.text
    # The contents entries stay (an entry wrapped over two lines is one line of text).
    assert len(DOT_LEADER.findall(pdf.text)) > 580


def test_pdf_chunks_hold_no_page_furniture(pdf):
    from beam_chunking.strategies import RecursiveChunker

    chunks = RecursiveChunker().chunk_document(pdf)
    junk = [c for c in chunks if RUNNING_HEADER.search(c.text) or DOT_LEADER.search(c.text)]
    assert len(chunks) > 1000 and not junk  # before: 205 dot-leader and 233 header chunks of 1,615


@pytest.mark.parametrize("name", ["index.en.html", "ch01.en.html", "ch02.en.html", "ch03.en.html",
                                  "ch04.en.html", "ch05.en.html", "ch06.en.html"])
def test_html_keeps_its_own_text_and_headings(name, book_words):
    from selectolax.lexbor import LexborHTMLParser

    data = (ROOT / name).read_bytes()
    doc = parse(document(name, data))
    check_sections(doc)
    own = LexborHTMLParser(data.decode("utf-8"))
    for node in own.css("head, div.navheader, div.navfooter, div.toc, div.list-of-tables"):
        node.decompose()
    found = words(doc.text)
    assert share(found, words(own.body.text(separator=" "))) >= 0.999
    assert share(book_words, found) >= 0.999  # nothing but the book's words (no chrome)
    assert "Prev" not in doc.text.split() and "Next" not in doc.text.split()
    assert "Table of Contents" not in doc.text and dict(doc.dropped)["table of contents"] > 400
    if name.startswith("ch"):
        chapter = doc.metadata["title"].split(". ", 1)[1]
        assert all(s.heading_path[0].endswith(chapter) for s in doc.sections if s.heading_path)
        assert any(s.kind == "table" for s in doc.sections) and any(s.kind == "code" for s in doc.sections)


@pytest.mark.parametrize("name", ["ch01.en.html", "ch02.en.html", "ch03.en.html"])
def test_html_admonitions_are_text_and_cells_join_inline_text(name):
    doc = parse(document(name, (ROOT / name).read_bytes()))
    tables = [doc.text[s.start:s.end] for s in doc.sections if s.kind == "table"]
    # before: every Tip/Note box was a pipe table such as "|  | Tip |\n|---|---|\n| ... |  |"
    assert tables and not [t for t in tables if any(f"| {a} |" in t for a in ADMONITIONS)]
    boxes = re.findall(r"^(?:Tip|Note|Warning|Caution): \S", doc.text, re.M)
    assert len(boxes) >= 5  # each label opens its box's paragraph, never a line of its own
    assert not re.search(r"^(?:Tip|Note|Warning|Caution)$", doc.text, re.M)
    # "<code>aptitude</code>(8)" in a cell was "aptitude (8)"
    assert not re.search(r"</?\w+>|\w \((?:[1-8])\)\s*\|", "\n".join(tables))
    if name == "ch01.en.html":
        assert "inittab(5)" in doc.text
