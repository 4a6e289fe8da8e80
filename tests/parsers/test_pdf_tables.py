"""PDF table finder: ruled and whitespace-aligned tables in fpdf2- and Chromium-made PDFs,
and the layouts that must not be taken for tables (prose, columns, lists, code, contents,
key: value lines)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from typing import Callable, List

import pytest

from beam_chunking.parsers.pdf_lines import page_lines
from beam_chunking.parsers.pdf_tables import PdfTable, find_tables, table_markdown

pdfium = pytest.importorskip("pypdfium2")
fpdf = pytest.importorskip("fpdf")

PROSE = ("The committee met on a grey morning to discuss the state of the harbour, the price of "
         "grain and the long quarrel over the bridge tolls, which nobody expected to settle soon. ")
HEADER = ("Name", "Role", "City")
PEOPLE = [("Alice Moreau", "Engineer", "Lyon"), ("Bob Stone", "Designer", "Leeds"),
          ("Chen Wei", "Analyst", "Shanghai"), ("Dana Ruiz", "Manager", "Quito")]


def tables_in(data: bytes, page: int = 0) -> List[PdfTable]:
    pdf = pdfium.PdfDocument(data)
    try:
        p = pdf[page]
        tp = p.get_textpage()
        try:
            # As the PDF parser calls it: with the page's lines, so the cheap check that skips
            # prose pages is tested on every case too.
            lines = page_lines(pdfium.raw, tp, p.get_height())
            found = find_tables(p, tp, lines)
            assert found == find_tables(p, tp), "the check on the lines skipped a table"
            return found
        finally:
            tp.close()
            p.close()
    finally:
        pdf.close()


def fpdf_page(draw: Callable) -> bytes:
    """A one-page A4 PDF (points, Helvetica 10) drawn by ``draw(pdf)``."""
    pdf = fpdf.FPDF(unit="pt", format="A4")
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_font("Helvetica", size=10)
    draw(pdf)
    return bytes(pdf.output())


def near(box, expected, tol: float = 6.0) -> bool:
    return all(abs(a - b) <= tol for a, b in zip(box, expected))


def write_columns(pdf, x_positions, y: float, rows, pitch: float = 16.0, font=("Helvetica", 10)) -> None:
    """Rows of text whose cells start at ``x_positions``, one text object per cell."""
    pdf.set_font(font[0], size=font[1])
    for k, row in enumerate(rows):
        for x, cell in zip(x_positions, row):
            if cell:
                pdf.text(x, y + k * pitch, cell)


# ------------------------------------------------------------------------------ ruled, fpdf2
def test_ruled_table_drawn_by_fpdf2_table():
    def draw(pdf):
        pdf.set_xy(60, 100)
        with pdf.table(width=400, col_widths=(40, 30, 30), align="LEFT", text_align="LEFT") as table:
            for row in [HEADER] + PEOPLE[:3]:
                cells = table.row()
                for text in row:
                    cells.cell(text)

    tables = tables_in(fpdf_page(draw))
    assert len(tables) == 1
    table = tables[0]
    assert table.ruled
    assert table.rows == (HEADER,) + tuple(PEOPLE[:3])
    assert near(table.box, (60, 100, 460, 100 + 4 * table_row_height(table)), tol=8)


def table_row_height(table: PdfTable) -> float:
    return (table.box[3] - table.box[1]) / len(table.rows)


def test_ruled_table_with_an_empty_cell_and_a_multi_line_cell():
    long = "a cell long enough to wrap over three lines of this narrow column"

    def draw(pdf):
        pdf.set_xy(60, 80)
        with pdf.table(width=300, col_widths=(30, 40, 30), align="LEFT", text_align="LEFT") as table:
            for row in [("Key", "Notes", "Value"), ("alpha", long, "1"), ("beta", "", "2"), ("gamma", "short", "")]:
                cells = table.row()
                for text in row:
                    cells.cell(text)

    tables = tables_in(fpdf_page(draw))
    assert [t.rows for t in tables] == [(("Key", "Notes", "Value"), ("alpha", long, "1"), ("beta", "", "2"),
                                         ("gamma", "short", ""))]
    assert tables[0].box[0] == pytest.approx(60, abs=3) and tables[0].box[2] == pytest.approx(360, abs=3)


def docbook_style(pdf, x0: float, x1: float, split: float, y: float, rows, pitch: float = 14.0) -> float:
    """A table ruled like DocBook's: a rule above and below every row, one inner vertical,
    no outer verticals. Returns the bottom rule's y."""
    pdf.set_line_width(0.4)
    for k, (a, b) in enumerate(rows):
        pdf.line(x0, y + k * pitch, x1, y + k * pitch)
        pdf.text(x0 + 4, y + k * pitch + 10, a)
        pdf.text(split + 4, y + k * pitch + 10, b)
    bottom = y + len(rows) * pitch
    pdf.line(x0, bottom, x1, bottom)
    pdf.line(split, y, split, bottom)
    return bottom


