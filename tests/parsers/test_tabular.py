"""CSV/TSV/XLSX parser: one self-describing section per row, with sheet and row numbers."""
from __future__ import annotations

import pytest

from beam_chunking.errors import ParseError
from beam_chunking.parsers.limits import ParseLimits
from beam_chunking.parsers.tabular import parse_delimited, parse_xlsx
from tests.parsers.fixtures import BILLION_LAUGHS, check_sections, document, rezip, section_texts, xlsx_bytes, zip_bomb


def test_csv_rows_carry_their_header():
    data = 'question,answer\r\n"What is ""RAG""?","Retrieval,\naugmented"\r\n\r\nWhy?,Because\r\n'.encode()
    doc = parse_delimited(document("faq.csv", data))
    check_sections(doc)
    assert section_texts(doc) == ["question | answer", 'question: What is "RAG"?\nanswer: Retrieval, augmented',
                                  "question: Why?\nanswer: Because"]
    assert [s.kind for s in doc.sections] == ["header", "row", "row"]
    assert [dict(s.metadata) for s in doc.sections[1:]] == [
        {"row": 2, "columns": ("question", "answer"), "sheet": "faq.csv"},
        {"row": 4, "columns": ("question", "answer"), "sheet": "faq.csv"}]


def test_tsv_ragged_rows_and_unnamed_columns():
    doc = parse_delimited(document("t.tsv", b"a\t\n1\t2\t3\n"))
    assert doc.content_type == "text/tab-separated-values"
    assert section_texts(doc) == ["a", "a: 1\ncolumn 2: 2\ncolumn 3: 3"]


def test_xlsx_sheets_rows_and_types():
    import datetime

    data = xlsx_bytes({"People": [["name", "joined", "score"], ["Ann", datetime.date(2024, 5, 1), 3.0], [],
                                  ["Bob", None, 4.5]], "Empty": [], "Ünïcode": [["k"], ["✓"]]})
    doc = parse_xlsx(document("book.xlsx", data))
    check_sections(doc)
    assert section_texts(doc) == ["name | joined | score", "name: Ann\njoined: 2024-05-01T00:00:00\nscore: 3",
                                  "name: Bob\nscore: 4.5", "k", "k: ✓"]
    assert [(s.metadata["sheet"], s.metadata["row"], s.kind) for s in doc.sections] == [
        ("People", 1, "header"), ("People", 2, "row"), ("People", 4, "row"), ("Ünïcode", 1, "header"), ("Ünïcode", 2, "row")]
    assert doc.metadata["sheets"] == 3


def test_row_cap_counts_all_sheets():
    data = xlsx_bytes({"a": [["h"], [1], [2]], "b": [["h"], [3]]})
    with pytest.raises(ParseError, match="max_rows=2"):
        parse_xlsx(document("book.xlsx", data), limits=ParseLimits(max_rows=2))
    with pytest.raises(ParseError, match="max_rows=1"):
        parse_delimited(document("x.csv", b"h\n1\n2\n"), limits=ParseLimits(max_rows=1))


def test_hostile_xlsx_is_refused():
    good = xlsx_bytes({"s": [["h"], ["v"]]})
    with pytest.raises(ParseError, match="compression ratio"):
        parse_xlsx(document("bomb.xlsx", zip_bomb(good)))
    with pytest.raises(ParseError, match="declares a DTD"):
        parse_xlsx(document("lol.xlsx", rezip(good, {"xl/workbook.xml": BILLION_LAUGHS})))


def test_sloppy_csv_is_read_leniently_and_huge_fields_fit():
    big = b"h\n" + b"x" * (3 * 1024 * 1024) + b"\n"
    assert len(parse_delimited(document("big.csv", big)).text) == len("h\n\nh: ") + 3 * 1024 * 1024
    # stray quotes, a NUL and an unterminated quote: spreadsheets export such files; no crash
    doc = parse_delimited(document("bad.csv", b'h,i\n"a"b"c,d\0e\n"open'))
    assert section_texts(doc)[1:] == ['h: ab"c\ni: de', "h: open"]
