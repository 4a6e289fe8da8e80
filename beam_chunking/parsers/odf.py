"""OpenDocument text, spreadsheets and presentations (ODT, ODS, ODP), as DOCX, XLSX and PPTX are.

The zip passes the checks of :mod:`beam_chunking.parsers._zipsafe` (size, ratios, member
count, no DTD in any member), then ``content.xml`` is read with lxml, with DTD loading,
entity resolution and network access off; which reader runs is decided
by what the body holds (``office:text``, ``office:spreadsheet``, ``office:presentation``),
so a misnamed file is still read as what it is. ``meta.xml``'s ``dc:title`` is ``title``
metadata.

- **Text** (ODT): ``text:h`` headings start sections, their ``text:outline-level`` giving
  the ``heading_path``; paragraphs extend them; list items get a ``- `` marker; each table
  is one section of kind ``table``, a Markdown pipe table. Tables of contents and indexes
  are dropped and recorded (``"table of contents"``, ``"index"``) unless
  ``keep={"contents"}``; footnotes, comments and deleted tracked changes are left out.
- **Spreadsheet** (ODS): each sheet as the XLSX parser reads one
  (:mod:`beam_chunking.parsers.tabular`): a ``header`` section, then one ``row`` section
  per row with ``sheet``, ``row`` and ``columns`` metadata; numbers and dates as values.
- **Presentation** (ODP): one ``slide`` section per ``draw:page`` (``slide`` 1-based, the
  title frame as heading, other frames top to bottom then left to right, tables as pipe
  tables), speaker notes as a ``notes`` section with ``speaker_notes=True``, as for PPTX.

lxml, not odfpy nor defusedxml: on a 13 MB ``content.xml`` (an ODS of 20,000 rows of ten
cells), odfpy's ``load`` took 30.6 s (its own DOM of every part, built through SAX in
Python), defusedxml 5.3 s (it plugs a pure-Python parser into ElementTree), the standard
library's C ElementTree 2.2 s and lxml 0.29 s, best of three on a busy two-core machine.
lxml is already installed with python-docx and python-pptx; what defusedxml would add
(refusing entity declarations) is done before, by the zip checks, for every member.
"""
from __future__ import annotations

import re
import zipfile
from typing import Dict, FrozenSet, List, Tuple

from beam_chunking.errors import ParseError
from beam_chunking.parsers._build import HeadingSections, TextBuilder, collapse, markdown_table
from beam_chunking.parsers._optional import require
from beam_chunking.parsers._zipsafe import open_container
from beam_chunking.parsers.drops import KEEP_NOTHING
from beam_chunking.parsers.limits import DEFAULT_LIMITS, ParseLimits, check_time, exceeded
from beam_chunking.parsers.odf_xml import (DRAW, OFFICE, PRESENTATION, SVG, TABLE, TEXT, count, display_value,
                                           inline_text, table_rows, typed_value)
from beam_chunking.parsers.tabular import add_rows
from beam_chunking.types import Document, ParsedDocument

_DC = "{http://purl.org/dc/elements/1.1/}"
# Generated listings: their entries repeat the headings (or the index terms) of the body.
_LISTINGS = {f"{TEXT}{name}": "table of contents" for name in (
    "table-of-content", "illustration-index", "table-index", "object-index", "user-index", "bibliography")}
_LISTINGS[f"{TEXT}alphabetical-index"] = "index"
_SKIPPED = frozenset({f"{TEXT}tracked-changes", f"{TEXT}sequence-decls", f"{TEXT}variable-decls",
                      f"{TEXT}user-field-decls", f"{OFFICE}forms", f"{OFFICE}annotation", f"{TABLE}table-columns",
                      f"{TABLE}table-column", f"{SVG}title", f"{SVG}desc"})
_FURNITURE = frozenset({"header", "footer", "date-time", "page-number"})
_LENGTH = re.compile(r"^\s*(-?[0-9.]+)\s*(cm|mm|in|pt|pc|px)?")
_CM = {"cm": 1.0, "mm": 0.1, "in": 2.54, "pt": 2.54 / 72, "pc": 2.54 / 6, "px": 2.54 / 96, None: 1.0}


