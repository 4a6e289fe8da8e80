"""DOCX: paragraphs, lists and tables in document order, with heading styles as headings.

Read with python-docx after the zip container passes the safety checks of
:mod:`beam_chunking.parsers._zipsafe` (size, ratio, member count, no DTD). ``Title`` and
``Heading 1``-``Heading 9`` styles (``Title`` at level 0, above ``Heading 1``) (or a paragraph outline level) start sections with a
``heading_path``; list paragraphs get a ``- `` marker; each table is one section of kind
``table`` rendered as a Markdown pipe table (merged cells once). Headers, footers, comments
and footnotes are not body text and are left out. Word documents have no fixed pages, so
``page`` is absent.
"""
from __future__ import annotations

import io
import re
from typing import Dict, FrozenSet, List, Optional

from beam_chunking.errors import ParseError
from beam_chunking.parsers._build import EMPTY_TABLE, HeadingSections, collapse, empty_table, markdown_table
from beam_chunking.parsers._optional import require
from beam_chunking.parsers._zipsafe import open_container
from beam_chunking.parsers.drops import KEEP_NOTHING
from beam_chunking.parsers.limits import DEFAULT_LIMITS, ParseLimits, check_time
from beam_chunking.types import Document, ParsedDocument

_HEADING_STYLE = re.compile(r"^heading ([1-9])$", re.I)
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


class _StyleNames:
    """Paragraph style id -> lower-case style name, read once per document.

    python-docx looks a paragraph's style up with an XPath query over every style, so a
    file with thousands of styles took minutes (5,000 styles: 146 s); this reads the
    styles part once and resolves as python-docx does: an unknown id, or one naming a style
    of another type, means the document's default paragraph style.
    """

    def __init__(self, document):
        self.names: Dict[str, Optional[str]] = {}
        self.default = ""
        for style in document.styles.element.iterchildren(f"{_W}style"):
            is_paragraph = (style.get(f"{_W}type") or "paragraph") == "paragraph"
            name_el = style.find(f"{_W}name")
            name = (name_el.get(f"{_W}val") or "").lower() if name_el is not None else ""
            style_id = style.get(f"{_W}styleId")
            if style_id is not None and style_id not in self.names:
                self.names[style_id] = name if is_paragraph else None
            if is_paragraph and style.get(f"{_W}default") in ("1", "true", "on"):
                self.default = name  # the last default in document order, as the spec says

    def of(self, paragraph) -> str:
        """The lower-case name of ``paragraph``'s style ("" when it has none)."""
        style_id = paragraph._p.style
        name = self.names.get(style_id) if style_id is not None else None
        return self.default if name is None else name


def _heading_level(paragraph, name: str) -> Optional[int]:
    if name == "title":
        return 0  # the root of the path: Heading 1 sections sit under the title
    m = _HEADING_STYLE.match(name)
    if m:
        return int(m.group(1))
    ppr = paragraph._p.pPr
    outline = ppr.find("{http://schemas.openxmlformats.org/wordprocessingml/2006/main}outlineLvl") if ppr is not None else None
    if outline is not None:
        value = outline.get("{http://schemas.openxmlformats.org/wordprocessingml/2006/main}val")
        if value is not None and value.isdigit() and int(value) < 9:
            return int(value) + 1
    return None


def _is_list_item(paragraph, name: str) -> bool:
    ppr = paragraph._p.pPr
    if ppr is not None and ppr.numPr is not None:
        return True
    return name.startswith("list")


def _table_rows(table) -> List[List[str]]:
    rows = []
    for row in table.rows:
        seen, cells = set(), []
        for cell in row.cells:
            if id(cell._tc) in seen:  # a merged cell is repeated once per grid column
                continue
            seen.add(id(cell._tc))
            cells.append(collapse(cell.text))
        rows.append(cells)
    return rows


def parse_docx(doc: Document, *, errors: str = "strict", limits: ParseLimits = DEFAULT_LIMITS,
               keep: FrozenSet[str] = KEEP_NOTHING) -> ParsedDocument:
    """Parse a Word document into heading sections (see the module docstring).

    Args:
        doc: The raw document.
        errors: Unused (DOCX text is Unicode XML); accepted for a uniform signature.
        limits: Zip container caps.
        keep: Unused (nothing is dropped from this format); accepted for a uniform signature.
    """
    docx = require("docx", "python-docx")
    archive = open_container(doc, limits, ["word/document.xml"], "DOCX")
    archive.close()
    try:
        document = docx.Document(io.BytesIO(doc.data))
    except Exception as exc:
        raise ParseError(f"DOCX: python-docx cannot read it ({type(exc).__name__}: {exc})",
                         document_id=doc.id, uri=doc.uri) from None
    out = HeadingSections(max_chars=limits.max_text_chars)
    styles = _StyleNames(document)
    for number, block in enumerate(document.iter_inner_content(), start=1):
        check_time(f"block {number}")
        if hasattr(block, "rows"):
            rows = _table_rows(block)
            if empty_table(rows):
                out.builder.drop(EMPTY_TABLE, markdown_table(rows))
            else:
                out.unit(markdown_table(rows), "table")
            continue
        text = collapse(block.text)
        if not text:
            continue
        name = styles.of(block)
        level = _heading_level(block, name)
        if level is not None:
            out.heading(level, " ".join(text.split()))
        else:
            out.paragraph(("- " + text) if _is_list_item(block, name) else text)
    title = (document.core_properties.title or "").strip()
    return out.builder.build(doc, {"title": title} if title else {})

