"""Tables in chunks: Markdown pipe tables found and split between rows, sheet-row headers bounded.

A table is a header line starting with ``|``, a separator line of ``|``, ``-`` and ``:``
(``|---|:--:|``), and the ``|`` rows below. The parsers render HTML, DOCX and PPTX tables
this way, so one splitter serves every format.

A table that fits stays whole. One that does not is split between rows, and every piece
after the first starts with the header and separator lines again, so each piece can be read
on its own. Such a piece is the one place where a chunk's text is not a plain source span:
its ``start``/``end`` cover its own rows in the document, and its text is
``header + "\\n" + separator + "\\n" + document_text[start:end]``; the chunk's metadata says
so with ``table_header_repeated=True``.

Sheet rows (CSV, TSV, XLSX) carry their header names in ``columns`` metadata;
:func:`bound_columns` keeps that header within each chunk's own ceiling.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Callable, Dict, FrozenSet, List, Optional, Sequence, Tuple

from beam_chunking.text.packing import greedy_end
from beam_chunking.types import Chunk

_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$")


def is_row(line: str) -> bool:
    """Whether a line is a pipe-table row."""
    return line.lstrip().startswith("|")


def table_blocks(text: str, lines: Sequence[int]) -> List[Tuple[int, int]]:
    """``(first_line, end_line)`` index ranges of the pipe tables among ``lines``."""
    blocks = []
    n = len(lines) - 1
    k = 0
    while k + 1 < n:
        head = text[lines[k]:lines[k + 1]]
        sep = text[lines[k + 1]:lines[k + 2]]
        if is_row(head) and _SEPARATOR.match(sep.rstrip("\r\n")) and "|" in sep:
            j = k + 2
            while j < n and is_row(text[lines[j]:lines[j + 1]]):
                j += 1
            blocks.append((k, j))
            k = j
        else:
            k += 1
    return blocks


def split_table(text: str, lines: Sequence[int], budget: int, measure_span: Callable[[int, int], int],
                measure_text: Callable[[str], int], fallback: Callable[[int, int], List[Tuple[int, int]]]
                ) -> List[Tuple[int, int, Optional[str]]]:
    """Split the table on ``lines`` (header, separator, rows) into ``(start, end, prefix)`` pieces.

    The first piece is a plain span (header, separator and the first rows); later pieces
    have ``prefix`` = the header and separator lines, repeated. A row too large even
    alone with the header is cut by ``fallback`` without the header. A header that alone
    takes the whole budget is never repeated: later pieces are then plain spans of rows,
    so a table of a million columns costs its rows' size, not rows times header.
    """
    header = text[lines[0]:lines[2]].rstrip("\r\n")
    prefix = re.sub(r"\r\n|\r", "\n", header) + "\n"
    repeat = measure_text(prefix) < budget
    out: List[Tuple[int, int, Optional[str]]] = []
    first = True
    k, n = 2, len(lines) - 1
    while k < n:
        start = lines[0] if first else lines[k]

        def fits(j: int) -> bool:  # rows up to line j, after the header (its copy, or itself)
            candidate = text[start:lines[j]].rstrip()
            if first or not repeat:
                return measure_span(start, start + len(candidate)) <= budget
            return measure_text(prefix + candidate) <= budget

        end_k = greedy_end(k, n, fits)
        if end_k == k:  # not even one row fits with the header
            if first:
                first = False
                if measure_span(lines[0], lines[0] + len(header)) <= budget:
                    out.append((lines[0], lines[0] + len(header), None))
                else:
                    out.extend((a, b, None) for a, b in fallback(lines[0], lines[0] + len(header)))
                continue
            row = text[lines[k]:lines[k + 1]].rstrip()
            out.extend((a, b, None) for a, b in fallback(lines[k], lines[k] + len(row)))
            k += 1
            continue
        end = start + len(text[start:lines[end_k]].rstrip())
        out.append((start, end, None if first or not repeat else prefix))
        first = False
        k = end_k
    if first:  # a header with no rows
        out.append((lines[0], lines[0] + len(header), None))
    return out


def _named_columns(text: str, chunk: Chunk, names: FrozenSet[str]) -> List[str]:
    """The columns that ``chunk`` (a piece of a sheet row, or of its header row) names, in order.

    A row's lines are ``name: value`` (a name may hold ``": "`` itself: the first prefix that
    is a column name wins); a header row is the names joined by ``" | "``. Where the chunk
    is a plain span of ``text`` (the document's), a part cut by its edge counts only when whole.
    """
    piece, start, end = chunk.text, chunk.start, chunk.end
    if not text.startswith(piece, start):  # a rewritten chunk: no edges to look past
        start, end, text = 0, len(piece), piece
    if chunk.metadata.get("chunk_kind") == "header":
        parts = piece.split(" | ")
        if start > 0 and not text.startswith(" | ", start - 3) and text[start - 1] != "\n":
            parts[0] = ""  # begins inside a name
        if end < len(text) and not text.startswith(" | ", end) and text[end] != "\n":
            parts[-1] = ""
        return [part for part in parts if part in names]
    lines = piece.split("\n")
    if start > 0 and text[start - 1] != "\n":
        lines[0] = ""  # begins inside a line: its name, if any, is cut
    found: List[str] = []
    for line in lines:
        at = line.find(": ")
        while at >= 0:
            if line[:at] in names:
                found.append(line[:at])
                break
            at = line.find(": ", at + 1)
    return found


def bound_columns(text: str, chunks: Sequence[Chunk], ceiling: Optional[int]) -> Sequence[Chunk]:
    """Bound the ``columns`` metadata of sheet-row chunks by the chunk's own ceiling.

    The tabular parsers give every row the sheet's header names (``columns``). Where those
    names together are longer than ``ceiling`` characters, a chunk carries only the columns
    its own text names, so what it carries is bounded by its own size: a row of a million
    columns split into a thousand chunks must not copy a million names into each of them
    (memory would grow with the square of the columns). Other chunks are returned as they are.

    Args:
        text: The document's text.
        chunks: Its chunks.
        ceiling: The strategy's ``max_chunk_size``; ``None`` (unbounded strategies) bounds
            each chunk by its own text length.

    Returns:
        ``chunks`` itself when no chunk changed, else a new list.
    """
    out: List[Chunk] = []
    changed = False
    totals: Dict[int, int] = {}  # id(columns) -> the names' characters; a sheet's rows share one tuple
    sets: Dict[int, FrozenSet[str]] = {}
    for chunk in chunks:
        columns = chunk.metadata.get("columns")
        if not columns or not isinstance(columns, (tuple, list)):
            out.append(chunk)
            continue
        key = id(columns)
        if key not in totals:
            totals[key] = sum(map(len, columns))
        if totals[key] <= (len(chunk.text) if ceiling is None else ceiling):
            out.append(chunk)
            continue
        if key not in sets:
            sets[key] = frozenset(columns)
        named = _named_columns(text, chunk, sets[key])
        out.append(dataclasses.replace(chunk, metadata={**chunk.metadata, "columns": named}))
        changed = True
    return out if changed else chunks
