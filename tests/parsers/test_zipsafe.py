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
        check(container({"word/document.xml": b"<a/>" + b" " * 2_000_000}), ParseLimits(max_compression_ratio=50))


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


# --- Bypasses found by issue 16: real Office files, crafted as an attacker would ------------

DTD = '<!DOCTYPE x [<!ENTITY a "b">]>'


def _formats():
    from beam_chunking.parsers.docx import parse_docx
    from beam_chunking.parsers.pptx import parse_pptx
    from beam_chunking.parsers.tabular import parse_xlsx
    from tests.parsers.fixtures import docx_bytes, pptx_bytes, xlsx_bytes

    return {
        "docx": (lambda: docx_bytes([("p", "Plain words.")]), "word/document.xml", parse_docx, "Plain words."),
        "pptx": (lambda: pptx_bytes([{"title": "Plain title"}]), "ppt/presentation.xml", parse_pptx, "Plain title"),
        "xlsx": (lambda: xlsx_bytes({"S": [["plain cell"]]}), "xl/workbook.xml", parse_xlsx, "plain cell"),
    }


def _member(data: bytes, name: str) -> bytes:
    return zipfile.ZipFile(io.BytesIO(data)).read(name)


def _reencoded(xml: bytes, encoding: str, dtd: str = "") -> bytes:
    """``xml`` (UTF-8, with a declaration) in ``encoding`` without a byte-order mark,
    its declaration naming that encoding and, if given, a DTD right after it."""
    text = xml.decode("utf-8")
    end = text.index("?>") + 2 if text.startswith("<?xml") else 0
    declaration = f'<?xml version="1.0" encoding="{encoding.upper()[:6]}" standalone="yes"?>'
    return (declaration + dtd + text[end:]).encode(encoding)


@pytest.mark.parametrize("fmt", ["docx", "pptx", "xlsx"])
@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_a_dtd_in_bomless_utf16_is_refused(fmt, encoding):
    from tests.parsers.fixtures import document, rezip, section_texts

    make, main, parse, text = _formats()[fmt]
    data = make()
    original = _member(data, main)
    assert not original.startswith((b"\xff\xfe", b"\xfe\xff"))
    # Control: the library really reads the main part in BOM-less UTF-16, so a DTD there would reach it.
    plain = rezip(data, {main: _reencoded(original, encoding)})
    assert text in "\n".join(section_texts(parse(document(f"ok.{fmt}", plain))))
    hostile = rezip(data, {main: _reencoded(original, encoding, DTD)})
    with pytest.raises(ParseError, match=f"member {main} declares a DTD"):
        parse(document(f"bad.{fmt}", hostile))


@pytest.mark.parametrize("encoding", ["utf-32-le", "utf-32-be", "utf-7"])
def test_a_dtd_in_other_encodings_is_refused(encoding):
    xml = _reencoded(b'<?xml version="1.0"?><w:document/>', encoding, DTD)
    with pytest.raises(ParseError, match="declares a DTD"):
        check(container({"word/document.xml": b"<w:document/>", "word/other.part": xml}))


def test_ebcdic_and_unknown_encodings_are_refused():
    ebcdic = '<?xml version="1.0" encoding="cp037"?><x/>'.encode("cp037")
    with pytest.raises(ParseError, match="encoding EBCDIC"):
        check(container({"word/document.xml": b"<w:document/>", "a.xml": ebcdic}))
    unknown = b'<?xml version="1.0" encoding="x-no-such"?><x/>'
    with pytest.raises(ParseError, match="encoding x-no-such"):
        check(container({"word/document.xml": b"<w:document/>", "a.xml": unknown}))


def _renamed_main_part(data: bytes, body: bytes) -> bytes:
    """A DOCX whose relationship points the main part at ``word/main.bin`` (holding ``body``),
    with the original ``word/document.xml`` left in place as a decoy."""
    from tests.parsers.fixtures import rezip

    rels = _member(data, "_rels/.rels").replace(b'Target="word/document.xml"', b'Target="word/main.bin"')
    types = _member(data, "[Content_Types].xml").replace(b'PartName="/word/document.xml"',
                                                       b'PartName="/word/main.bin"')
    assert b"word/main.bin" in rels and b"word/main.bin" in types
    return rezip(data, {"_rels/.rels": rels, "[Content_Types].xml": types, "word/main.bin": body})


def test_a_dtd_in_a_main_part_not_named_xml_is_refused():
    from beam_chunking.parsers.docx import parse_docx
    from tests.parsers.fixtures import XXE, docx_bytes, document, section_texts

    data = docx_bytes([("p", "Decoy text.")])
    original = _member(data, "word/document.xml")
    # Control: python-docx follows the relationship and reads the renamed part, not the decoy.
    control = _renamed_main_part(data, original.replace(b"Decoy text.", b"Hidden part text."))
    assert section_texts(parse_docx(document("ok.docx", control))) == ["Hidden part text."]
    with pytest.raises(ParseError, match="member word/main.bin declares a DTD"):
        parse_docx(document("bad.docx", _renamed_main_part(data, XXE)))


def test_binary_members_are_not_taken_for_xml():
    members = {"word/document.xml": b"<w:document/>", "word/media/image1.png": b"\x89PNG\r\n\x1a\n" + bytes(range(256)),
               "word/media/wide.bin": b"\x01\x00" + DTD.encode("utf-16-le"), "word/empty": b""}
    check(container(members))


def test_a_bomb_split_into_one_mib_members_with_padding_is_refused():
    """Issue 16: members of exactly 1 MiB and stored padding kept every old check quiet (a 3.7 MB
    DOCX inflated to 453 MiB). Scaled down here to 40 MiB; the same shape."""
    import os

    from beam_chunking.parsers._zipsafe import RATIO_FLOOR_BYTES
    from beam_chunking.parsers.docx import parse_docx
    from tests.parsers.fixtures import docx_bytes, document

    base = docx_bytes([("p", "Looks harmless.")])
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(base)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            dst.writestr(item, src.read(item.filename))
        for i in range(40):
            dst.writestr(f"word/media/part{i}.bin", b"\0" * RATIO_FLOOR_BYTES)
        dst.writestr(zipfile.ZipInfo("word/media/padding.bin"), os.urandom(300_000), zipfile.ZIP_STORED)
    data = out.getvalue()
    members = zipfile.ZipFile(io.BytesIO(data)).infolist()
    total, packed = sum(m.file_size for m in members), sum(m.compress_size for m in members)
    assert total / packed < 200 and max(m.file_size for m in members) <= RATIO_FLOOR_BYTES  # the old checks pass
    with pytest.raises(ParseError, match=r"40 member\(s\) over max_compression_ratio=200 inflate to"):
        parse_docx(document("bomb.docx", data))


def test_deflated_random_padding_does_not_hide_a_bomb_either():
    import os

    members = {"word/document.xml": b"<w:document/>", "padding.bin": os.urandom(200_000),
               **{f"m{i}": b"\0" * 300_000 for i in range(5)}}
    with pytest.raises(ParseError, match=r"5 member\(s\) over max_compression_ratio"):
        check(container(members))


def test_small_members_with_high_ratios_are_fine():
    # Real files carry a few such members (an empty printer-settings blob, a blank sheet).
    members = {"word/document.xml": b"<w:document/>", "printerSettings1.bin": b"\0" * 64 * 1024,
               "word/text.xml": b"<t>" + b"words and more words " * 2000 + b"</t>"}
    check(container(members))
