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
