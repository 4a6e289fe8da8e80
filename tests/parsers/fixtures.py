"""Documents written in the tests with each format's own writer library, and hostile files.

Nothing here is a stored binary: every fixture is generated, so what it contains is visible.
"""
from __future__ import annotations

import io
import zipfile
from email.message import EmailMessage
from typing import List, Optional, Sequence, Tuple

from beam_chunking.parsers.detect import detect_content_type
from beam_chunking.types import Document


def document(name: str, data: bytes) -> Document:
    """A Document typed the way the pipeline types it (extension plus magic bytes)."""
    return Document("doc", name, data, detect_content_type(name, data))


def pdf_bytes(pages: Sequence[str], *, sections: Optional[Sequence[Tuple[int, int, str]]] = None,
              header: Optional[str] = None, password: Optional[str] = None) -> bytes:
    """A PDF with one page per entry (lines split on ``\\n``), written by fpdf2.

    Args:
        pages: Text of each page.
        sections: ``(page_index, level, title)`` bookmarks; the title is written as the
            first line of that page's text position.
        header: A running header written at the top of every page (``{n}`` = page number).
        password: Encrypt with this user password.
    """
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    marks = {}
    for index, level, title in sections or ():
        marks.setdefault(index, []).append((level, title))
    for index, text in enumerate(pages):
        pdf.add_page()
        if header:
            pdf.cell(0, 8, header.format(n=index + 1), new_x="LMARGIN", new_y="NEXT")
        for level, title in marks.get(index, ()):
            pdf.start_section(title, level=level)
            pdf.cell(0, 8, title, new_x="LMARGIN", new_y="NEXT")
        for line in text.split("\n"):
            pdf.multi_cell(0, 6, line, new_x="LMARGIN", new_y="NEXT")
    if password:
        pdf.set_encryption(owner_password="owner-" + password, user_password=password)
    return bytes(pdf.output())


def docx_bytes(blocks: List[tuple]) -> bytes:
    """A DOCX from ``("heading", level, text)``, ``("p", text)``, ``("li", text)``, ``("table", rows)``."""
    import docx

    d = docx.Document()
    for block in blocks:
        if block[0] == "heading":
            d.add_heading(block[2], block[1])
        elif block[0] == "p":
            d.add_paragraph(block[1])
        elif block[0] == "li":
            d.add_paragraph(block[1], style="List Bullet")
        elif block[0] == "table":
            rows = block[1]
            table = d.add_table(rows=len(rows), cols=len(rows[0]))
            for r, row in enumerate(rows):
                for c, value in enumerate(row):
                    table.cell(r, c).text = value
    out = io.BytesIO()
    d.save(out)
    return out.getvalue()


def pptx_bytes(slides: List[dict]) -> bytes:
    """A PPTX from ``{"title", "body", "notes", "table"}`` dicts (all optional)."""
    import pptx
    from pptx.util import Inches

    deck = pptx.Presentation()
    for spec in slides:
        slide = deck.slides.add_slide(deck.slide_layouts[1 if spec.get("body") else 5])
        if spec.get("title"):
            slide.shapes.title.text = spec["title"]
        if spec.get("body"):
            slide.placeholders[1].text = spec["body"]
        if spec.get("table"):
            rows = spec["table"]
            table = slide.shapes.add_table(len(rows), len(rows[0]), Inches(1), Inches(4), Inches(6), Inches(1)).table
            for r, row in enumerate(rows):
                for c, value in enumerate(row):
                    table.cell(r, c).text = value
        if spec.get("notes"):
            slide.notes_slide.notes_text_frame.text = spec["notes"]
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def xlsx_bytes(sheets: dict) -> bytes:
    """An XLSX from ``{sheet name: [rows]}`` written by openpyxl."""
    import openpyxl

    book = openpyxl.Workbook()
    book.remove(book.active)
    for name, rows in sheets.items():
        sheet = book.create_sheet(name)
        for row in rows:
            sheet.append(list(row))
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def eml_bytes(*, subject: str = "Quarterly report", body: str = "Hello team,\nnumbers attached.",
              html: Optional[str] = None, attachments: Sequence[Tuple[str, bytes, str]] = (),
              charset: str = "utf-8") -> bytes:
    """An RFC 5322 message written by the stdlib ``email`` package."""
    msg = EmailMessage()
    msg["From"] = "Zoë Ångström <zoe@example.org>"
    msg["To"] = "team@example.org"
    msg["Subject"] = subject
    msg["Date"] = "Mon, 30 Nov 2026 10:00:00 +0000"
    if body is not None:
        msg.set_content(body, charset=charset)
    if html is not None:
        if body is None:
            msg.set_content(html, subtype="html")
        else:
            msg.add_alternative(html, subtype="html")
    for name, data, ctype in attachments:
        maintype, subtype = ctype.split("/")
        if ctype == "message/rfc822":
            import email
            import email.policy

            msg.add_attachment(email.message_from_bytes(data, policy=email.policy.default), filename=name)
        else:
            msg.add_attachment(data, maintype=maintype, subtype=subtype, filename=name)
    return msg.as_bytes()


