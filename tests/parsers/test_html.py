"""HTML parser: reading order, headings, element paths, chrome removal, tables, hostile input."""
from __future__ import annotations

import pytest

from beam_chunking.errors import DecodeError
from beam_chunking.parsers.html import MAX_ELEMENT_PATH, NAV_BAR_MAX_ROWS, NAV_BLOCK_MAX_CHARS, parse_html
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
    declared_latin = parse(latin.encode("cp1252"))
    assert "café “q”" in declared_latin.text
    assert (declared_latin.metadata["encoding"], declared_latin.metadata["encoding_confidence"]) == ("cp1252", 1.0)
    # bytes invalid in the declared charset: strict names the offset, replace counts them
    declared = b"<meta charset='shift_jis'><p>ok \x81\x20 end</p>"
    with pytest.raises(DecodeError, match="invalid shift_jis at byte offset"):
        parse(declared)
    lenient = parse_html(document("p.html", declared), errors="replace")
    assert lenient.metadata["decode_replacements"] == 1 and "\ufffd" in lenient.text


def test_a_page_that_declares_no_charset_is_read_in_the_encoding_detected():
    # An old manual page: ASCII markup, a name in Latin-1, no charset anywhere (a browser
    # sniffs windows-1252; so does the text parser).
    page = ("<html><head><meta http-equiv='Content-Type' content='text/html'><title>Changes</title></head>"
            "<body><p>Fix typos (Jan Pokorný), thanks to Frédéric and Zoë.</p></body></html>")
    doc = parse(page.encode("cp1252"))
    assert "Fix typos (Jan Pokorný), thanks to Frédéric and Zoë." in doc.text
    assert doc.metadata["encoding"] == "cp1252" and 0 < doc.metadata["encoding_confidence"] <= 1
    cyrillic = "<p>" + "Привет, как дела? Это обычный текст на русском языке. " * 4 + "</p>"
    assert "Привет, как дела?" in parse(cyrillic.encode("cp1251")).text
    utf8 = parse("<p>café</p>".encode("utf-8"))
    assert (utf8.metadata["encoding"], utf8.metadata["encoding_confidence"]) == ("utf-8", 1.0)
    # UTF-8 with a stray bad byte is damaged, not legacy: strict names it, replace counts it
    damaged = ("<p>" + "naïve café " * 10).encode("utf-8") + b"\xff</p>"
    with pytest.raises(DecodeError, match="otherwise UTF-8"):
        parse(damaged)
    assert parse_html(document("d.html", damaged), errors="replace").metadata["decode_replacements"] == 1


def test_an_xhtml_page_declares_its_encoding_in_the_xml_declaration():
    page = ('<?xml version="1.0" encoding="ISO-8859-2"?>\n<html xmlns="http://www.w3.org/1999/xhtml">'
            "<body><p>Zażółć gęślą jaźń</p></body></html>")
    doc = parse(page.encode("iso8859_2"))
    assert "Zażółć gęślą jaźń" in doc.text
    assert (doc.metadata["encoding"], doc.metadata["encoding_confidence"]) == ("iso8859-2", 1.0)


def test_deep_nesting_and_empty_input():
    deep = "<div>" * 5000 + "<p>bottom</p>" + "</div>" * 5000
    doc = parse(deep)  # 10,000 tags: under the depth check; the walk is iterative, the path bounded
    assert doc.text.endswith("bottom")
    assert doc.sections[0].metadata["element_path"] == " > ".join(["div"] * MAX_ELEMENT_PATH)
    assert parse("").sections == ()
    assert parse("<html><body><script>x</script></body></html>").sections == ()


ADMONITION = """<body><h1>Files</h1><p>Intro.</p>
<div class="tip" style="margin-left: 0.5in;"><table border="0" summary="Tip">
<tr><td rowspan="2" align="center" valign="top"><img alt="[Tip]" src="images/tip.png"/></td><th align="left">Tip</th></tr>
<tr><td align="left" valign="top"><p>Run <code class="literal">mount</code>(8) with no arguments.</p></td></tr>
</table></div><p>After.</p></body>"""


def test_a_docbook_admonition_box_is_laid_out_as_text_not_a_table():
    doc = parse(ADMONITION)
    check_sections(doc)
    assert section_texts(doc) == ["Files\n\nIntro.\n\nTip: Run mount(8) with no arguments.\n\nAfter."]
    assert all(s.kind == "text" for s in doc.sections) and "|" not in doc.text


