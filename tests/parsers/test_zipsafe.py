"""Zip container checks: counts, sizes, ratios, required members, DTDs hidden in prologs."""
from __future__ import annotations

import io
import zipfile

import pytest

from beam_chunking.errors import ParseError
from beam_chunking.parsers._zipsafe import open_container
from beam_chunking.parsers.limits import ParseLimits
from beam_chunking.types import Document


def container(members: dict, method=zipfile.ZIP_DEFLATED) -> Document:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", method) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return Document("d", "x.docx", out.getvalue(), "x")


def check(doc, limits=ParseLimits()):
    return open_container(doc, limits, ["word/document.xml"], "DOCX")


def test_clean_container_opens():
    assert check(container({"word/document.xml": b"<w:document/>"})).namelist() == ["word/document.xml"]


def test_caps_on_members_size_and_ratio():
    doc = container({"word/document.xml": b"<a/>", **{f"m{i}": b"x" for i in range(5)}})
    with pytest.raises(ParseError, match="6 zip members exceed max_zip_members=5"):
        check(doc, ParseLimits(max_zip_members=5))
    stored = container({"word/document.xml": b"<a/>", "big": b"y" * 5000}, zipfile.ZIP_STORED)
    with pytest.raises(ParseError, match="over max_uncompressed_bytes=4096"):
        check(stored, ParseLimits(max_uncompressed_bytes=4096))
    with pytest.raises(ParseError, match="the archive has compression ratio"):
        check(container({"word/document.xml": b"<a/>" + b" " * 100000}), ParseLimits(max_compression_ratio=50))


@pytest.mark.parametrize("xml", [
    b'<?xml version="1.0"?><!DOCTYPE x SYSTEM "http://evil/x.dtd"><x/>',
    b'<?xml version="1.0"?><!-- <fake root --><!DOCTYPE x [<!ENTITY a "b">]><x>&a;</x>',
    b'<?xml version="1.0"?>' + b" " * 200000 + b'<!DOCTYPE x [<!ENTITY a "b">]><x/>',
    '<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE x [<!ENTITY a "b">]><x/>'.encode("utf-16"),
])
def test_dtds_are_found_however_hidden(xml):
    with pytest.raises(ParseError, match="declares a DTD"):
        check(container({"word/document.xml": xml}), ParseLimits(max_compression_ratio=10**6))


def test_doctype_text_inside_the_body_is_fine():
    ok = b'<?xml version="1.0"?><w:document><w:t>write &lt;!DOCTYPE html&gt; first</w:t></w:document>'
    check(container({"word/document.xml": ok}))
