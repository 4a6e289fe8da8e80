"""Safety caps that bound what one document may cost a parser, in memory and in time.

Every cap fails the one document with a :class:`~beam_chunking.errors.ParseError` that names
the cap and how to raise it (the caps on characters, columns, nesting and time raise its
subclass :class:`~beam_chunking.errors.LimitExceeded`, whose message reads
``limits.<name>=<value>``); the pipeline goes on with the other documents.

The time budget (``max_parse_seconds``) is enforced twice. Cooperatively: :func:`parse_budget`
starts it for one document and :func:`check_time` stops the parse at the next page, row,
paragraph or element once it is spent. And, for the formats whose library calls can run
long on their own (python-docx reading one table, openpyxl reading the shared strings,
PDFium laying out one page, extract-msg), by a watchdog: with ``watchdog=True``
(the default) those documents are parsed in a child process that is killed once the
budget plus a grace has passed (:mod:`beam_chunking.parsers.watchdog` lists them and says
why). The other parsers run in-process; their single calls (Lexbor building a page, decoding
a text) are kept small by the caps on bytes and nesting depth.
"""
from __future__ import annotations

import contextlib
import contextvars
import time
from dataclasses import dataclass, fields
from typing import Any, Iterator, Mapping, Optional, Tuple

from beam_chunking.errors import ConfigError, LimitExceeded

MIB = 1024 * 1024

#: Default cap on one document's size as read (and inflated from ``.gz``), in bytes (256 MiB).
DEFAULT_MAX_BYTES = 256 * MIB


@dataclass(frozen=True)
class ParseLimits:
    """Caps applied while parsing one document.

    Args:
        max_uncompressed_bytes: Largest total uncompressed size of a zip container's members
            (DOCX, PPTX, XLSX) or of an Outlook message's bodies and attachments, in bytes.
            Default 512 MiB. (A ``.gz`` input is inflated when it is read, capped by
            ``ReadDocuments(max_bytes=...)``, default 256 MiB, not by this limit.)
        max_compression_ratio: Largest uncompressed/compressed ratio of a zip container as a
            whole (once it inflates past 1 MiB) and of each member: the members over it may
            inflate to 1 MiB in all. Default 200 (real Office files stay under 50; zip bombs
            reach thousands).
        max_zip_members: Most members a zip container may hold. Default 10,000.
        max_pages: Most PDF pages or presentation slides. Default 5,000.
        max_rows: Most data rows over all sheets of a CSV, TSV or XLSX. Default 1,000,000.
        max_attachment_depth: How deep e-mail attachments (messages inside messages) are
            parsed. Default 3.
        max_text_chars: Most characters of text a parser may build from one document (PDF,
            HTML, Office, tabular, e-mail, transcripts; plain text is bounded by ``max_bytes``).
            Default 50,000,000: a 1,000-page book is about 3 million.
        max_page_chars: Most characters of text one PDF page or presentation slide may give.
            Default 1,000,000 (a dense page holds about 5,000). A PDF page is counted before
            its text is copied out, so a small PDF whose pages all draw one huge content
            stream stops on its first page.
        max_row_chars: Most characters of text one CSV/TSV/XLSX row (header row included)
            may give, all its cells together. Default 10,000,000 (a CSV field may hold a whole
            document).
        max_columns: Most columns of one CSV/TSV/XLSX row. Default 16,384 (Excel's own
            limit, column XFD).
        max_html_depth: Deepest nesting of HTML elements, for pages of more than 20,000
            tags (smaller ones parse in about a second however they nest). Default 1,000
            (browsers stop nesting at 512). HTML parsers take time quadratic in the depth,
            so a page of 100,000 nested lists is refused before it is parsed.
        max_parse_seconds: Time budget for parsing one document, in seconds (float).
            Default 300. Checked between pages, rows, paragraphs and elements, and, with
            ``watchdog``, a hard bound (see the module docstring).
        watchdog: Parse the formats whose library calls cannot be interrupted (see
            :data:`~beam_chunking.parsers.watchdog.ISOLATED_TYPES`) in a child process
            killed at ``max_parse_seconds`` plus a grace of
            :data:`~beam_chunking.parsers.watchdog.GRACE_SECONDS`. Default ``True``. It
            costs one child process per worker process (started at the first such document,
            about 40 MB, plus the parser libraries it loads) and copying each document and
            its text between the two (``bench/README.md`` gives the time). ``False`` parses
            them in-process: cheaper, but one library call may overrun the budget.
    """

    max_uncompressed_bytes: int = 512 * MIB
    max_compression_ratio: float = 200.0
    max_zip_members: int = 10_000
    max_pages: int = 5_000
    max_rows: int = 1_000_000
    max_attachment_depth: int = 3
    max_text_chars: int = 50_000_000
    max_page_chars: int = 1_000_000
    max_row_chars: int = 10_000_000
    max_columns: int = 16_384
    max_html_depth: int = 1_000
    max_parse_seconds: float = 300.0
    watchdog: bool = True

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(f.default, bool):  # a switch, not a cap
                if not isinstance(value, bool):
                    raise ConfigError(f"ParseLimits.{f.name} must be true or false, got {value!r}", field=f.name)
            elif isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise ConfigError(f"ParseLimits.{f.name} must be a positive number, got {value!r}", field=f.name)

    @classmethod
    def from_mapping(cls, data: Optional[Mapping[str, Any]]) -> "ParseLimits":
        """Build limits from a spec mapping, rejecting unknown keys by name."""
        data = dict(data or {})
        known = {f.name for f in fields(cls)}
        for key in data:
            if key not in known:
                raise ConfigError(f"unknown limit {key!r} (known: {', '.join(sorted(known))})", field=key)
        return cls(**data)