def test_rules_without_outer_verticals_and_two_tables_on_a_page():
    commands = [("command", "description"), ("pwd", "print the working directory"),
                ("whoami", "print the user name"), ("id", "print user and group ids")]

    def draw(pdf):
        docbook_style(pdf, 60, 520, 200, 80, commands)
        pdf.text(60, 170, "Table 1: Some commands, and below the same people without any rules.")
        write_columns(pdf, (60, 200, 320), 220, [HEADER] + PEOPLE)

    tables = tables_in(fpdf_page(draw))
    assert [(t.ruled, t.rows) for t in tables] == [(True, tuple(commands)), (False, (HEADER,) + tuple(PEOPLE))]
    assert near(tables[0].box, (60, 80, 520, 136), tol=2)
    assert near(tables[1].box, (60, 212, 360, 286), tol=8)


# ------------------------------------------------------------------ whitespace-aligned, fpdf2
def test_whitespace_aligned_table():
    rows = [("Item", "Qty", "Price", "Origin"), ("Apples", "12", "3.20", "Normandy"), ("Pears", "7", "2.75", "Anjou"),
            ("Plums", "30", "5.10", "Agen"), ("Quinces", "4", "6.00", "Provence")]

    def draw(pdf):
        pdf.multi_cell(470, 13, PROSE * 2)
        write_columns(pdf, (60, 180, 260, 340), 150, rows)
        pdf.set_xy(40, 250)
        pdf.multi_cell(470, 13, PROSE * 2)

    tables = tables_in(fpdf_page(draw))
    assert [(t.ruled, t.rows) for t in tables] == [(False, tuple(rows))]
    assert near(tables[0].box, (60, 142, 382, 217), tol=8)


def test_whitespace_table_with_an_empty_cell():
    rows = [("Port", "Service", "Notes"), ("22", "ssh", "remote shell"), ("25", "smtp", ""),
            ("80", "http", "web"), ("443", "https", "web over TLS")]
    tables = tables_in(fpdf_page(lambda pdf: write_columns(pdf, (60, 140, 240), 100, rows)))
    assert [t.rows for t in tables] == [tuple(rows)]


def test_whitespace_table_with_a_multi_line_cell():
    def draw(pdf):
        write_columns(pdf, (60, 160), 100, [("Term", "Meaning")], pitch=20)
        write_columns(pdf, (60, 160), 120, [("latency", "time from a request")], pitch=20)
        write_columns(pdf, (60, 160), 132, [("", "to its first answer")], pitch=20)
        write_columns(pdf, (60, 160), 152, [("jitter", "spread of latency"), ("uptime", "share of time up")],
                      pitch=20)

    tables = tables_in(fpdf_page(draw))
    assert [t.rows for t in tables] == [(("Term", "Meaning"), ("latency", "time from a request to its first answer"),
                                         ("jitter", "spread of latency"), ("uptime", "share of time up"))]


# --------------------------------------------------------------------------- negatives, fpdf2
def test_prose_is_no_table():
    def draw(pdf):
        pdf.multi_cell(470, 13, PROSE * 12)

    assert tables_in(fpdf_page(draw)) == []