@pytest.mark.parametrize("box, text", [
    # Sphinx and MkDocs: a titled paragraph
    ('<div class="admonition note"><p class="admonition-title">Note</p><p>Body text.</p></div>', "Note: Body text."),
    # DocBook without the layout table: a heading that is the box's title, not a section
    ('<div class="warning"><h3 class="title">Warning</h3><p>Do not.</p></div>', "Warning: Do not."),
    ('<div class="admonition tip"><p class="admonition-title">Tip:</p><p>Colon kept once.</p></div>',
     "Tip: Colon kept once."),
    ('<div class="admonition tip"><p class="admonition-title">Tip</p><ul><li>one</li><li>two</li></ul></div>',
     "Tip:\n- one\n\n- two"),
    # no label: one paragraph, or a long first one
    ('<div class="note"><p>Only a body.</p></div>', "Only a body."),
    ('<div class="note"><p>' + "A long first paragraph of the note. " * 2 + '</p><p>More.</p></div>',
     ("A long first paragraph of the note. " * 2).strip() + "\n\nMore."),
])
def test_an_admonition_label_opens_its_paragraph(box, text):
    doc = parse(f"<body>{box}<h2>Next</h2><p>After.</p></body>")
    check_sections(doc)
    assert section_texts(doc) == [text, "Next\n\nAfter."]
    assert doc.sections[0].heading_path == ()


def test_a_label_before_code_stays_its_own_line():
    doc = parse('<body><div class="warning"><p class="admonition-title">Warning</p><pre>rm -rf /</pre></div></body>')
    assert doc.text == "Warning\n\nrm -rf /" and [s.kind for s in doc.sections] == ["text", "code"]


@pytest.mark.parametrize("table", [
    # a one-cell-wide box: no row holds two values side by side
    "<table><tr><td><img src='i.png'></td></tr><tr><td><p>Boxed words.</p><p>Second.</p></td></tr></table>",
    "<table role='presentation'><tr><td>Boxed words.</td><td>Second.</td></tr></table>",
    "<div class='admonition note'><table><tr><td>Boxed words.</td><td>Second.</td></tr></table></div>",
    # columns left empty for spacing
    "<table><tr><td>Boxed words.</td><td>&nbsp;</td><td></td></tr><tr><td>Second.</td><td> </td></tr></table>",
])
def test_layout_tables_are_read_as_blocks(table):
    doc = parse(f"<body><p>Before.</p>{table}</body>")
    assert "|" not in doc.text and "Boxed words." in doc.text and "Second." in doc.text
    assert [s.kind for s in doc.sections] == ["text"]


def test_texinfo_menus_are_contents():
    page = ('<h2>1 Introduction</h2><table class="menu" border="0" cellspacing="0">'
            + "".join(f'<tr><td>&bull; <a href="#{n}" accesskey="{k}">{n}</a></td><td>&nbsp;&nbsp;</td><td></td></tr>'
                      for k, n in enumerate(["Description", "Options", "Numbers"], 1))
            + '</table><p>bc is a language.</p>')
    doc = parse(page)
    assert section_texts(doc) == ["1 Introduction\n\nbc is a language."]
    assert doc.dropped == (("table of contents", len("•Description•Options•Numbers")),)


def test_data_tables_with_empty_cells_stay_tables():
    doc = parse("<table><tr><th>BRE</th><th>ERE</th></tr><tr><td>\\+</td><td></td></tr>"
                "<tr><td><p>a</p></td><td><p>b</p></td></tr></table>")
    assert section_texts(doc) == ["| BRE | ERE |\n|---|---|\n| \\+ |  |\n| a | b |"]


def test_inline_elements_add_no_spaces_in_cells_captions_and_headings():
    doc = parse("<h2><code>ls</code>(1) usage</h2><table><caption>Keys of <b>xev</b>(1)</caption>"
                "<tr><th>command</th><th>note</th></tr>"
                "<tr><td><a href='x'><code>xev</code></a>(1)</td><td>use <code>-u</code>.</td></tr>"
                "<tr><td><p>one</p><p>two</p></td><td>a<br>b</td></tr></table>")
    assert section_texts(doc) == ["ls(1) usage\n\nKeys of xev(1)\n| command | note |\n|---|---|\n"
                                  "| xev(1) | use -u. |\n| one two | a b |"]
    assert doc.sections[0].heading_path == ("ls(1) usage",)


