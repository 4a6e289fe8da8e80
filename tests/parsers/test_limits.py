"""ParseLimits: validation and construction from a spec mapping."""
from __future__ import annotations

import pytest

from beam_chunking.errors import ConfigError
from beam_chunking.parsers.limits import ParseLimits


def test_defaults_and_mapping():
    assert ParseLimits.from_mapping(None) == ParseLimits()
    assert ParseLimits.from_mapping({"max_pages": 10}).max_pages == 10


@pytest.mark.parametrize("bad", [{"max_pages": 0}, {"max_rows": -1}, {"max_pages": True}, {"max_rows": "9"}])
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