def test_two_column_prose_is_no_table():
    def draw(pdf):
        for x in (40, 310):
            pdf.set_xy(x, 60)
            pdf.multi_cell(240, 13, PROSE * 6, align="J")

    assert tables_in(fpdf_page(draw)) == []


def test_two_column_prose_beside_short_lines_is_no_table():
    # The right column is a list of short lines level with the left column's prose: every
    # line has a gutter, but the left column's lines are sentences filling their column.
    def draw(pdf):
        pdf.set_xy(40, 60)
        pdf.multi_cell(240, 13, PROSE * 2)
        write_columns(pdf, (310,), 69, [("Lower case letters",), ("Digits 0 through 9",), ("Punctuation marks",),
                                        ("Upper case letters",), ("Spaces",)], pitch=13)

    assert tables_in(fpdf_page(draw)) == []


def test_bulleted_and_numbered_lists_are_no_tables():
    items = ["Check the cables before you start the engine", "Open the valve", "Wait for the green lamp",
             "Close the hatch and report to the desk"]

    def draw(pdf):
        write_columns(pdf, (60, 80), 80, [("-", item) for item in items])
        write_columns(pdf, (60, 80), 200, [(f"{k}.", item) for k, item in enumerate(items, 1)])

    assert tables_in(fpdf_page(draw)) == []


def test_code_listing_is_no_table():
    # Only the fixed-pitch font tells this from a table: one text object per token, aligned.
    code = [("x = 1", "# first value"), ("total = x + 2", "# running total"), ("print(total)", "# shown"),
            ("return total", "# done")]

    def draw(pdf):
        write_columns(pdf, (60, 200), 80, code, pitch=12, font=("Courier", 10))

    assert tables_in(fpdf_page(draw)) == []


def test_dot_leader_contents_is_no_table():
    entries = [("1", "Introduction", "1"), ("2", "Installing the system", "9"), ("3", "Networks", "27"),
               ("4", "Keeping it safe", "41")]

    def draw(pdf):
        for k, (number, title, page) in enumerate(entries):
            y = 80 + 16 * k
            pdf.text(60, y, number)
            pdf.text(90, y, title + " " + ". " * int((300 - pdf.get_string_width(title)) / pdf.get_string_width(". ")))
            pdf.text(420, y, page)

    assert tables_in(fpdf_page(draw)) == []


def test_key_value_lines_are_no_table():
    pairs = [("Name:", "Alice Moreau"), ("Email:", "alice@example.org"), ("Phone:", "+33 4 00 00 00"),
             ("Office:", "B 214")]
    assert tables_in(fpdf_page(lambda pdf: write_columns(pdf, (60, 140), 80, pairs))) == []


def test_page_frame_and_underlines_are_no_table():
    def draw(pdf):
        pdf.rect(30, 30, 535, 780)  # a frame round the page
        pdf.set_xy(40, 60)
        pdf.multi_cell(470, 13, PROSE * 4)
        pdf.line(40, 200, 300, 200)

    assert tables_in(fpdf_page(draw)) == []


# ------------------------------------------------------------------------------ markdown
def test_markdown_escapes_pipes_and_newlines():
    table = PdfTable((0.0, 0.0, 1.0, 1.0), (("a|b", "c"), ("line 1\nline 2", "")), False)
    assert table_markdown(table) == "| a\\|b | c |\n|---|---|\n| line 1<br>line 2 |  |"


# ----------------------------------------------------------------------------- Chromium
CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)

CSS = """@page { size: A4; margin: 20mm } body { font: 11pt 'DejaVu Serif', serif } .page { break-after: page }
table.ruled { border-collapse: collapse } table.ruled td, table.ruled th { border: 1px solid #000; padding: 3px 6px }
table.plain td, table.plain th { padding: 2px 14px 2px 0; text-align: left } th { text-align: left }"""


def html_table(cls: str, rows, width: str = "") -> str:
    head = "".join(f"<th>{c}</th>" for c in rows[0])
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows[1:])
    style = f' style="width:{width}"' if width else ""
    return f'<table class="{cls}"{style}><tr>{head}</tr>{body}</table>'