class _Lines:
    """A sink with :class:`HeadingSections`' methods that keeps lines (a slide's frame)."""

    def __init__(self) -> None:
        self.lines: List[str] = []

    def heading(self, level: int, text: str) -> None:
        self.lines.append(text)

    def paragraph(self, text: str) -> None:
        self.lines.append(text)

    def unit(self, text: str, kind: str) -> None:
        self.lines.append(text)


def _table(table, limits: ParseLimits) -> str:
    rows = [list(values) for _, values in table_rows(table, display_value, limits, "a table")]
    return markdown_table(rows) if rows else ""


def _walk(container, sink, limits: ParseLimits, keep: FrozenSet[str], drop) -> None:
    """Headings, paragraphs, list items and tables under ``container``, in order, into ``sink``."""
    stack: List[Tuple[object, bool]] = [(child, False) for child in reversed(container)]
    bullet = ""  # the marker the next paragraph takes: the first one of a list item
    seen = 0
    while stack:
        node, in_list = stack.pop()
        seen += 1
        if not seen % 4096:
            check_time(f"element {seen}")
        tag = node.tag
        if tag == f"{TEXT}h":
            text = collapse(inline_text(node))
            if text:
                sink.heading(min(count(node.get(f"{TEXT}outline-level")), 10), " ".join(text.split()))
                bullet = ""
        elif tag == f"{TEXT}p":
            text = collapse(inline_text(node))
            if text:
                sink.paragraph(bullet + text if in_list else text)
                bullet = ""
        elif tag == f"{TABLE}table":
            text = _table(node, limits)
            if text:
                sink.unit(text, "table")
        elif tag in _LISTINGS and "contents" not in keep:
            drop(_LISTINGS[tag], inline_text(node))
        elif tag in _SKIPPED:
            continue
        else:
            if tag in (f"{TEXT}list-item", f"{TEXT}list-header"):
                bullet = "- " if tag == f"{TEXT}list-item" else ""
            inside = in_list or tag == f"{TEXT}list"
            stack.extend((child, inside) for child in reversed(node))


def _text(body, doc: Document, limits: ParseLimits, keep: FrozenSet[str]) -> Tuple[TextBuilder, Dict]:
    out = HeadingSections(max_chars=limits.max_text_chars)
    _walk(body, out, limits, keep, out.builder.drop)
    return out.builder, {}


def _spreadsheet(body, doc: Document, limits: ParseLimits, keep: FrozenSet[str]) -> Tuple[TextBuilder, Dict]:
    builder = TextBuilder(max_chars=limits.max_text_chars)
    sheets = body.findall(f"{TABLE}table")
    counted = [0]
    for k, sheet in enumerate(sheets, start=1):
        name = sheet.get(f"{TABLE}name") or f"Sheet{k}"
        add_rows(builder, table_rows(sheet, typed_value, limits, f"sheet {name}"), name, doc, limits, counted)
    return builder, {"sheets": len(sheets)}


def _position(shape) -> Tuple[float, float]:
    def cm(value) -> float:
        m = _LENGTH.match(value or "")
        try:
            return float(m.group(1)) * _CM[m.group(2)] if m else 0.0
        except ValueError:
            return 0.0
    return cm(shape.get(f"{SVG}y")), cm(shape.get(f"{SVG}x"))


def _shapes(page) -> List:
    """The page's text-bearing shapes (groups entered; notes and furniture left out)."""
    found, stack = [], list(reversed(page))
    while stack:
        shape = stack.pop()
        if shape.tag == f"{DRAW}g":
            stack.extend(reversed(shape))
        elif shape.tag != f"{PRESENTATION}notes" and shape.get(f"{PRESENTATION}class") not in _FURNITURE:
            found.append(shape)
    return found


def _shape_text(shape, limits: ParseLimits) -> str:
    lines = _Lines()
    _walk([shape], lines, limits, KEEP_NOTHING, lambda label, text: None)
    return "\n".join(lines.lines)


