"""ParseLimits: validation and construction from a spec mapping."""
from __future__ import annotations

import pytest

from beam_chunking.errors import ConfigError
from beam_chunking.parsers.limits import ParseLimits


def test_defaults_and_mapping():
    assert ParseLimits.from_mapping(None) == ParseLimits()
    assert ParseLimits.from_mapping({"max_pages": 10}).max_pages == 10
    assert ParseLimits().watchdog is True
    assert ParseLimits.from_mapping({"watchdog": False}).watchdog is False


@pytest.mark.parametrize("bad", [{"max_pages": 0}, {"max_rows": -1}, {"max_pages": True}, {"max_rows": "9"},
                                 {"watchdog": 1}, {"watchdog": "no"}, {"max_parse_seconds": 0}])
def test_invalid_values_name_the_field(bad):
    with pytest.raises(ConfigError) as info:
        ParseLimits.from_mapping(bad)
    assert info.value.field == next(iter(bad))


def test_unknown_limit_is_named():
    with pytest.raises(ConfigError, match="unknown limit 'max_pagez'"):
        ParseLimits.from_mapping({"max_pagez": 3})


@pytest.mark.parametrize("name, ctype, data", [
    ("rows.csv", "text/csv", ("a,b\n" + "x" * 50 + ",y\n" * 400).encode()),
    ("page.html", "text/html", ("<html><body><p>" + "word " * 40 + "</p></body></html>").encode()),
    ("talk.vtt", "text/vtt", ("WEBVTT\n\n" + "".join(f"00:00:{k:02d}.000 --> 00:00:{k:02d}.500\nsome words here\n\n"
                                                      for k in range(60))).encode()),
])
def test_parsed_text_is_capped_and_the_document_named(name, ctype, data):
    from beam_chunking.errors import ParseError
    from beam_chunking.parsers import parse
    from beam_chunking.types import Document

    doc = Document("d", f"file:///{name}", data, ctype)
    assert parse(doc).text  # within the default cap
    with pytest.raises(ParseError, match=rf"file:///{name}: the parsed text exceeds limits.max_text_chars=100 "):
        parse(doc, limits=ParseLimits(max_text_chars=100))


# Caps on what a parser produces, on the hostile files of issue 16 (generated small).

def _parse(name, data, **limits):
    from beam_chunking.parsers import parse
    from tests.parsers.fixtures import document

    return parse(document(name, data), limits=ParseLimits(**limits))


def _refused(name, data, limit, **limits):
    from beam_chunking.errors import LimitExceeded

    with pytest.raises(LimitExceeded) as info:
        _parse(name, data, **limits)
    assert info.value.limit == limit and info.value.uri == name
    return str(info.value)


def test_a_pdf_whose_pages_share_one_stream_stops_at_its_first_page():
    from tests.parsers.fixtures import shared_stream_pdf

    data = shared_stream_pdf(pages=400, lines=40_000)  # 81 KB, 1.76 million characters a page
    assert len(data) < 100_000
    message = _refused("shared.pdf", data, "max_page_chars")  # the default cap, 1,000,000
    assert "PDF: page 1 has 1759998 characters, over limits.max_page_chars=1000000;" in message


def test_pdf_pages_are_counted_against_the_text_cap_as_they_are_extracted():
    from tests.parsers.fixtures import shared_stream_pdf

    data = shared_stream_pdf(pages=6, lines=400)  # 17,600 characters a page
    assert len(_parse("p.pdf", data).text) > 100_000
    message = _refused("p.pdf", data, "max_text_chars", max_text_chars=40_000)
    assert "PDF: pages 1-3 of 6 have " in message and "limits.max_text_chars=40000" in message


def test_an_xlsx_of_rows_sharing_one_long_string_fails_on_the_text_cap():
    from tests.parsers.fixtures import shared_string_xlsx

    data = shared_string_xlsx(rows=40_000)  # 207 KB; 1.3 billion characters if it were read
    assert len(data) < 250_000
    assert "limits.max_text_chars=50000000" in _refused("shared.xlsx", data, "max_text_chars")
    assert "row 2 of sheet data has 32000 characters, over limits.max_row_chars=10000" in _refused(
        "shared.xlsx", data, "max_row_chars", max_row_chars=10_000)


def test_a_csv_with_too_many_columns_or_too_long_a_row_is_refused():
    from tests.parsers.fixtures import wide_csv

    assert "row 1 of sheet wide.csv has 20000 columns, over limits.max_columns=16384" in _refused(
        "wide.csv", wide_csv(20_000), "max_columns")
    assert "over limits.max_row_chars=1000" in _refused("wide.csv", wide_csv(500), "max_row_chars", max_row_chars=1000)
    assert len(_parse("wide.csv", wide_csv(500)).sections) == 4  # header and three rows


def test_a_slide_over_the_page_cap_is_refused():
    from tests.parsers.fixtures import pptx_bytes

    data = pptx_bytes([{"title": "Short", "body": "fine"}, {"title": "Long", "body": "word " * 400}])
    assert "PPTX: slide 2 has " in _refused("deck.pptx", data, "max_page_chars", max_page_chars=1000)


def test_the_time_budget_stops_a_slow_parse_between_pages():
    from tests.parsers.fixtures import shared_stream_pdf

    data = shared_stream_pdf(pages=200, lines=400)  # a few milliseconds a page
    message = _refused("slow.pdf", data, "max_parse_seconds", max_parse_seconds=0.05)
    assert "over limits.max_parse_seconds=0.05;" in message
    stopped = int(message.split("stopped at page ")[1].split(" ")[0])
    assert 1 < stopped < 200  # it ran, and stopped long before the end


def test_the_budget_is_one_per_document_and_only_inside_parse():
    import time

    from beam_chunking.errors import LimitExceeded
    from beam_chunking.parsers.limits import check_time, parse_budget

    check_time("anywhere")  # no budget running: nothing to stop
    with parse_budget(ParseLimits(max_parse_seconds=0.01)):
        with parse_budget(ParseLimits(max_parse_seconds=100)):  # an attachment shares the e-mail's
            time.sleep(0.02)
            with pytest.raises(LimitExceeded, match="stopped at attachment 2"):
                check_time("attachment 2")
    check_time("after")