DEFAULT_LIMITS = ParseLimits()


def exceeded(limits: ParseLimits, name: str, what: str) -> LimitExceeded:
    """The error for ``what`` (``"page 3 has 1200000 characters"``) over the cap ``name``.

    The document is named by :func:`beam_chunking.parsers.parse`, which adds its URI.
    """
    value = getattr(limits, name)
    shown = f"{value:g}" if isinstance(value, float) else str(value)
    return LimitExceeded(f"{what}, over limits.{name}={shown}; raise the limit to parse it", limit=name)


class _Budget:
    """The start and end of one document's parse time (``time.monotonic`` seconds)."""

    __slots__ = ("limits", "started", "ends")

    def __init__(self, limits: ParseLimits, window: Optional[Tuple[float, float]] = None):
        self.limits = limits
        if window is None:
            now = time.monotonic()
            window = (now, now + limits.max_parse_seconds)
        self.started, self.ends = window


_BUDGET: contextvars.ContextVar[Optional[_Budget]] = contextvars.ContextVar("beam_chunking_parse_budget",
                                                                            default=None)


@contextlib.contextmanager
def parse_budget(limits: ParseLimits, window: Optional[Tuple[float, float]] = None) -> Iterator[None]:
    """Run the enclosed parse under ``limits.max_parse_seconds``; :func:`check_time` reads it.

    A budget already running (an e-mail's attachment parsed inside the e-mail) is kept: the
    whole document shares one budget.

    Args:
        limits: The caps; the budget lasts ``limits.max_parse_seconds`` from now.
        window: ``(started, ends)`` in ``time.monotonic`` seconds instead: the budget that
            the parent process started, continued in the watchdog's child (the clock is
            system-wide on Linux, macOS and Windows).
    """
    if _BUDGET.get() is not None:
        yield
        return
    token = _BUDGET.set(_Budget(limits, window))
    try:
        yield
    finally:
        _BUDGET.reset(token)


def budget_window() -> Optional[Tuple[float, float]]:
    """``(started, ends)`` of the running budget in ``time.monotonic`` seconds, or ``None``."""
    budget = _BUDGET.get()
    return None if budget is None else (budget.started, budget.ends)


def check_time(where: str) -> None:
    """Stop the parse when its budget is spent (a no-op outside :func:`parse_budget`).

    Args:
        where: How far the parse got, for the message (``"page 120 of 400"``).

    Raises:
        LimitExceeded: the budget is spent; the message names ``max_parse_seconds``.
    """
    budget = _BUDGET.get()
    if budget is not None and time.monotonic() > budget.ends:
        spent = time.monotonic() - budget.started
        raise exceeded(budget.limits, "max_parse_seconds", f"parsing took {spent:.1f} s (stopped at {where})")
