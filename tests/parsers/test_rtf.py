"""RTF parser: paragraphs, code-page bytes, Unicode escapes, info metadata; non-RTF bytes."""
from __future__ import annotations

import sys
import time

import pytest

from beam_chunking.errors import MissingExtra, ParseError
from beam_chunking.parsers import parse_in_process
from beam_chunking.parsers.detect import RTF, detect_content_type
from beam_chunking.parsers.formats import FORMAT_PARSERS
from beam_chunking.parsers.rtf import parse_rtf
from tests.parsers.fixtures import check_sections, document, section_texts

# Written as WordPad writes it: a font table, \info, \'hh bytes in the code page, \uN with
# a one-character fallback (\uc1), a character above U+FFFF as two UTF-16 halves, a table row.
LETTER = (rb"{\rtf1\ansi\ansicpg1252\deff0\nouicompat{\fonttbl{\f0\fnil\fcharset0 Calibri;}}"
          rb"{\colortbl ;\red255\green0\blue0;}"
          rb"{\info{\title Caf\'e9 minutes}{\author Zo\u235?}{\company Hidden Inc}}"
          rb"{\*\generator Riched20 10.0.19041}\viewkind4\uc1" b"\n"
          rb"\pard\sa200\sl276\slmult1\f0\fs22\lang9 Minutes of the r\'e9union, price 5\'80.\par" b"\n"
          rb"Greek \u945?\u946? and a smile \u-10179\u-8704?.\par" b"\n"
          rb"{\header Page header text}\pard A line\line broken.\par" b"\n"
          rb"\trowd\cellx1000\cellx2000 Name\cell Age\cell\row" b"\n"
          rb"{\footnote A footnote.}Last words.\par" b"\n}")


def test_paragraphs_escapes_and_code_page_bytes():
    doc = parse_rtf(document("minutes.rtf", LETTER))
    check_sections(doc)
    assert section_texts(doc) == [
        "Minutes of the réunion, price 5€.\n\nGreek αβ and a smile 😀.\n\nA line\n\nbroken.\n\n"
        "Name|Age|\n\nLast words."]
    assert doc.sections[0].kind == "text"
    assert (doc.metadata["title"], doc.metadata["author"]) == ("Café minutes", "Zoë")
    for hidden in ("Calibri", "Hidden Inc", "Riched20", "Page header", "footnote"):
        assert hidden not in doc.text


def test_ansicpg_names_the_code_page_of_escaped_and_raw_bytes():
    cyrillic = rb"{\rtf1\ansi\ansicpg1251 \'cf\'f0\'e8\'e2\'e5\'f2 " + "мир".encode("cp1251") + rb"\par}"
    assert parse_rtf(document("ru.rtf", cyrillic)).text == "Привет мир"


def test_undefined_byte_fails_strict_and_is_replaced_on_request():
    data = rb"{\rtf1\ansi\ansicpg1252 bad \'81 byte\par}"
    with pytest.raises(ParseError, match=r"b'\\x81' is not defined in code page cp1252") as info:
        parse_rtf(document("bad.rtf", data))
    assert "\n" not in str(info.value)
    assert parse_rtf(document("bad.rtf", data), errors="replace").text == "bad \ufffd byte"


def test_picture_data_is_skipped_quickly():
    picture = rb"{\pict\pngblip\picw100\pich100 " + b"89504e47" * 250_000 + b"}"
    data = rb"{\rtf1\ansi Before.\par" + picture + rb"After.\par}"
    started = time.perf_counter()
    doc = parse_rtf(document("pic.rtf", data))
    assert doc.text == "Before.\n\nAfter."
    assert time.perf_counter() - started < 5  # 2 MB of hex read char by char takes several seconds


@pytest.mark.parametrize("name", ["minutes.rtf", "minutes.txt", "minutes", "minutes.doc"])
def test_detected_by_name_and_by_content(name):
    assert detect_content_type(name, LETTER) == RTF
    assert FORMAT_PARSERS[RTF] is parse_rtf
    assert "réunion" in parse_in_process(document(name, LETTER)).text


@pytest.mark.parametrize("data", [b"", b"plain words", b"%PDF-1.4 not rtf", b"{\\rt"])
def test_not_rtf_is_one_clear_error(data):
    with pytest.raises(ParseError, match=r"RTF: the file does not start with \{\\rtf") as info:
        parse_rtf(document("fake.rtf", data))
    assert "\n" not in str(info.value)


def test_an_empty_document_has_no_sections():
    doc = parse_rtf(document("empty.rtf", rb"{\rtf1\ansi{\fonttbl{\f0 Arial;}}}"))
    assert doc.text == "" and doc.sections == ()


def test_without_striprtf_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "striprtf.striprtf", None)
    with pytest.raises(MissingExtra, match=r"beam-chunking\[parsers\]"):
        parse_rtf(document("minutes.rtf", LETTER))
