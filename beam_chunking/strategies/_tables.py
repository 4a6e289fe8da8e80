"""Markdown pipe tables: finding them, and splitting an oversized one between rows.

A table is a header line starting with ``|``, a separator line of ``|``, ``-`` and ``:``
(``|---|:--:|``), and the ``|`` rows below. The parsers render HTML, DOCX and PPTX tables
this way, so one splitter serves every format.

A table that fits stays whole. One that does not is split between rows, and every piece
after the first starts with the header and separator lines again, so each piece can be read
on its own. Such a piece is the one place where a chunk's text is not a plain source span:
its ``start``/``end`` cover its own rows in the document, and its text is
``header + "\\n" + separator + "\\n" + document_text[start:end]``; the chunk's metadata says
so with ``table_header_repeated=True``.
"""
from __future__ import annotations

import re
from typing import Callable, List, Optional, Sequence, Tuple

from beam_chunking.text.packing import greedy_end

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
    alone with the header is cut by ``fallback`` without the header.
    """
    header = text[lines[0]:lines[2]].rstrip("\r\n")
    prefix = re.sub(r"\r\n|\r", "\n", header) + "\n"
    out: List[Tuple[int, int, Optional[str]]] = []
    first = True
    k, n = 2, len(lines) - 1
    while k < n:
        start = lines[0] if first else lines[k]

        def fits(j: int) -> bool:  # rows up to line j, after the header (its copy, or itself)
            candidate = text[start:lines[j]].rstrip()
            size = measure_span(start, start + len(candidate)) if first else measure_text(prefix + candidate)
            return size <= budget

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
        out.append((start, end, None if first else prefix))
        first = False
        k = end_k
    if first:  # a header with no rows
        out.append((lines[0], lines[0] + len(header), None))
    return out