def rezip(data: bytes, replace: dict) -> bytes:
    """Copy a zip container, replacing (or adding) members by name."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            if item.filename not in replace:
                dst.writestr(item, src.read(item.filename))
        for name, content in replace.items():
            dst.writestr(name, content)
    return out.getvalue()


def zip_bomb(container: bytes, member: str = "xl/worksheets/sheet9.xml", size: int = 64 * 1024 * 1024) -> bytes:
    """A valid Office container plus one member of ``size`` zero bytes (ratio ~1000:1)."""
    return rezip(container, {member: b"\0" * size})


XXE = (b'<?xml version="1.0"?>\n<!DOCTYPE w [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n'
       b'<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
       b'<w:body><w:p><w:r><w:t>&xxe;</w:t></w:r></w:p></w:body></w:document>')

BILLION_LAUGHS = (b'<?xml version="1.0"?>\n<!DOCTYPE lolz [<!ENTITY lol "lol">'
                  + b"".join(b'<!ENTITY lol%d "%s">' % (i, (b"&lol%d;" % (i - 1) if i > 1 else b"&lol;") * 10)
                             for i in range(1, 10))
                  + b']>\n<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">&lol9;</workbook>')


def check_sections(parsed) -> None:
    """Sections are ordered, disjoint spans of the text and cover every non-space character."""
    text = parsed.text
    last = 0
    for s in parsed.sections:
        assert last <= s.start < s.end <= len(text), (last, s)
        assert text[last:s.start].strip() == "", f"text between sections is lost: {text[last:s.start]!r}"
        assert text[s.start:s.end].strip()
        last = s.end
    assert text[last:].strip() == ""


def section_texts(parsed) -> List[str]:
    """The text of each section."""
    return [parsed.text[s.start:s.end] for s in parsed.sections]


def realdocs_dir():
    """``../shared/realdocs/debian-reference`` beside the checkout (or ``$BEAM_CHUNKING_REALDOCS``),
    or ``None`` when absent (a user's own checkout)."""
    import os
    from pathlib import Path

    root = os.environ.get("BEAM_CHUNKING_REALDOCS") or Path(__file__).resolve().parents[2].parent / "shared" / "realdocs"
    path = Path(root) / "debian-reference"
    return path if (path / "debian-reference.en.pdf").is_file() else None


# Hostile documents (issue 16): small files within every size cap that cost a parser far more
# than their size. Each generator is sized by its arguments; the tests use small ones and
# bench/hostile.py the sizes.

def shared_stream_pdf(pages: int = 400, lines: int = 4000,
                      line: str = "the same words on every page of this file ") -> bytes:
    """A PDF whose ``pages`` pages all draw one compressed content stream of ``lines`` lines.

    The stream writes every line at a spot inside the page, so each page gives about
    ``lines * len(line)`` characters of text while the file stays small (4,000 lines: 65 KB
    for 400 pages of 176,000 characters each). Written by hand: no PDF library shares one
    stream between pages.
    """
    import zlib

    body = b"BT /F1 4 Tf " + b"".join(b"1 0 0 1 20 %d Tm (%s) Tj " % (20 + (k % 200) * 4, line.encode())
                                      for k in range(lines)) + b"ET"
    stream = zlib.compress(body, 9)
    objects = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: (b"<< /Type /Pages /Kids [" + b" ".join(b"%d 0 R" % (10 + k) for k in range(pages))
            + b"] /Count %d >>" % pages),
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        4: b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
    }
    for k in range(pages):
        objects[10 + k] = (b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] "
                           b"/Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>")
    out = io.BytesIO()
    out.write(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = {}
    for number in sorted(objects):
        offsets[number] = out.tell()
        out.write(b"%d 0 obj\n" % number + objects[number] + b"\nendobj\n")
    xref, size = out.tell(), max(objects) + 1
    out.write(b"xref\n0 %d\n" % size)
    for number in range(size):
        out.write(b"%010d 00000 n \n" % offsets[number] if number in offsets else b"0000000000 65535 f \n")
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (size, xref))
    return out.getvalue()


