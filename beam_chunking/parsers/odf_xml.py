"""Reading OpenDocument XML elements: the text of a paragraph, and the rows of a table.

Shared by the text, spreadsheet and presentation readers of :mod:`beam_chunking.parsers.odf`.
Both walks are iterative (a hostile file may nest spans or row groups thousands deep) and
neither expands what OpenDocument compresses: ``text:s`` (runs of spaces), and columns and
rows marked ``number-columns-repeated`` / ``number-rows-repeated``. A spreadsheet's last
empty row is typically repeated a million times and its last empty cell sixteen thousand
times; empty repeats are counted, never built, and repeated content is bounded by
``limits.max_columns`` and ``limits.max_rows``.
"""
from __future__ import annotations

from typing import Any, Callable, Iterator, List, Sequence, Tuple

from beam_chunking.parsers.limits import ParseLimits, exceeded

TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"
DRAW = "{urn:oasis:names:tc:opendocument:xmlns:drawing:1.0}"
PRESENTATION = "{urn:oasis:names:tc:opendocument:xmlns:presentation:1.0}"
SVG = "{urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0}"

#: Paragraph-like elements: their text is read inline.
PARAGRAPHS = frozenset({f"{TEXT}p", f"{TEXT}h"})
# Inline elements whose content is not the paragraph's text: footnotes and endnotes,
# comments, deleted text of tracked changes, alt text of images, ruby annotations.
_NOT_TEXT = frozenset({f"{TEXT}note", f"{OFFICE}annotation", f"{TEXT}tracked-changes", f"{SVG}title",
                       f"{SVG}desc", f"{TEXT}ruby-text", f"{TEXT}bookmark-ref"})
_MAX_SPACES = 64  # collapse() makes any run one space; more never needs building
_ROW_GROUPS = frozenset({f"{TABLE}table-header-rows", f"{TABLE}table-rows", f"{TABLE}table-row-group"})
_CELLS = frozenset({f"{TABLE}table-cell", f"{TABLE}covered-table-cell"})
_FLOATS = frozenset({"float", "percentage", "currency"})


def inline_text(element) -> str:
    """The text of a paragraph (or any element) as written: spans, links and fields joined,
    ``text:s`` as spaces, ``text:tab`` as a tab, ``text:line-break`` as a newline; notes,
    comments and alt text left out."""
    if not len(element):  # most paragraphs and cells: one run of text
        return element.text or ""
    out: List[str] = []
    stack: List[Tuple[Any, bool]] = [(element, False)]
    while stack:
        node, closing = stack.pop()
        if closing:
            if node.tail:
                out.append(node.tail)
            continue
        tag = node.tag
        if node is not element:
            special = None
            if tag == f"{TEXT}s":
                special = " " * min(count(node.get(f"{TEXT}c")), _MAX_SPACES)
            elif tag == f"{TEXT}tab":
                special = "\t"
            elif tag == f"{TEXT}line-break":
                special = "\n"
            elif tag in _NOT_TEXT:
                special = ""
            if special is not None:
                out.append(special)
                if node.tail:
                    out.append(node.tail)
                continue
            stack.append((node, True))  # its tail, once its children are written
        if node.text:
            out.append(node.text)
        stack.extend((child, False) for child in reversed(node))
    return "".join(out)


def count(value) -> int:
    """A repeat count attribute as a positive int (1 when absent or malformed)."""
    try:
        return max(1, int(value))
    except (TypeError, ValueError):
        return 1


def display_value(cell) -> str:
    """A table cell's text as shown: its paragraphs on one line."""
    return " ".join(word for p in cell.iter() if p.tag in PARAGRAPHS for word in inline_text(p).split())


def typed_value(cell) -> Any:
    """A spreadsheet cell's value as the XLSX reader gives it: numbers as floats (not as
    formatted: ``0.5``, not ``50 %``), dates as their ISO text, booleans as bools; text
    and times as shown."""
    kind = cell.get(f"{OFFICE}value-type")
    try:
        if kind in _FLOATS and cell.get(f"{OFFICE}value") is not None:
            return float(cell.get(f"{OFFICE}value"))
    except ValueError:
        pass
    if kind == "date" and cell.get(f"{OFFICE}date-value"):
        return cell.get(f"{OFFICE}date-value")
    if kind == "boolean" and cell.get(f"{OFFICE}boolean-value") is not None:
        return cell.get(f"{OFFICE}boolean-value").strip().lower() == "true"
    return display_value(cell)


def _row_elements(table) -> Iterator[Any]:
    stack = list(reversed(table))
    while stack:
        node = stack.pop()
        if node.tag == f"{TABLE}table-row":
            yield node
        elif node.tag in _ROW_GROUPS:
            stack.extend(reversed(node))


def _cells(row, value_of: Callable[[Any], Any], limits: ParseLimits, where: str) -> List[Any]:
    values: List[Any] = []
    pending = 0  # empty cells not yet written: only written when content follows them
    for cell in row:
        if cell.tag not in _CELLS:
            continue
        n = count(cell.get(f"{TABLE}number-columns-repeated"))
        value = value_of(cell) if cell.tag == f"{TABLE}table-cell" else ""
        if value is None or value == "":
            pending += n
            continue
        if len(values) + pending + n > limits.max_columns:
            raise exceeded(limits, "max_columns", f"{where} has more than {limits.max_columns} columns")
        values.extend([""] * pending)
        values.extend([value] * n)
        pending = 0
    return values


def table_rows(table, value_of: Callable[[Any], Any], limits: ParseLimits, where: str
               ) -> Iterator[Tuple[int, Sequence[Any]]]:
    """``(row number, cell values)`` of a ``table:table``, 1-based, repeats expanded where
    they hold content; rows without content are skipped (their numbers still count).

    Args:
        table: The ``table:table`` element.
        value_of: A cell's value (:func:`display_value` or :func:`typed_value`).
        limits: ``max_columns`` bounds a row; ``max_rows`` the rows a repeat may expand to.
        where: Names the table in error messages (``"sheet Sales"``).

    Raises:
        LimitExceeded: a row over ``max_columns``, or a repeated row past ``max_rows``.
    """
    number = 0
    for row in _row_elements(table):
        repeat = count(row.get(f"{TABLE}number-rows-repeated"))
        values = _cells(row, value_of, limits, f"{where} row {number + 1}")
        if not values:
            number += repeat
            continue
        if repeat > limits.max_rows:
            raise exceeded(limits, "max_rows", f"{where} row {number + 1} repeats {repeat} times")
        for _ in range(repeat):
            number += 1
            yield number, values