def _presentation(body, doc: Document, limits: ParseLimits, keep: FrozenSet[str]) -> Tuple[TextBuilder, Dict]:
    pages = body.findall(f"{DRAW}page")
    if len(pages) > limits.max_pages:
        raise ParseError(f"ODP: {len(pages)} slides exceed max_pages={limits.max_pages}; raise the limit to parse it",
                         document_id=doc.id, uri=doc.uri)
    builder = TextBuilder(max_chars=limits.max_text_chars)
    for number, page in enumerate(pages, start=1):
        check_time(f"slide {number} of {len(pages)}")
        title, body_texts = "", []
        for shape in sorted(_shapes(page), key=_position):
            text = _shape_text(shape, limits)
            if shape.get(f"{PRESENTATION}class") == "title" and not title and text:
                title = " ".join(text.split())
            elif text:
                body_texts.append(text)
        path = (title,) if title else ()
        text = "\n\n".join([title] + body_texts if title else body_texts)
        if len(text) > limits.max_page_chars:
            raise exceeded(limits, "max_page_chars", f"ODP: slide {number} has {len(text)} characters")
        builder.add(text, heading_path=path, level=1 if title else 0, kind="slide", metadata={"slide": number})
        notes = page.find(f"{PRESENTATION}notes")
        if notes is not None:
            text = "\n".join(_shape_text(s, limits) for s in _shapes(notes) if s.get(f"{PRESENTATION}class") == "notes")
            builder.add(text, heading_path=path, level=1 if title else 0, kind="notes",
                        metadata={"slide": number, "speaker_notes": True})
    return builder, {"slides": len(pages)}


_READERS = {f"{OFFICE}text": _text, f"{OFFICE}spreadsheet": _spreadsheet, f"{OFFICE}presentation": _presentation}


def _xml(etree, archive: zipfile.ZipFile, name: str, fail):
    # No DTD is loaded, no entity resolved, nothing fetched; comments are not text. libxml2's
    # default guards stay on: elements nested over 256 deep (real files nest a few dozen).
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, remove_comments=True,
                             remove_pis=True)
    try:
        return etree.fromstring(archive.read(name), parser)
    except (etree.XMLSyntaxError, ValueError) as exc:
        raise fail(f"{name} cannot be read as XML ({exc})") from None
    except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, RuntimeError) as exc:
        raise fail(f"member {name} cannot be read ({exc})") from None


def parse_odf(doc: Document, *, errors: str = "strict", limits: ParseLimits = DEFAULT_LIMITS,
              keep: FrozenSet[str] = KEEP_NOTHING) -> ParsedDocument:
    """Parse an OpenDocument text, spreadsheet or presentation (see the module docstring).

    Args:
        doc: The raw document.
        errors: Unused (OpenDocument text is Unicode XML); accepted for a uniform signature.
        limits: Zip container caps; ``max_rows`` (default 1,000,000), ``max_columns``
            (default 16,384) and ``max_row_chars`` for sheets and tables; ``max_pages``
            (slides, default 5,000) and ``max_page_chars`` (one slide, default 1,000,000).
        keep: Names of :data:`~beam_chunking.parsers.drops.DROPS` kept instead of dropped
            (``contents``: tables of contents and indexes). Default none.

    Raises:
        ParseError: not a zip, no ``content.xml``, malformed XML, a body of another kind
            (a drawing, a formula), or a cap exceeded.
    """
    etree = require("lxml.etree", "lxml")
    archive = open_container(doc, limits, ["content.xml"], "OpenDocument")

    def fail(message: str) -> ParseError:
        return ParseError(f"OpenDocument: {message}", document_id=doc.id, uri=doc.uri)

    try:
        content = _xml(etree, archive, "content.xml", fail)
        meta = _xml(etree, archive, "meta.xml", fail) if "meta.xml" in archive.namelist() else None
    finally:
        archive.close()
    body = content.find(f"{OFFICE}body")
    kinds = list(body) if body is not None else []
    element = next((child for child in kinds if child.tag in _READERS), None)
    if element is None:
        found = ", ".join(child.tag.rsplit("}", 1)[-1] for child in kinds) or "nothing"
        raise fail(f"content.xml's body holds {found}, not text, a spreadsheet or a presentation; no reader for it")
    builder, extra = _READERS[element.tag](element, doc, limits, keep)
    title_element = meta.find(f"{OFFICE}meta/{_DC}title") if meta is not None else None
    title = collapse("".join(title_element.itertext())) if title_element is not None else ""
    return builder.build(doc, dict(extra, title=title) if title else extra)
