"""OpenDocument parser: ODT headings/lists/tables, ODS sheets, ODP slides and notes; hostile files."""
from __future__ import annotations

import io
import sys
import zipfile

import pytest

from beam_chunking.errors import LimitExceeded, MissingExtra, ParseError
from beam_chunking.parsers import parse_in_process
from beam_chunking.parsers.detect import ODP, ODS, ODT, detect_content_type
from beam_chunking.parsers.formats import FORMAT_PARSERS
from beam_chunking.parsers.limits import ParseLimits
from beam_chunking.parsers.odf import parse_odf
from tests.parsers.fixtures import XXE, check_sections, document, rezip, section_texts, zip_bomb

NS = ('xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
      'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
      'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
      'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
      'xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0" '
      'xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" '
      'xmlns:dc="http://purl.org/dc/elements/1.1/"')


def odf_bytes(mimetype: str, body: str, *, title: str = "") -> bytes:
    """An OpenDocument zip as LibreOffice lays it out: ``mimetype`` first and stored."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(zipfile.ZipInfo("mimetype"), mimetype, compress_type=zipfile.ZIP_STORED)
        z.writestr("content.xml", f'<?xml version="1.0" encoding="UTF-8"?><office:document-content {NS} '
                                  f'office:version="1.3"><office:body>{body}</office:body></office:document-content>')
        z.writestr("meta.xml", f'<?xml version="1.0" encoding="UTF-8"?><office:document-meta {NS}><office:meta>'
                               f'<dc:title>{title}</dc:title></office:meta></office:document-meta>')
        z.writestr("styles.xml", f'<office:document-styles {NS}/>')
        entries = "".join(f'<manifest:file-entry manifest:full-path="{name}" manifest:media-type="text/xml"/>'
                          for name in ("content.xml", "meta.xml", "styles.xml"))
        z.writestr("META-INF/manifest.xml", '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:'
                                            f'xmlns:manifest:1.0"><manifest:file-entry manifest:full-path="/" '
                                            f'manifest:media-type="{mimetype}"/>{entries}</manifest:manifest>')
    return out.getvalue()


def cell(text: str = "", repeat: int = 1, **value) -> str:
    attrs = "".join(f' office:{k.replace("_", "-")}="{v}"' for k, v in value.items())
    rep = f' table:number-columns-repeated="{repeat}"' if repeat > 1 else ""
    return f"<table:table-cell{attrs}{rep}>" + (f"<text:p>{text}</text:p>" if text else "") + "</table:table-cell>"


def row(*cells: str, repeat: int = 1) -> str:
    rep = f' table:number-rows-repeated="{repeat}"' if repeat > 1 else ""
    return f"<table:table-row{rep}>{''.join(cells)}</table:table-row>"


TEXT_BODY = (
    '<office:text><text:sequence-decls><text:sequence-decl text:name="Table"/></text:sequence-decls>'
    '<text:table-of-content><text:index-body><text:p>Setup ..... 1</text:p><text:p>Usage ..... 2</text:p>'
    '</text:index-body></text:table-of-content>'
    '<text:h text:outline-level="1">Setup</text:h>'
    '<text:p>Install  <text:span>it</text:span><text:s text:c="3"/>now<text:note><text:note-citation>1'
    '</text:note-citation><text:note-body><text:p>A footnote.</text:p></text:note-body></text:note>.</text:p>'
    '<text:list><text:list-item><text:p>first step</text:p></text:list-item>'
    '<text:list-item><text:p>second step</text:p><text:list><text:list-item><text:p>nested</text:p>'
    '</text:list-item></text:list></text:list-item></text:list>'
    '<text:h text:outline-level="2">Options</text:h>'
    '<table:table table:name="Table1"><table:table-column table:number-columns-repeated="2"/>'
    '<table:table-header-rows>' + row(cell("name"), cell("default")) + '</table:table-header-rows>'
    + row(cell("size"), cell("512")) + row(cell(), cell(), repeat=3) + '</table:table>'
    '<text:section><text:p>After the table, in a section.</text:p></text:section>'
    '<text:h text:outline-level="1">Usage</text:h>'
    '<text:p>Run it <!-- a comment --><?pi x?>— ünïcode ✓<text:line-break/>next line.</text:p>'
    '</office:text>')


def odt() -> bytes:
    return odf_bytes(ODT, TEXT_BODY, title="Handbook")


def ods() -> bytes:
    first = ('<table:table table:name="People">' + row(cell("name"), cell("age"), cell("joined"))
             + row(cell("Ana"), cell("7", value_type="float", value="7"),
                   cell("03/12/2026", value_type="date", date_value="2026-12-03"))
             + row(cell(), repeat=2)
             + row(cell("Bo"), cell("50 %", value_type="percentage", value="0.5"), cell(), cell(repeat=16380))
             + row(cell(repeat=1024), repeat=1048570) + "</table:table>")
    second = ('<table:table table:name="Totals">' + row(cell("total"), cell("TRUE", value_type="boolean",
                                                                             boolean_value="true"))
              + row(cell("x", repeat=2), repeat=2) + "</table:table>")
    return odf_bytes(ODS, f"<office:spreadsheet>{first}{second}</office:spreadsheet>")


def frame(cls: str, y: str, x: str, inner: str) -> str:
    return (f'<draw:frame presentation:class="{cls}" svg:x="{x}" svg:y="{y}" svg:width="20cm" svg:height="2cm">'
            f"{inner}</draw:frame>")


def box(*paragraphs: str) -> str:
    return "<draw:text-box>" + "".join(f"<text:p>{p}</text:p>" for p in paragraphs) + "</draw:text-box>"


def odp() -> bytes:
    one = ('<draw:page draw:name="page1">'
           + frame("outline", "10cm", "1cm", box("lower on the page"))
           + frame("title", "1cm", "1cm", box("Welcome"))
           + frame("outline", "4cm", "1cm", '<draw:text-box><text:list><text:list-item><text:p>point one</text:p>'
                   '</text:list-item><text:list-item><text:p>point two</text:p></text:list-item></text:list>'
                   '</draw:text-box>')
           + frame("page-number", "18cm", "1cm", box("1"))
           + '<presentation:notes><draw:page-thumbnail/>' + frame("notes", "1cm", "1cm", box("Say hello first."))
           + '</presentation:notes></draw:page>')
    two = ('<draw:page draw:name="page2"><draw:g>' + frame("title", "1in", "1cm", box("Numbers")) + "</draw:g>"
           '<draw:frame svg:x="1cm" svg:y="5cm"><table:table>' + row(cell("q"), cell("sales"))
           + row(cell("Q1"), cell("10")) + '</table:table></draw:frame>'
           + '<presentation:notes>' + frame("notes", "1cm", "1cm", box("Mention Q1.", "Then stop."))
           + '</presentation:notes></draw:page>')
    return odf_bytes(ODP, f"<office:presentation>{one}{two}</office:presentation>", title="Deck")


def test_odt_headings_lists_tables_in_order():
    doc = parse_odf(document("handbook.odt", odt()))
    check_sections(doc)
    assert section_texts(doc) == [
        "Setup\n\nInstall it now.\n\n- first step\n\n- second step\n\n- nested",
        "Options\n\n| name | default |\n|---|---|\n| size | 512 |",
        "After the table, in a section.",
        "Usage\n\nRun it — ünïcode ✓\nnext line.",
    ]
    assert [s.heading_path for s in doc.sections] == [
        ("Setup",), ("Setup", "Options"), ("Setup", "Options"), ("Usage",)]
    assert [s.kind for s in doc.sections] == ["text", "table", "text", "text"]
    assert doc.metadata["title"] == "Handbook"
    assert "footnote" not in doc.text and "....." not in doc.text
    assert dict(doc.dropped)["table of contents"] > 0
    kept = parse_odf(document("handbook.odt", odt()), keep=frozenset({"contents"}))
    assert section_texts(kept)[0] == "Setup ..... 1\n\nUsage ..... 2"


def test_ods_sheets_rows_as_the_xlsx_parser_gives_them():
    doc = parse_odf(document("people.ods", ods()))
    check_sections(doc)
    assert section_texts(doc) == [
        "name | age | joined",
        "name: Ana\nage: 7\njoined: 2026-12-03",
        "name: Bo\nage: 0.5",
        "total | TRUE",
        "total: x\nTRUE: x",
        "total: x\nTRUE: x",
    ]
    assert [(s.kind, s.metadata["sheet"], s.metadata["row"]) for s in doc.sections] == [
        ("header", "People", 1), ("row", "People", 2), ("row", "People", 5),
        ("header", "Totals", 1), ("row", "Totals", 2), ("row", "Totals", 3)]
    assert doc.sections[1].metadata["columns"] == ("name", "age", "joined")
    assert doc.metadata["sheets"] == 2


def test_ods_repeats_are_bounded_by_the_limits():
    wide = odf_bytes(ODS, '<office:spreadsheet><table:table table:name="S">'
                     + row(cell("a"), cell("b", repeat=20)) + "</table:table></office:spreadsheet>")
    with pytest.raises(LimitExceeded, match="max_columns=10"):
        parse_odf(document("wide.ods", wide), limits=ParseLimits(max_columns=10))
    tall = odf_bytes(ODS, '<office:spreadsheet><table:table table:name="S">'
                     + row(cell("a")) + row(cell("b"), repeat=50) + "</table:table></office:spreadsheet>")
    with pytest.raises(ParseError, match="max_rows=10"):
        parse_odf(document("tall.ods", tall), limits=ParseLimits(max_rows=10))


def test_odp_slides_in_reading_order_with_notes():
    doc = parse_odf(document("deck.odp", odp()))
    check_sections(doc)
    assert section_texts(doc) == [
        "Welcome\n\n- point one\n- point two\n\nlower on the page",
        "Say hello first.",
        "Numbers\n\n| q | sales |\n|---|---|\n| Q1 | 10 |",
        "Mention Q1.\nThen stop.",
    ]
    assert [(s.kind, s.metadata["slide"], s.heading_path) for s in doc.sections] == [
        ("slide", 1, ("Welcome",)), ("notes", 1, ("Welcome",)), ("slide", 2, ("Numbers",)), ("notes", 2, ("Numbers",))]
    assert doc.sections[1].metadata["speaker_notes"] is True
    assert (doc.metadata["slides"], doc.metadata["title"]) == (2, "Deck")


@pytest.mark.parametrize("make,ctype,names", [
    (odt, ODT, ["a.odt", "a.docx", "a.zip", "a"]),
    (ods, ODS, ["a.ods", "a.xlsx", "a.bin"]),
    (odp, ODP, ["a.odp", "a.pptx", "a.txt"]),
])
def test_detected_by_name_and_by_its_mimetype_member(make, ctype, names):
    data = make()
    assert FORMAT_PARSERS[ctype] is parse_odf
    for name in names:
        assert detect_content_type(name, data) == ctype
        assert parse_in_process(document(name, data)).sections


def test_the_body_decides_the_reader_whatever_the_declared_type():
    misdeclared = rezip(odt(), {"mimetype": ODS})  # rezip writes it last and deflated: by name only
    assert detect_content_type("x.ods", misdeclared) == ODS
    assert section_texts(parse_odf(document("x.ods", misdeclared)))[0].startswith("Setup")


def one_line_error(data: bytes, match: str, error=ParseError) -> None:
    with pytest.raises(error, match=match) as info:
        parse_odf(document("bad.odt", data))
    assert "\n" not in str(info.value)


def test_damaged_and_foreign_files_give_one_clear_error():
    one_line_error(odt()[:300], "OpenDocument: not a valid zip container")
    one_line_error(b"just words", "OpenDocument: not a valid zip container")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("hello.txt", "hi")
    one_line_error(out.getvalue(), "missing content.xml; the file is a zip but not a OpenDocument")
    one_line_error(rezip(odt(), {"content.xml": "<office:document-content"}), "content.xml cannot be read as XML")
    deep = "<office:text><text:p>" + "<text:span>x" * 300 + "</text:span>" * 300 + "</text:p></office:text>"
    one_line_error(odf_bytes(ODT, deep), "content.xml cannot be read as XML .Excessive depth")
    drawing = odf_bytes("application/vnd.oasis.opendocument.graphics", "<office:drawing/>")
    one_line_error(drawing, "body holds drawing, not text, a spreadsheet or a presentation")


def test_dtd_and_zip_bomb_are_refused():
    one_line_error(rezip(odt(), {"content.xml": XXE}), "declares a DTD")
    one_line_error(zip_bomb(odt(), "Pictures/bomb.bin"), "compression ratio")


def test_files_written_by_odfpy_read_the_same():
    opendocument = pytest.importorskip("odf.opendocument")
    from odf.text import H, P

    book = opendocument.OpenDocumentText()
    book.text.addElement(H(outlinelevel=1, text="Chapter"))
    book.text.addElement(P(text="Body text."))
    out = io.BytesIO()
    book.write(out)
    assert detect_content_type("w.bin", out.getvalue()) == ODT
    assert section_texts(parse_odf(document("w.odt", out.getvalue()))) == ["Chapter\n\nBody text."]


def test_without_lxml_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "lxml.etree", None)
    with pytest.raises(MissingExtra, match=r"beam-chunking\[parsers\]"):
        parse_odf(document("handbook.odt", odt()))