LONG = "a note long enough to wrap onto a second line in this column"
CHROME_RULED = [HEADER, PEOPLE[0], ("Bob Stone", "", "Leeds"), ("Chen Wei", LONG, "Shanghai")]
CHROME_PLAIN = [("Planet", "Moons", "Day length"), ("Mercury", "0", "59 days"), ("Venus", "0", "243 days"),
                ("Earth", "1", "24 hours"), ("Mars", "2", "25 hours")]
PAGES = [
    # 1: a bordered table, an empty and a wrapped cell; 2: a borderless table; 3: both
    f"<p>{PROSE}</p>{html_table('ruled', CHROME_RULED, '60%')}<p>{PROSE}</p>",
    f"<p>{PROSE}</p>{html_table('plain', CHROME_PLAIN)}<p>{PROSE}</p>",
    f"{html_table('ruled', CHROME_PLAIN)}<p>{PROSE}</p>{html_table('plain', [HEADER] + PEOPLE)}",
    # 4-7: layouts that are not tables
    "<div style='column-count:2; column-gap:24pt; text-align:justify'>" + f"<p>{PROSE * 3}</p>" * 6 + "</div>"
    "<div style='column-count:4; column-gap:14pt; font-size:9pt'>" + f"<p>{PROSE * 3}</p>" * 4 + "</div>",
    "<ul>" + "".join(f"<li>{PROSE[:60 + 7 * k]}</li>" for k in range(6)) + "</ul>"
    + "<ol>" + "".join(f"<li>{PROSE[:50 + 9 * k]}</li>" for k in range(5)) + "</ol>",
    "<pre>def total(items):\n    s = 0          # running sum\n    for x in items:  # every item\n"
    "        s += x     # add it\n    return s       # the result\n</pre>"
    "<pre>$ ls -l\n-rw-r--r-- 1 penguin penguin  0 Oct 16 21:39 bar\n"
    "-rw-r--r-- 1 penguin penguin 10 Oct 16 21:35 foo\n-rw-r--r-- 1 penguin penguin 99 Oct 16 21:35 qux\n</pre>",
    "<div style='display:grid; grid-template-columns: 120px 1fr'>"
    + "".join(f"<div>{k}:</div><div>{v}</div>" for k, v in [("Name", "Alice Moreau"), ("Email", "alice@example.org"),
                                                            ("Phone", "+33 4 00 00 00"), ("Office", "B 214")])
    + "</div><p>" + PROSE + "</p>"
    + "".join(f"<div style='display:flex'><span style='width:30px'>{n}</span><span style='flex:1; overflow:hidden;"
              f" white-space:nowrap'>{t} {'. ' * 80}</span><span style='width:30px; text-align:right'>{p}</span></div>"
              for n, t, p in [("1", "Introduction", "1"), ("2", "Installing", "9"), ("3", "Networks", "27"),
                              ("4", "Keeping it safe", "41")]),
]


@pytest.fixture(scope="module")
def chromium_pdf(tmp_path_factory) -> bytes:
    if CHROMIUM is None:
        pytest.skip("chromium is not installed: the Chromium-typeset cases need /usr/bin/chromium")
    folder = tmp_path_factory.mktemp("chromium")
    html = folder / "in.html"
    out = folder / "out.pdf"
    html.write_text("<!doctype html><meta charset=utf-8><style>" + CSS + "</style>"
                    + "".join(f"<div class=page>{p}</div>" for p in PAGES), encoding="utf-8")
    subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    f"--user-data-dir={folder / 'profile'}", f"--print-to-pdf={out}", "--no-pdf-header-footer",
                    html.as_uri()], check=True, capture_output=True, timeout=120)
    return out.read_bytes()


def test_chromium_bordered_table_with_empty_and_wrapped_cells(chromium_pdf):
    tables = tables_in(chromium_pdf, 0)
    assert [(t.ruled, t.rows) for t in tables] == [(True, tuple(CHROME_RULED))]