def shared_string_xlsx(rows: int = 40_000, string_chars: int = 32_000) -> bytes:
    """An XLSX whose ``rows`` data rows all reference one shared string of ``string_chars``
    characters (40,000 rows: about 207 KB, 1.3 billion characters of cell text).

    Written by hand (openpyxl writes each cell's own string): the sheet's cells point at
    entry 1 of ``sharedStrings.xml``.
    """
    main = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    pkg = "http://schemas.openxmlformats.org/package/2006/relationships"
    long = ("lorem ipsum " * (string_chars // 12 + 1))[:string_chars]
    sheet = io.StringIO()
    sheet.write(f'<?xml version="1.0" encoding="UTF-8"?><worksheet {main}><sheetData>'
                '<row r="1"><c r="A1" t="s"><v>0</v></c></row>')
    for r in range(2, rows + 2):
        sheet.write(f'<row r="{r}"><c r="A{r}" t="s"><v>1</v></c></row>')
    sheet.write("</sheetData></worksheet>")
    parts = {
        "[Content_Types].xml": (
            '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
            'content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
            'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/'
            'workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
            '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-'
            'officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/sharedStrings.xml" ContentType='
            '"application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>'),
        "_rels/.rels": (f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="{pkg}"><Relationship Id="rId1" '
                        f'Type="{rel}/officeDocument" Target="xl/workbook.xml"/></Relationships>'),
        "xl/workbook.xml": (f'<?xml version="1.0" encoding="UTF-8"?><workbook {main} xmlns:r="{rel}"><sheets>'
                            '<sheet name="data" sheetId="1" r:id="rId1"/></sheets></workbook>'),
        "xl/_rels/workbook.xml.rels": (
            f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="{pkg}"><Relationship Id="rId1" '
            f'Type="{rel}/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" '
            f'Type="{rel}/sharedStrings" Target="sharedStrings.xml"/></Relationships>'),
        "xl/sharedStrings.xml": (f'<?xml version="1.0" encoding="UTF-8"?><sst {main} count="2" uniqueCount="2">'
                                 f'<si><t>text</t></si><si><t>{long}</t></si></sst>'),
        "xl/worksheets/sheet1.xml": sheet.getvalue(),
    }
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in parts.items():
            z.writestr(name, text)
    return out.getvalue()


def wide_csv(columns: int, rows: int = 3) -> bytes:
    """A CSV of ``columns`` columns (``c0`` ...) and ``rows`` rows of ``v`` (1M columns: 9.9 MB)."""
    header = ",".join(f"c{k}" for k in range(columns))
    row = ",".join(["v"] * columns)
    return (header + "\n" + "\n".join([row] * rows) + "\n").encode()


def many_styles_docx(styles: int = 5_000, paragraphs: int = 5_000) -> bytes:
    """A DOCX with ``styles`` custom paragraph styles, each of ``paragraphs`` paragraphs using
    one of them (5,000 and 5,000: about 95 KB). python-docx finds a paragraph's style by
    scanning every style."""
    import docx

    w = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    base = io.BytesIO()
    docx.Document().save(base)
    src = zipfile.ZipFile(io.BytesIO(base.getvalue()))
    added = "".join(f'<w:style w:type="paragraph" w:customStyle="1" w:styleId="S{k}"><w:name w:val="Custom {k}"/>'
                    '<w:basedOn w:val="Normal"/></w:style>' for k in range(styles))
    style_xml = src.read("word/styles.xml").decode().replace("</w:styles>", added + "</w:styles>")
    body = "".join(f'<w:p><w:pPr><w:pStyle w:val="S{k % styles}"/></w:pPr><w:r><w:t>paragraph {k} of many</w:t>'
                   "</w:r></w:p>" for k in range(paragraphs))
    doc_xml = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="{w}"><w:body>{body}'
               "<w:sectPr/></w:body></w:document>")
    return rezip(base.getvalue(), {"word/styles.xml": style_xml.encode(), "word/document.xml": doc_xml.encode()})


def nested_lists_html(depth: int) -> bytes:
    """``depth`` nested ``<ul><li>`` (100,000: 2.2 MB)."""
    return ("<html><body>" + "<ul><li>item" * depth + "</li></ul>" * depth + "</body></html>").encode()


def no_whitespace_text(chars: int, seed: int = 7) -> bytes:
    """``chars`` characters of A, C, G and T without a single space or newline (a genome)."""
    import random

    block = "".join(random.Random(seed).choices("ACGT", k=min(chars, 1 << 20)))
    return (block * (chars // len(block) + 1))[:chars].encode()



def big_table_docx(rows: int, columns: int = 20, seed: int = 3) -> bytes:
    """A DOCX of one table of ``rows`` rows of ``columns`` one-word cells (3,000 rows: 0.33 MB).

    python-docx reads a table's cells in one call, which the time budget cannot interrupt:
    3,000 rows of 20 cells take about 1.7 s on one core, growing with the rows.
    """
    import docx
    import random

    rng = random.Random(seed)
    # Random words keep the deflate ratio near 10, under the zip-bomb cap.
    words = ["".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=rng.randint(2, 9))) for _ in range(5000)]
    w = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    cells = lambda: "".join(f"<w:tc><w:p><w:r><w:t>{rng.choice(words)}</w:t></w:r></w:p></w:tc>" for _ in range(columns))
    table = ("<w:tbl><w:tblGrid>" + "<w:gridCol/>" * columns + "</w:tblGrid>"
             + "".join(f"<w:tr>{cells()}</w:tr>" for _ in range(rows)) + "</w:tbl>")
    xml = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="{w}"><w:body>'
           f"{table}<w:sectPr/></w:body></w:document>")
    base = io.BytesIO()
    docx.Document().save(base)
    return rezip(base.getvalue(), {"word/document.xml": xml.encode()})