TOC_PAGE = """<html><body><div class="chapter"><h1>Chapter 1. Tutorials</h1>
<div class="toc"><p><strong>Table of Contents</strong></p><dl class="toc">
<dt><span class="section"><a href="ch01.html#_basics">1.1. Console basics</a></span></dt>
<dd><dl><dt><span class="section"><a href="ch01.html#_prompt">1.1.1. The shell prompt</a></span></dt></dl></dd>
</dl></div>
<p>Body words.</p>
<div class="toctree-wrapper compound"><ul><li><a href="install.html">Install</a></li></ul></div>
<div class="contents topic"><p class="topic-title">Contents</p><ul><li><a href="#a">Alpha</a></li>
<li><a href="#b">Beta</a></li><li><a href="#g">Gamma</a></li></ul></div>
<div class="toctree-wrapper"><div class="section"><h2>Poured in</h2>
<p>Sphinx singlehtml puts the whole document inside the wrapper, <a href="#x">links</a> and all.</p></div></div>
<nav><a href="/">Home</a></nav>
<div class="section"><div class="titlepage"><h2>Sections</h2></div>
<ul><li><a href="#one">One</a></li><li><a href="#two">Two</a></li><li><a href="#three">Three</a></li></ul></div>
<p>It runs in stages:</p>
<ul><li><a href="#s1">Stage one</a></li><li><a href="#s2">Stage two</a></li><li><a href="#s3">Stage three</a></li></ul>
<ul><li><a href="https://example.org/a">Elsewhere</a></li><li><a href="b.html">Beside</a></li><li><a href="#c">Here</a></li></ul>
<ol><li>Note<a href="#r1">1</a> with a long explanation that is not a link.</li><li>x<a href="#r2">2</a></li><li>y<a href="#r3">3</a></li></ol>
</div></body></html>"""


def test_in_page_contents_are_dropped_and_recorded_or_kept():
    doc = parse_html(document("ch01.html", TOC_PAGE.encode()))
    check_sections(doc)
    for gone in ("Table of Contents", "Console basics", "shell prompt", "Install", "Contents", "Home",
                 "Three"):
        assert gone not in doc.text
    assert "Body words." in doc.text and "Elsewhere" in doc.text and "long explanation" in doc.text
    # a marked block that is mostly prose is no contents listing
    assert "Sphinx singlehtml puts the whole document" in doc.text
    # a list of cross-references introduced by a paragraph is body text, not a contents list
    assert "It runs in stages:\n\n- Stage one\n\n- Stage two" in doc.text
    listed = "TableofContents1.1.Consolebasics1.1.1.Theshellprompt" + "Install"
    listed += "ContentsAlphaBetaGamma" + "Home"
    listed += "OneTwoThree"  # the heading above the anchor list stays
    assert doc.dropped == (("table of contents", len(listed)),)
    kept = parse_html(document("ch01.html", TOC_PAGE.encode()), keep=frozenset({"contents"}))
    assert kept.dropped == () and "1.1.1. The shell prompt" in kept.text and "Home" in kept.text


def test_a_title_block_before_a_table_becomes_its_caption():
    # DocBook: <div class="table"><p class="title">...</p><div class="table-contents"><table>
    doc = parse('<p>Intro.</p><div class="table"><a id="t1"></a><p class="title"><strong>Table 1.1. Packages'
                '</strong></p><div class="table-contents"><table><tr><th>name</th><th>size</th></tr>'
                '<tr><td>mc</td><td>1482</td></tr></table></div></div><p class="title">Figure title</p><p>After.</p>'
                '<p>Plain text before.</p><table><tr><td>a</td><td>b</td></tr></table>')
    check_sections(doc)
    assert section_texts(doc) == ["Intro.", "Table 1.1. Packages\n| name | size |\n|---|---|\n| mc | 1482 |",
                                  "Figure title\n\nAfter.\n\nPlain text before.", "|  |  |\n|---|---|\n| a | b |"]


def test_javadoc_pages_lose_their_navigation_bars_and_keep_summary_tables():
    page = ('<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01 Transitional//EN"><html><body>'
            '<div class="topNav"><ul class="navList" title="Navigation"><li><a href="../overview-summary.html">'
            'Overview</a></li><li><a href="package-summary.html">Package</a></li></ul></div>'
            '<div class="subNav"><ul class="navList"><li><a href="Foo.html">Prev Class</a></li></ul></div>'
            '<div class="header"><h2 title="Class Bar" class="title">Class Bar</h2></div>'
            '<table class="memberSummary" summary="Method Summary table"><caption><span>Methods</span></caption>'
            '<tr><th>Modifier and Type</th><th>Method and Description</th></tr>'
            '<tr><td><code>int</code></td><td><code><a href="#size--">size</a>()</code><div class="block">'
            'Returns the size.</div></td></tr></table>'
            '<div class="bottomNav"><ul class="navList"><li>Overview</li></ul></div></body></html>')
    doc = parse(page)
    assert section_texts(doc) == ["Class Bar\n\nMethods\n| Modifier and Type | Method and Description |\n"
                                  "|---|---|\n| int | size() Returns the size. |"]


