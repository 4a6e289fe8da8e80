"""Markdown tables for ``bench/run_all.py``: read the tables a bench script prints, write one
current table with a target beside each figure.

A bench script prints Markdown (a ``#### title`` line, then ``| a | b |`` rows); :func:`tables`
reads them back, :func:`merge` puts tables of one shape into one (their titles as a first
column), and :func:`with_targets` adds the ``target`` and ``met?`` columns from a list of
:class:`Check`. A row no check names gets the target ``none``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Sequence

_NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?")


@dataclass
class Table:
    """One Markdown table: the title above it (``""`` when none), its header and its rows."""

    title: str
    header: List[str]
    rows: List[List[str]] = field(default_factory=list)

    def cell(self, row: Sequence[str], column: str) -> str:
        """``row``'s cell in the first column named ``column`` (``""`` when there is none)."""
        return row[self.header.index(column)] if column in self.header else ""

    def markdown(self) -> str:
        filled = [[r[i] for r in self.rows if r[i]] for i in range(len(self.header))]
        numeric = [0 < i and self.header[i] not in ("target", "met?") and bool(cells)
                   and all(_NUMBER.match(c.strip("*[ ")) for c in cells) for i, cells in enumerate(filled)]
        lines = ["| " + " | ".join(self.header) + " |",
                 "|" + "".join("---:|" if n else "---|" for n in numeric)]
        lines += ["| " + " | ".join(r) + " |" for r in self.rows]
        return "\n".join(lines) + "\n"


def _cells(line: str) -> List[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def tables(text: str) -> List[Table]:
    """Every Markdown table in ``text``, each with the last heading (``#`` line) above it."""
    out: List[Table] = []
    title, current = "", None
    lines = text.splitlines()
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("#"):
            title, current = stripped.lstrip("#").strip(), None
        elif stripped.startswith("|") and current is None:
            if i + 1 < len(lines) and re.match(r"^\|[\s:|-]+\|$", lines[i + 1].strip()):
                current = Table(title, _cells(stripped))
                out.append(current)
        elif stripped.startswith("|") and not re.match(r"^\|[\s:|-]+\|$", stripped):
            cells = _cells(stripped)
            current.rows.append(cells + [""] * (len(current.header) - len(cells)))
        elif not stripped.startswith("|"):
            current = None
    return out


def titled(found: List[Table], pattern: str) -> List[Table]:
    """The tables whose title matches ``pattern`` (a regular expression, searched)."""
    return [t for t in found if re.search(pattern, t.title)]


def merge(found: List[Table], column: str, label: Callable[[str], str] = lambda title: title) -> Table:
    """Tables of one header as one, each row led by ``label(its table's title)`` in ``column``."""
    if not found:
        return Table("", [column])
    merged = Table(found[0].title, [column] + found[0].header)
    for t in found:
        merged.rows += [[label(t.title)] + r for r in t.rows]
    return merged


def number(cell: str) -> Optional[float]:
    """The first number in a cell (``"0.95x [0.9-1.0]"`` gives 0.95), or ``None``."""
    m = _NUMBER.search(cell or "")
    return float(m.group().replace(",", "")) if m else None


@dataclass(frozen=True)
class Check:
    """A target for the rows ``rows`` matches (a regular expression searched in the row's
    cells joined by ``" | "``).

    Args:
        rows: Which rows the target is for.
        goal: The target as the table shows it (``">= 0.9x"``).
        test: ``test(table, row)``: whether the row meets it, ``None`` when that cannot be
            told from the row. Default: none (the target is shown, ``met?`` left empty).
    """

    rows: str
    goal: str
    test: Optional[Callable[[Table, List[str]], Optional[bool]]] = None


def at_least(column: str, value: float) -> Callable:
    """A test: the first number of ``column`` is at least ``value``."""
    return lambda t, r: None if number(t.cell(r, column)) is None else number(t.cell(r, column)) >= value


def at_most(column: str, value: float) -> Callable:
    """A test: the first number of ``column`` is at most ``value``."""
    return lambda t, r: None if number(t.cell(r, column)) is None else number(t.cell(r, column)) <= value


def ratio_check(rows: str, column: str, value: float) -> Check:
    """The most common target: ``column`` (a ratio such as ``0.95x [...]``) at least ``value``."""
    return Check(rows, f">= {value}x", at_least(column, value))


def with_targets(table: Table, checks: Sequence[Check]) -> Table:
    """``table`` with two more columns: each row's targets (``none`` when no check names it)
    and whether it meets them (``yes``, ``no``, or empty when a row cannot tell); ``table``
    itself when there are no checks (the area then says that no target was set)."""
    if not checks:
        return table
    out = Table(table.title, table.header + ["target", "met?"])
    for row in table.rows:
        joined = " | ".join(row)
        mine = [c for c in checks if re.search(c.rows, joined)]
        results = [c.test(table, row) if c.test else None for c in mine]
        met = "" if not mine or any(r is None for r in results) else "yes" if all(results) else "no"
        out.rows.append(row + ["; ".join(c.goal for c in mine) or "none", met])
    return out


def keep(table: Table, columns: Sequence[str]) -> Table:
    """``table`` with only ``columns`` (those it has), in that order."""
    idx = [table.header.index(c) for c in columns if c in table.header]
    return Table(table.title, [table.header[i] for i in idx], [[r[i] for i in idx] for r in table.rows])


def before_paren(title: str) -> str:
    """A table's title without its trailing ``(ratio vs ...)`` or ``(N pages)``: the group it
    measures."""
    title = re.sub(r"\s*\(ratio vs .*\)\s*$", "", title)
    return re.sub(r"\s*\([^()]*pages\)\s*$", "", title).strip()

