"""Page furniture and contents detection: the line shapes of LaTeX-, Word- and DocBook-made books."""
from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from beam_chunking.parsers import furniture
from beam_chunking.parsers.furniture import (
    Furniture, contents_lines, contents_spans, is_dot_leader, page_label, split_around, visible_characters)

WORDS = "ant bee cat dog eel fox gnu hen ibis jay kite lark mole newt owl pike".split()


def body(n: int, lines: int = 3) -> list:
    """Body lines of page ``n`` that no other page repeats, digits and roman numerals aside."""
    tag = "".join("abdefghjkn"[int(d)] for d in str(n))  # no roman-numeral letters
    return [f"The {WORDS[n % 16]} {tag} meets the {WORDS[(n + k) % 16]} {k * 'o'}." for k in range(lines)]


@pytest.mark.parametrize("line", [
    "1.2 Installing the system ........................ 12",
    "1.2.3 Title . . . . . . . . . . . . 145",
    "Preface . . . . . . . . . xiii",
    "Introduction\u2026\u2026\u2026\u2026 3",
    "Chapter 4 \u00b7\u00b7\u00b7\u00b7\u00b7\u00b7 88",
    "  A.1 The Debian maze . . . . . . . . 232  ",
])
def test_dot_leader_entries(line):
    assert is_dot_leader(line)


@pytest.mark.parametrize("line", [
    "Reading package lists... Done",
    "Loading.... 100%",
    "Version 1.2.3.4.5 12x",
    "See ... 12",
    ".......... 12",
    "1.2 Installing the system 12",
])
def test_lines_that_are_not_dot_leader_entries(line):
    assert not is_dot_leader(line)


@pytest.mark.parametrize("line", ["12", "- 12 -", "\u2013 7 \u2013", "xiv", "IV", "Page 3", "page 3 of 10",
                                  "3 / 10", "p. 4"])
def test_page_labels(line):
    assert page_label(line)


@pytest.mark.parametrize("line", ["12 apples", "Chapter 12", "1.2", "civil", "ill", "Page", "12345"])
def test_not_page_labels(line):
    assert not page_label(line)


def cuts(pages):
    furniture = Furniture(["\n".join(p) for p in pages])
    return [{p[k]: label for k, label in furniture.cut(i, p).items()} for i, p in enumerate(pages)]


def test_latex_book_headers_alternate_sides_and_titles():
    # even pages: "<n> CHAPTER c. TITLE", odd pages "c.s. SECTION <n>"; titles change often
    pages = []
    for n in range(1, 21):
        if n % 2 == 0:
            head = f"{n} CHAPTER {n // 4}. {WORDS[n // 4].upper()}"
        else:
            head = f"{n // 4}.{n}. {WORDS[n % 16].title()} {n}"
        pages.append([head, *body(n)])
    assert all(found == {page[0]: "running header"} for found, page in zip(cuts(pages), pages))


def test_word_footers_page_n_of_m_and_a_confidential_line():
    pages = [[*body(n), "Acme Corp \u2013 Confidential", f"Page {n} of 9"] for n in range(1, 10)]
    assert all(found == {"Acme Corp \u2013 Confidential": "running footer", f"Page {n} of 9": "page number"}
               for n, found in enumerate(cuts(pages), 1))


def test_roman_front_matter_then_arabic_numbering_restarting():
    pages = [[*body(n), roman] for n, roman in enumerate("i ii iii iv v vi".split(), 1)]
    pages += [[*body(n + 6), str(n)] for n in range(1, 30)]
    found = cuts(pages)
    assert all(list(f.values()) == ["page number"] for f in found)


def test_pages_without_furniture_and_short_documents_lose_nothing():
    assert cuts([body(n) for n in range(1, 30)]) == [{}] * 29
    # two pages are too few to tell a running header from a coincidence
    assert cuts([["Report", *body(1)], ["Report", *body(2)]]) == [{}, {}]


def test_a_continued_table_header_under_the_running_header_stays():
    pages = [["Manual", "package size description", *body(n)] for n in range(1, 10)]
    # ... and so does the header line on the first page: there it is the title
    assert cuts(pages) == [{}] + [{"Manual": "running header"}] * 8


def test_a_body_line_that_opens_pages_but_is_as_common_inside_them_stays():
    pages = [["Note", body(n)[0], "Note", body(n)[1], "Note", body(n)[2]] for n in range(1, 10)]
    assert cuts(pages) == [{}] * 9


LATEX_CONTENTS = """Contents

1 Introduction 1
1.1 Motivation . . . . . . . . . . . . . . . . . 1
1.2 A very long section title that the class wraps
onto a second line . . . . . . . . . . . . . 3
2 Methods 7
2.1 Data . . . . . . . . . . . . . . . . . . . . 7
Bibliography 42""".split("\n")