def test_navigation_tables_are_left_out_whatever_their_class():
    # A DocBook customisation (Valgrind's manual) keeps the summary but drops the navheader
    # div; gtk-doc draws its arrows as image links; neither is a data table.
    page = ('<html><body><div><table class="nav" summary="Navigation header"><tr>'
            '<td><a accesskey="p" href="drd.html"><img src="prev.png" alt="Prev"></a></td>'
            '<th>Valgrind User Manual</th></tr></table></div>'
            '<table class="navigation"><tr><td><a href="imports.html"><img src="left.png" alt="Prev"></a></td>'
            '<th><a href="imports.html">imports</a></th><th><a href="index.html">API documentation</a></th>'
            '<th><a href="namespaces.html">namespaces</a></th></tr></table>'
            '<h1>9. Massif</h1><p>Massif is a heap profiler.</p>'
            '<table><tr><th>Option</th><th>Meaning</th></tr><tr><td><a href="opts.html">--heap</a></td>'
            '<td>profile the heap</td></tr></table>'
            '<table><tr><td><a href="x.html">one</a></td><td><a href="y.html">two</a></td></tr></table>'
            '<div><table summary="Navigation footer"><tr><td><a accesskey="p" href="drd.html">&lt;&lt; 8. DRD</a></td>'
            '<td><a accesskey="u" href="manual.html">Up</a></td><td><a accesskey="n" href="dh.html">10. DHAT &gt;&gt;'
            '</a></td></tr><tr><td><a accesskey="h" href="index.html">Home</a></td></tr></table></div>'
            '</body></html>')
    doc = parse(page)
    # The table of two links with no Prev/Next among them is content (related pages, say).
    assert section_texts(doc) == ["9. Massif\n\nMassif is a heap profiler.",
                                  "| Option | Meaning |\n|---|---|\n| --heap | profile the heap |",
                                  "|  |  |\n|---|---|\n| one | two |"]


@pytest.mark.parametrize("page, kept", [
    ('<div><p>The meeting moved to Thursday.</p><a rel="prev" href="a.html">Older</a> '
     '<a rel="next" href="c.html">Newer</a></div>', "The meeting moved to Thursday."),
    ('<main><p>The meeting moved to Thursday.</p><a rel="prev" href="a.html">Older</a> '
     '<a rel="next" href="c.html">Newer</a></main>', "The meeting moved to Thursday."),
    ('<div><p>Release 2.3 fixes the crash on start.</p><p>Next: <a href="n.html">Notes</a>, '
     'Up: <a href="i.html">Index</a></p></div>', "Release 2.3 fixes the crash on start."),
    ('<div><p>Welcome to the club site.</p><a accesskey="h" href="/">Home</a> '
     '<a accesskey="n" href="n.html">Next</a></div>', "Welcome to the club site."),
    ('<dl><dt>Account</dt><dd>Group: <a href="g.html">Administrators</a></dd>'
     '<dd>Setup: <a href="s.html">Install guide</a></dd></dl>', "Group: Administrators"),
    ('<table><tr><td><a href="https://numpy.org">NumPy</a></td><td><a href="https://scipy.org">SciPy</a></td></tr>'
     '<tr><td><a href="https://pandas.pydata.org">pandas</a></td><td><a href="https://matplotlib.org">Matplotlib</a>'
     '</td></tr></table>', "NumPy"),
    ('<p>As stated in <a href="#s5">§</a> 5, the fee is due.</p>', "As stated in § 5, the fee is due."),
])
def test_content_beside_or_like_navigation_links_stays(page, kept):
    assert kept in parse(page).text


