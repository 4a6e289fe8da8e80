"""EPUB parser: spine order, chapters through the HTML parser, navigation left out; hostile books."""
from __future__ import annotations

import io
import sys
import zipfile

import pytest

from beam_chunking.errors import MissingExtra, ParseError
from beam_chunking.parsers import parse_in_process
from beam_chunking.parsers.detect import detect_content_type
from beam_chunking.parsers.epub import EPUB, parse_epub
from beam_chunking.parsers.formats import FORMAT_PARSERS
from tests.parsers.fixtures import check_sections, document, rezip, section_texts, zip_bomb

CONTAINER = ('<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
             '<rootfiles><rootfile full-path="{opf}" media-type="application/oebps-package+xml"/></rootfiles>'
             '</container>')
XHTML11 = ('<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN" '
           '"http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">\n')
HTML5 = '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html>\n'


def page(body: str, doctype: str = HTML5, title: str = "<title>Chapter</title>") -> str:
    return f'{doctype}<html xmlns="http://www.w3.org/1999/xhtml"><head>{title}</head><body>{body}</body></html>'


def epub_bytes(opf_path: str, opf: str, members: dict, *, mimetype: bytes = b"application/epub+zip") -> bytes:
    """A zip laid out as the EPUB spec asks: ``mimetype`` first and stored, then the rest."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(zipfile.ZipInfo("mimetype"), mimetype, compress_type=zipfile.ZIP_STORED)
        z.writestr("META-INF/container.xml", CONTAINER.format(opf=opf_path))
        z.writestr(opf_path, opf)
        for name, text in members.items():
            z.writestr(name, text)
    return out.getvalue()


def epub3() -> bytes:
    opf = ('<?xml version="1.0" encoding="utf-8"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" '
           'unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
           '<dc:identifier id="id">urn:uuid:1</dc:identifier><dc:title>The Río Book</dc:title>'
           '<dc:creator>Zoë Writer</dc:creator><dc:language>en</dc:language></metadata><manifest>'
           '<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>'
           '<item id="c2" href="text/two.xhtml" media-type="application/xhtml+xml"/>'
           '<item id="c1" href="text/one.xhtml" media-type="application/xhtml+xml"/>'
           '<item id="css" href="style.css" media-type="text/css"/>'
           '</manifest><spine><itemref idref="nav"/><itemref idref="c1"/><itemref idref="c2"/>'
           '<itemref idref="missing"/></spine></package>')
    nav = page('<nav epub:type="toc" xmlns:epub="http://www.idpf.org/2007/ops"><ol><li><a href="text/one.xhtml">'
               'Navigation entry</a></li></ol></nav>')
    one = page("<h1>Beginnings</h1><p>It was a long day.</p><ul><li>bread</li><li>salt</li></ul>"
               "<h2>Morning</h2><p>Coffee ☕ first.</p>", title="<title/>")
    two = page('<h1>Endings</h1><table><tr><th>name</th><th>age</th></tr><tr><td>Ana</td><td>7</td></tr></table>'
               "<p>The end.</p>")
    return epub_bytes("OPS/package.opf", opf, {"OPS/nav.xhtml": nav, "OPS/text/one.xhtml": one,
                                               "OPS/text/two.xhtml": two, "OPS/style.css": "p {}"})


def epub2() -> bytes:
    opf = ('<?xml version="1.0" encoding="utf-8"?><package xmlns="http://www.idpf.org/2007/opf" version="2.0" '
           'unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/" '
           'xmlns:opf="http://www.idpf.org/2007/opf"><dc:title>Old Book</dc:title>'
           '<dc:creator opf:role="aut">Ann Author</dc:creator><dc:creator opf:role="aut">Bo Second</dc:creator>'
           '</metadata><manifest><item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>'
           '<item id="a" href="chapter%201.html" media-type="application/xhtml+xml"/>'
           '<item id="b" href="chapter2.html" media-type="application/xhtml+xml"/>'
           '</manifest><spine toc="ncx"><itemref idref="a"/><itemref idref="b" linear="no"/></spine></package>')
    ncx = ('<?xml version="1.0"?><!DOCTYPE ncx PUBLIC "-//NISO//DTD ncx 2005-1//EN" '
           '"http://www.daisy.org/z3986/2005/ncx-2005-1.dtd"><ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" '
           'version="2005-1"><navMap><navPoint id="p1"><navLabel><text>NCX label</text></navLabel>'
           '<content src="chapter%201.html"/></navPoint></navMap></ncx>')
    return epub_bytes("OEBPS/content.opf", opf, {
        "OEBPS/toc.ncx": ncx,
        "OEBPS/chapter 1.html": page("<h1>First</h1><p>One paragraph.</p>", XHTML11),
        "OEBPS/chapter2.html": page("<p>A chapter without a heading.</p>", XHTML11),
    })


def test_epub3_chapters_in_spine_order_without_the_nav_document():
    doc = parse_epub(document("book.epub", epub3()))
    check_sections(doc)
    assert section_texts(doc) == [
        "Beginnings\n\nIt was a long day.\n\n- bread\n\n- salt",
        "Morning\n\nCoffee ☕ first.",
        "Endings\n\n| name | age |\n|---|---|\n| Ana | 7 |",
        "The end.",
    ]
    assert [s.heading_path for s in doc.sections] == [
        ("Beginnings",), ("Beginnings", "Morning"), ("Endings",), ("Endings",)]
    assert [s.kind for s in doc.sections] == ["text", "text", "table", "text"]
    assert [s.metadata["chapter"] for s in doc.sections] == [1, 1, 2, 2]
    assert doc.sections[0].metadata["chapter_href"] == "OPS/text/one.xhtml"
    assert "Navigation entry" not in doc.text
    meta = doc.metadata
    assert (meta["title"], meta["author"], meta["chapters"]) == ("The Río Book", "Zoë Writer", 2)


def test_epub2_with_ncx_doctypes_and_escaped_hrefs():
    doc = parse_epub(document("old.epub", epub2()))
    check_sections(doc)
    assert section_texts(doc) == ["First\n\nOne paragraph.", "A chapter without a heading."]
    assert [s.heading_path for s in doc.sections] == [("First",), ()]
    assert [s.metadata["chapter_href"] for s in doc.sections] == ["OEBPS/chapter 1.html", "OEBPS/chapter2.html"]
    assert "NCX label" not in doc.text
    assert doc.metadata["author"] == "Ann Author; Bo Second"
    assert doc.metadata["title"] == "Old Book"


@pytest.mark.parametrize("name", ["book.epub", "book.zip", "book.docx", "book", "book.txt"])
def test_detected_by_name_and_by_its_mimetype_member(name):
    assert detect_content_type(name, epub3()) == EPUB
    assert FORMAT_PARSERS[EPUB] is parse_epub
    doc = parse_in_process(document(name, epub3()))
    assert doc.metadata["chapters"] == 2


def test_a_zip_without_a_stored_mimetype_member_first_is_an_epub_by_name_only():
    src = zipfile.ZipFile(io.BytesIO(epub3()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:  # mimetype deflated: unreadable up front
        for name in src.namelist():
            dst.writestr(name, src.read(name))
    plain = out.getvalue()
    assert detect_content_type("book.epub", plain) == EPUB
    assert detect_content_type("book.bin", plain) != EPUB


def one_line_error(data: bytes, match: str) -> str:
    with pytest.raises(ParseError, match=match) as info:
        parse_epub(document("book.epub", data))
    assert "\n" not in str(info.value) and str(info.value).startswith("book.epub: EPUB: ")
    return str(info.value)


def test_damaged_and_foreign_files_give_one_clear_error():
    one_line_error(epub3()[:200], "not a valid zip container")
    one_line_error(b"plain words, not a zip", "not a valid zip container")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("hello.txt", "hi")
    one_line_error(out.getvalue(), "missing META-INF/container.xml")
    one_line_error(rezip(epub3(), {"OPS/package.opf": "<package><oops"}), "OPS/package.opf is not well-formed XML")
    one_line_error(rezip(epub3(), {"OPS/package.opf": '<package xmlns="http://www.idpf.org/2007/opf"/>'}),
                   "no spine")
    one_line_error(rezip(epub3(), {"META-INF/container.xml": "<container/>"}), "names no package file")


def test_entities_in_package_files_are_refused_unresolved():
    evil = ('<?xml version="1.0"?><!DOCTYPE p [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'
            '<package xmlns="http://www.idpf.org/2007/opf"><metadata/><spine/></package>')
    one_line_error(rezip(epub3(), {"OPS/package.opf": evil}), "declares entities")


def test_zip_bomb_member_is_refused_before_inflating():
    one_line_error(zip_bomb(epub3(), "OPS/images/bomb.bin"), "compression ratio")


def test_encrypted_chapters_are_refused_but_obfuscated_fonts_are_not():
    def encryption(uri: str) -> str:
        return ('<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
                'xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData><enc:CipherData>'
                f'<enc:CipherReference URI="{uri}"/></enc:CipherData></enc:EncryptedData></encryption>')

    one_line_error(rezip(epub3(), {"META-INF/encryption.xml": encryption("OPS/text/two.xhtml")}), "encrypted")
    fonts = parse_epub(document("b.epub", rezip(epub3(), {"META-INF/encryption.xml": encryption("OPS/f.otf")})))
    assert fonts.metadata["chapters"] == 2


def test_a_chapter_missing_from_the_zip_is_named():
    data = epub3()
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for item in src.infolist():
            if item.filename != "OPS/text/two.xhtml":
                dst.writestr(item, src.read(item.filename))
    one_line_error(out.getvalue(), "chapter OPS/text/two.xhtml is listed in the spine but missing")


@pytest.mark.parametrize("module", ["defusedxml.ElementTree", "selectolax.lexbor"])
def test_without_its_libraries_names_the_extra(monkeypatch, module):
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(MissingExtra, match=r"beam-chunking\[parsers\]"):
        parse_epub(document("book.epub", epub3()))
