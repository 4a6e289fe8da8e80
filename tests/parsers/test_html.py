"""HTML parser: reading order, headings, element paths, chrome removal, tables, hostile input."""
from __future__ import annotations

import pytest

from beam_chunking.errors import DecodeError
from beam_chunking.parsers.html import parse_html
from tests.parsers.fixtures import check_sections, document, section_texts

PAGE = """<!doctype html><html><head><title>Guide</title><style>p{color:red}</style>
<script>var hidden = "never";</script></head><body>
<header><a href="/">Site logo</a> <nav><a href="/a">Home</a></nav></header>
<nav class="menu"><ul><li>Menu item</li></ul></nav>
<main><article>
<h1>Install <em>guide</em></h1>
<section><p>First   paragraph with <b>bold</b> and<br>a break.</p>
<h2>Linux</h2><p>Use apt.</p><ul><li>one</li><li>two</li></ul><ol><li>first</li><li>second</li></ol>
<h3>Debian</h3><p>Debian text.</p>
<h2>Windows</h2>
<table><caption>Versions</caption><thead><tr><th>OS</th><th>Ver | x</th></tr></thead>
<tbody><tr><td>Win</td><td>11</td></tr><tr><td>Old</td></tr></tbody></table>
<pre>  indented
    code()</pre>
<div hidden>secret</div><p style="display: none">invisible</p><span aria-hidden="true">aria</span>
</section></article></main>
<footer>Copyright footer</footer><aside>Related links</aside></body></html>"""


def parse(html: str | bytes, name: str = "page.html"):
    data = html.encode("utf-8") if isinstance(html, str) else html
    return parse_html(document(name, data))


def test_reading_order_headings_and_element_paths():
    doc = parse(PAGE)
    check_sections(doc)
    assert doc.metadata["title"] == "Guide"
    texts = section_texts(doc)
    assert texts[0] == "Install guide\n\nFirst paragraph with bold and\na break."
    assert [s.heading_path for s in doc.sections] == [
        ("Install guide",), ("Install guide", "Linux"), ("Install guide", "Linux", "Debian"),
        ("Install guide", "Windows"), ("Install guide", "Windows")]
    assert texts[1] == "Linux\n\nUse apt.\n\n- one\n\n- two\n\n1. first\n\n2. second"
    # the h1 stays in the path under its h2s; element paths are the blocks' common ancestry
    assert doc.sections[0].metadata["element_path"] == "main > article > section > p"
    assert doc.sections[1].metadata["element_path"] == "main > article > section"
    assert doc.sections[2].metadata["element_path"] == "main > article > section > p"


def test_tables_are_one_markdown_unit_and_pre_keeps_whitespace():
    doc = parse(PAGE)
    table = next(s for s in doc.sections if s.kind == "table")
    assert doc.text[table.start:table.end] == (
        "Windows\n\nVersions\n| OS | Ver \\| x |\n|---|---|\n| Win | 11 |\n| Old |  |")
    assert table.metadata["element_path"] == "main > article > section > table"
    code = next(s for s in doc.sections if s.kind == "code")
    assert doc.text[code.start:code.end] == "  indented\n    code()"


def test_chrome_scripts_and_hidden_text_are_left_out():
    text = parse(PAGE).text
    for gone in ("never", "Site logo", "Home", "Menu item", "secret", "invisible", "aria",
                 "Copyright footer", "Related links", "color:red"):
        assert gone not in text


def test_without_main_the_body_is_read_and_page_header_dropped():
    doc = parse("<body><header>Banner</header><div><h2>T</h2><p>Body <i>text</i></p></div>"
                "<article><header><h1>Kept title</h1></header><p>x</p></article></body>")
    assert "Banner" not in doc.text
    assert section_texts(doc) == ["T\n\nBody text", "Kept title\n\nx"]
    assert doc.sections[0].level == 2 and doc.sections[1].heading_path == ("Kept title",)


def test_layout_tables_are_walked_as_blocks():
    doc = parse("<table><tr><td><h1>Title</h1><p>Para</p></td><td><table><tr><td>in</td></tr></table></td></tr></table>")
    assert doc.sections[0].heading_path == ("Title",)
    assert "Para" in doc.text and "| in |" in doc.text


def test_entities_and_doctype_are_not_expanded():
    hostile = ('<?xml version="1.0"?><!DOCTYPE html [<!ENTITY xxe SYSTEM "file:///etc/passwd">'
               '<!ENTITY lol "lollollol">]><html><body><p>&xxe; &lol; &amp; &eacute;</p></body></html>')
    doc = parse(hostile)
    assert "root:" not in doc.text and "lollollol" not in doc.text
    assert "& é" in doc.text


def test_declared_charset_and_invalid_bytes():
    latin = "<html><head><meta charset='windows-1252'></head><body><p>café “q”</p></body></html>"
    assert "café “q”" in parse(latin.encode("cp1252")).text
    with pytest.raises(DecodeError, match="byte offset"):
        parse(b"<p>caf\xe9</p>")
    # bytes invalid in the declared charset: strict names the offset, replace counts them
    declared = b"<meta charset='shift_jis'><p>ok \x81\x20 end</p>"
    with pytest.raises(DecodeError, match="invalid shift_jis at byte offset"):
        parse(declared)
    lenient = parse_html(document("p.html", declared), errors="replace")
    assert lenient.metadata["decode_replacements"] == 1 and "\ufffd" in lenient.text


def test_deep_nesting_and_empty_input():
    deep = "<div>" * 5000 + "<p>bottom</p>" + "</div>" * 5000
    assert parse(deep).text.endswith("bottom")
    assert parse("").sections == ()
    assert parse("<html><body><script>x</script></body></html>").sections == ()