def test_the_bounds_of_a_navigation_bar():
    prev_next = '<a accesskey="p" href="a.html">Prev</a> <a accesskey="n" href="c.html">Next</a>'
    row = f"<tr><td>{prev_next}</td></tr>"
    # A table of links is a bar up to NAV_BAR_MAX_ROWS rows; a longer one is data.
    for rows, gone in ((NAV_BAR_MAX_ROWS, True), (NAV_BAR_MAX_ROWS + 1, False)):
        text = parse(f"<p>Body.</p><table>{row * rows}</table>").text
        assert (text == "Body.") is gone, rows
    # A block of more than NAV_BLOCK_MAX_CHARS characters is no bar, whatever it holds.
    links = " ".join(f'<a rel="next" href="{k}.html">Next</a>' for k in range(NAV_BLOCK_MAX_CHARS // 4 + 1))
    assert "NextNext" in "".join(parse(f"<p>Body.</p><div>{links}</div>").text.split())
    assert parse(f'<p>Body.</p><div>{links.split(" ")[0]} {links.split(" ")[1]}</div>').text == "Body."
    # A cell is never removed alone: its table keeps its columns.
    cells = f"<table><tr><th>Page</th><th>Links</th></tr><tr><td>Intro</td><td>{prev_next}</td></tr></table>"
    assert "| Intro | Prev Next |" in parse(cells).text


def test_prev_up_next_bars_are_left_out_however_they_are_marked_up():
    texinfo = ('<body><div class="header"><p>Previous: <a href="Missing.html" accesskey="p" rel="prev">Missing '
               'Features</a>, Up: <a href="index.html" accesskey="u" rel="up">libffi</a> &nbsp; '
               '[<a href="#Index" rel="index">Index</a>]</p></div><hr><h2>Index</h2><p>Entries.</p></body>')
    assert section_texts(parse(texinfo)) == ["Index\n\nEntries."]
    # Texinfo repeats the line at the foot of the page, without the attributes.
    foot = ('<h2>Types</h2><p>Body text.</p><div class="header"><p>Next: <a href="Arrays.html">Arrays</a>, '
            'Previous: <a href="Structures.html">Structures</a>, Up: <a href="Types.html">Types</a> &nbsp; '
            '[<a href="Index.html" rel="index">Index</a>]</p></div>')
    assert section_texts(parse(foot)) == ["Types\n\nBody text."]
    dsssl = ('<BODY><DIV CLASS="NAVHEADER"><TABLE SUMMARY="Header navigation table"><TR><TH COLSPAN="3">'
             'Shared MIME-info Database</TH></TR><TR><TD><A HREF="index.html" ACCESSKEY="P">Prev</A></TD><TD></TD>'
             '<TD><A HREF="x497.html" ACCESSKEY="N">Next</A></TD></TR></TABLE></DIV><H1>2. Unified system</H1>'
             '<P>One database.</P></BODY>')
    assert section_texts(parse(dsssl)) == ["2. Unified system\n\nOne database."]
    # Links with rel=prev/next inside a sentence stay: the block is mostly text, not a bar.
    prose = ('<p>This chapter builds on <a rel="prev" href="a.html">the last one</a> and leads to '
             '<a rel="next" href="c.html">the next</a>, where the options are described in full.</p>')
    assert parse(prose).text == "This chapter builds on the last one and leads to the next, where the options are described in full."


def test_permalink_marks_are_not_part_of_headings_or_text():
    page = ('<h2>File system<span><a class="mark" href="#file-system">#</a></span></h2><p>Read files.</p>'
            '<h3>fs.readFile(path)<a class="headerlink" href="#fs-readfile" title="Permalink">¶</a></h3>'
            '<dl><dt>open()<a class="headerlink" href="#open">¶</a></dt><dd>Opens it.</dd></dl>'
            '<p>See <a href="#file-system">File system</a> and issue <a href="https://example.org/1">#</a>.</p>')
    doc = parse(page)
    assert [s.heading_path for s in doc.sections] == [("File system",), ("File system", "fs.readFile(path)")]
    assert "¶" not in doc.text and "File system#" not in doc.text
    assert "open()\n\nOpens it." in doc.text and "See File system and issue #." in doc.text


def test_a_title_stays_where_it_is_before_a_layout_table_or_when_it_is_a_heading():
    doc = parse('<p class="title">Box title</p><table><tr><td><p>Boxed.</p></td></tr></table>'
                '<h3 class="title">Real heading</h3><table><tr><td>a</td><td>b</td></tr></table>')
    check_sections(doc)
    assert section_texts(doc) == ["Box title\n\nBoxed.", "Real heading\n\n|  |  |\n|---|---|\n| a | b |"]
    assert doc.sections[1].heading_path == ("Real heading",)