def test_a_latex_contents_page_goes_whole():
    assert contents_lines(LATEX_CONTENTS) == {k: "table of contents" for k, line in enumerate(LATEX_CONTENTS) if line}


def test_stray_leaders_in_prose_go_alone_and_prose_stays():
    lines = ["Results for 3 hosts", "Totals . . . . . . . 12", "The table above sums 4", "up to 12 in all."]
    assert contents_lines(lines) == {1: "table of contents"}


def test_a_contents_page_continued_without_leaders():
    page = ["10 Networking 120", "11 Storage 131", "Appendix A 150", "Index 160"]
    assert set(contents_lines(page, after_contents=True)) == {0, 1, 2, 3}
    assert contents_lines(page) == {}
    # numbers that do not rise are a table, not a contents listing
    assert contents_lines(["alpha 30", "beta 12", "gamma 25"], after_contents=True) == {}


def test_a_dot_leader_index_is_labelled_index():
    # Texinfo sets its indexes with leaders; the numbers follow the alphabet, not the pages
    page = ["Concept Index", "A", "asn1Coding program . . . . . . . 5", "asn1Decoding program . . . . . 7",
            "ASN.1 schema . . . . . . . . . . 2", "F", "FDL, GNU Free Documentation License . . . 24",
            "Future developments . . . . . . 4", "H", "Header file . . . . . . . . . . 4",
            "Hash tables . . . . . . . . . . 19", "Hosts . . . . . . . . . . . . 3"]
    assert contents_lines(page) == dict.fromkeys(range(len(page)), "index")


def test_contents_spans_are_line_spans_of_the_text():
    text = "Title\n\n" + "\n".join(LATEX_CONTENTS) + "\n\nBody text starts here.\n"
    spans = contents_spans(text)
    assert [text[a:b] for a, b, _ in spans] == [line for line in LATEX_CONTENTS if line]
    assert {label for _, _, label in spans} == {"table of contents"}


def test_sections_around_contents_spans_keep_the_text_as_it_is():
    text = "Manual\n\n" + "\n".join(LATEX_CONTENTS) + "\n\nBody text starts here.\n"
    spans = contents_spans(text)
    pieces = split_around(text, spans)
    assert [text[a:b].strip() for a, b in pieces] == ["Manual", "Body text starts here."]
    kept = "".join(text[a:b] for a, b in pieces)
    assert visible_characters(text, spans) + sum(1 for ch in kept if not ch.isspace()) == sum(
        1 for ch in text if not ch.isspace())
    # a range inside the text: only its own pieces
    assert split_around(text, spans, start=2, end=6) == [(2, 6)]
    assert split_around("", []) == []


def test_plain_text_leaves_its_contents_out_of_the_sections_and_records_it():
    from beam_chunking.parsers.text import parse_text
    from beam_chunking.strategies import RecursiveChunker
    from beam_chunking.strategies.base import chunk_recording_drops
    from beam_chunking.types import Document

    text = ("My Manual\n\nContents\n1 Intro .......... 1\n2 Setup .......... 4\n3 Usage .......... 9\n\n"
            "1 Intro\n\nThis manual explains the tool. It is short.\n")
    doc = Document("d", "file:///m.txt", text.encode(), "text/plain")
    parsed = parse_text(doc)
    kept = "".join(parsed.text[s.start:s.end] for s in parsed.sections)
    assert "....." not in kept and "Contents" not in kept and "This manual explains" in kept
    assert parsed.text == text  # the text is the source, never cut
    (label, count), = parsed.dropped
    assert label == "table of contents" and count == sum(not ch.isspace() for ch in
                                                          "Contents1 Intro .......... 12 Setup .......... 43 Usage .......... 9")
    chunks, dropped = chunk_recording_drops(RecursiveChunker(max_chunk_size=200, overlap=0), parsed)
    assert all(c.text == text[c.start:c.end] and "....." not in c.text for c in chunks) and dropped == parsed.dropped
    kept_all = parse_text(doc, keep=frozenset({"contents"}))
    assert kept_all.dropped == () and [(s.start, s.end) for s in kept_all.sections] == [(0, len(text))]


def test_one_huge_line_of_dots_is_not_contents():
    from beam_chunking.parsers.text import parse_text
    from beam_chunking.types import Document

    text = "Title " + ". " * 1_000_000 + "12"  # longer than any contents entry
    parsed = parse_text(Document("d", "u", text.encode(), "text/plain"))
    assert parsed.dropped == () and [(s.start, s.end) for s in parsed.sections] == [(0, len(text))]


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=". \t\n\u00b7\u2024\u2027\u2026a1", max_size=24))
def test_the_fast_leader_search_finds_a_leader_in_exactly_the_texts_the_leader_pattern_does(text):
    assert bool(furniture._ANY_LEADER.search(text)) == bool(re.search(furniture._LEADER, text))