def test_chromium_borderless_table(chromium_pdf):
    tables = tables_in(chromium_pdf, 1)
    assert [(t.ruled, t.rows) for t in tables] == [(False, tuple(CHROME_PLAIN))]


def test_chromium_two_tables_on_a_page(chromium_pdf):
    tables = tables_in(chromium_pdf, 2)
    assert [(t.ruled, t.rows) for t in tables] == [(True, tuple(CHROME_PLAIN)), (False, (HEADER,) + tuple(PEOPLE))]
    assert tables[0].box[3] < tables[1].box[1]


@pytest.mark.parametrize("page", [3, 4, 5, 6], ids=["two-column prose", "lists", "code", "key-value and contents"])
def test_chromium_layouts_that_are_no_tables(chromium_pdf, page):
    assert tables_in(chromium_pdf, page) == []


# ------------------------------------------------------------------------- the C helper
_PURE_PARSE = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name == "beam_chunking.parsers._pdfwalk":
            raise ImportError(name)
sys.meta_path.insert(0, Block())
from beam_chunking.parsers import pdf_lines, pdf_tables
from beam_chunking.parsers.pdf import parse_pdf
from beam_chunking.types import Document
assert not pdf_tables.NATIVE and pdf_lines._native is None
data = open(sys.argv[1], "rb").read()
parsed = parse_pdf(Document("d", "d.pdf", data, "application/pdf"), ocr="never")
print(repr((parsed.text, parsed.sections, parsed.boxes, parsed.metadata, parsed.dropped)))
"""


def test_without_the_c_helper_the_same_parse(tmp_path):
    # An install without a compiler: _pdfwalk unimportable, the ctypes calls serve, and the
    # lines, tables and boxes are the same.
    from beam_chunking.parsers import pdf_lines, pdf_tables
    from beam_chunking.parsers.pdf import parse_pdf

    if not (pdf_tables.NATIVE and pdf_lines._native is not None):
        pytest.skip("the C helper is not built here, so both sides would run the ctypes calls")
    from beam_chunking.types import Document

    commands = [("command", "description"), ("pwd", "print the working directory"), ("id", "print user ids")]
    code = [("x = 1", "# first value"), ("total = x + 2", "# running total"), ("print(total)", "# shown")]

    def draw(pdf):
        pdf.set_font("Helvetica", style="B", size=16)
        pdf.text(60, 60, "A heading set large")
        pdf.set_font("Helvetica", size=10)
        docbook_style(pdf, 60, 520, 200, 80, commands)
        write_columns(pdf, (60, 200, 320), 160, [HEADER] + PEOPLE)
        write_columns(pdf, (60, 200), 260, code, pitch=12, font=("Courier", 10))
        pdf.set_font("Helvetica", size=10)
        pdf.set_xy(40, 320)
        pdf.multi_cell(470, 13, PROSE * 3)
        pdf.rect(40, 500, 300, 80)  # a frame: a stroked path wider than a rule, walked edge by edge

    data = fpdf_page(draw)
    (tmp_path / "in.pdf").write_bytes(data)
    parsed = parse_pdf(Document("d", "d.pdf", data, "application/pdf"), ocr="never")
    assert "| command | description |" in parsed.text and "| Name | Role | City |" in parsed.text
    run = subprocess.run([sys.executable, "-c", _PURE_PARSE, str(tmp_path / "in.pdf")], capture_output=True,
                         text=True, check=True)
    assert run.stdout.strip() == repr((parsed.text, parsed.sections, parsed.boxes, parsed.metadata, parsed.dropped))


def test_the_c_helper_is_not_older_than_its_source():
    # `pip install -e .` (or `python setup.py build_ext --inplace`) again after editing the C file.
    from beam_chunking.parsers import pdf_tables

    if not pdf_tables.NATIVE:
        pytest.skip("the C helper was not built (no compiler at install)")
    from beam_chunking.parsers import _pdfwalk

    source = os.path.join(os.path.dirname(_pdfwalk.__file__), "_pdfwalk.c")
    if os.path.exists(source):  # an installed wheel carries no sources
        assert os.path.getmtime(_pdfwalk.__file__) >= os.path.getmtime(source)
