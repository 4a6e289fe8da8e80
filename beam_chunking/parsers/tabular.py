"""CSV, TSV and XLSX: one section per data row, readable on its own.

The first non-empty row of a sheet is its header, kept as a section of kind ``header``
(``name | age``). Every following non-empty row becomes a section of kind ``row`` whose text is one ``column: value`` line per non-empty cell, so a
chunk of a single row still says what each value means; the section metadata carries
``row`` (the 1-based row number in the file or sheet, the header being row 1 when it comes
first), ``sheet`` (the worksheet name; for CSV/TSV the file name) and
``columns`` (the header names). Cells without a header name are called ``column N``.

XLSX is streamed with openpyxl's read-only mode (cached values of formulas, not formulas)
after the zip container passes the checks of :mod:`beam_chunking.parsers._zipsafe`.
``limits.max_rows`` caps the data rows over all sheets, ``limits.max_columns`` the cells of a
row and ``limits.max_row_chars`` the text of one row (header row included).
"""
from __future__ import annotations

import csv
import io
import sys
from datetime import date, datetime, time
from typing import Any, FrozenSet, Iterable, List, Optional, Sequence, Tuple

from beam_chunking.errors import ParseError
from beam_chunking.parsers._build import TextBuilder, clean
from beam_chunking.parsers._optional import require
from beam_chunking.parsers._zipsafe import open_container
from beam_chunking.parsers.decode import decode
from beam_chunking.parsers.drops import KEEP_NOTHING
from beam_chunking.parsers.limits import DEFAULT_LIMITS, ParseLimits, check_time, exceeded
from beam_chunking.types import Document, ParsedDocument

# A single field may be as large as the document itself (csv's default cap is 128 KiB).
csv.field_size_limit(min(sys.maxsize, 2**31 - 1))


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    return " ".join(clean(str(value)).split())


def add_rows(builder: TextBuilder, rows: Iterable[Tuple[int, Sequence[Any]]], sheet: Optional[str],
             doc: Document, limits: ParseLimits, counted: List[int]) -> None:
    """Add a sheet's ``(row number, values)`` to ``builder``: the header row, then one
    ``column: value`` section per row (the spreadsheet parsers share it).

    ``counted`` holds the data rows added so far across sheets, checked against
    ``limits.max_rows``; ``max_columns`` and ``max_row_chars`` are checked per row.
    """
    columns: Optional[Tuple[str, ...]] = None
    where = f"sheet {sheet}" if sheet is not None else "the file"
    for number, values in rows:
        if len(values) > limits.max_columns:
            raise exceeded(limits, "max_columns", f"row {number} of {where} has {len(values)} columns")
        check_time(f"row {number} of {where}")
        cells = [_cell(v) for v in values]
        size = sum(map(len, cells))
        if size > limits.max_row_chars:
            raise exceeded(limits, "max_row_chars", f"row {number} of {where} has {size} characters")
        if not any(cells):
            continue
        if columns is None:
            columns = tuple(c or f"column {k + 1}" for k, c in enumerate(cells))
            header = {"row": number, "columns": columns}
            if sheet is not None:
                header["sheet"] = sheet
            # The header row is text too (never lost); templates such as qa_pairs skip it.
            builder.add(" | ".join(c for c in cells if c) or " ", kind="header", metadata=header)
            continue
        counted[0] += 1
        if counted[0] > limits.max_rows:
            raise ParseError(f"more than max_rows={limits.max_rows} data rows; raise the limit to parse it",
                             document_id=doc.id, uri=doc.uri)
        names = columns
        if len(cells) > len(columns):  # a ragged row: name the extra cells by position
            names = columns + tuple(f"column {k + 1}" for k in range(len(columns), len(cells)))
        text = "\n".join(f"{names[k]}: {c}" for k, c in enumerate(cells) if c)
        # one shared tuple per sheet: a million rows must not mean a million header lists
        meta = {"row": number, "columns": names}
        if sheet is not None:
            meta["sheet"] = sheet
        builder.add(text, kind="row", metadata=meta)


def parse_delimited(doc: Document, *, errors: str = "strict", limits: ParseLimits = DEFAULT_LIMITS,
                    keep: FrozenSet[str] = KEEP_NOTHING) -> ParsedDocument:
    """Parse CSV (comma) or TSV (tab, when the content type says so) into row sections.

    Args:
        doc: The raw document.
        errors: Decoding policy, ``"strict"`` or ``"replace"``.
        limits: ``max_rows`` caps the data rows (default 1,000,000), ``max_columns`` the
            cells of a row (default 16,384), ``max_row_chars`` a row's text (default 10,000,000).
        keep: Unused (nothing is dropped from this format); accepted for a uniform signature.
    """
    decoded = decode(doc.data, uri=doc.uri, document_id=doc.id, errors=errors)
    text = decoded.text
    delimiter = "\t" if doc.content_type == "text/tab-separated-values" else ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    builder = TextBuilder(max_chars=limits.max_text_chars)
    sheet = doc.uri.rsplit("#", 1)[-1].rsplit("/", 1)[-1]
    sheet = sheet[:-3] if sheet.lower().endswith(".gz") else sheet
    try:
        add_rows(builder, enumerate(reader, start=1), sheet, doc, limits, [0])
    except csv.Error as exc:
        raise ParseError(f"malformed {'TSV' if delimiter == chr(9) else 'CSV'} near line {reader.line_num}: {exc}",
                         document_id=doc.id, uri=doc.uri) from None
    return builder.build(doc, decoded.metadata())


def parse_xlsx(doc: Document, *, errors: str = "strict", limits: ParseLimits = DEFAULT_LIMITS,
               keep: FrozenSet[str] = KEEP_NOTHING) -> ParsedDocument:
    """Parse every worksheet of an XLSX workbook into row sections, streaming.

    Args:
        doc: The raw document.
        errors: Unused (XLSX text is Unicode XML); accepted for a uniform signature.
        limits: Zip container caps, ``max_rows`` (default 1,000,000), ``max_columns``
            (default 16,384) and ``max_row_chars`` (default 10,000,000).
        keep: Unused (nothing is dropped from this format); accepted for a uniform signature.
    """
    openpyxl = require("openpyxl", "openpyxl")
    open_container(doc, limits, ["xl/workbook.xml"], "XLSX").close()
    builder = TextBuilder(max_chars=limits.max_text_chars)
    counted = [0]
    try:
        book = openpyxl.load_workbook(io.BytesIO(doc.data), read_only=True, data_only=True)
    except Exception as exc:
        raise ParseError(f"XLSX: openpyxl cannot read it ({type(exc).__name__}: {exc})",
                         document_id=doc.id, uri=doc.uri) from None
    try:
        for sheet in book.worksheets:
            if not hasattr(sheet, "iter_rows"):
                continue  # chart sheets hold no cells
            rows = ((next((c.row for c in r if getattr(c, "row", None)), 0), [c.value for c in r])
                    for r in sheet.iter_rows())
            add_rows(builder, rows, sheet.title, doc, limits, counted)
    except ParseError:
        raise
    except Exception as exc:
        raise ParseError(f"XLSX: a worksheet cannot be read ({type(exc).__name__}: {exc})",
                         document_id=doc.id, uri=doc.uri) from None
    finally:
        book.close()
    return builder.build(doc, {"sheets": len(book.sheetnames)})
