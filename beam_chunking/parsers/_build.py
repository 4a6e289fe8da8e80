"""Assembling a parsed document's text and sections from extracted pieces.

Binary formats have no text of their own: the parser defines it. ``TextBuilder`` joins the
pieces with blank lines and records each section's exact span, so every section is a true
span of ``ParsedDocument.text`` and the separators between sections are whitespace only.
"""
from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Sequence, Tuple

from beam_chunking.errors import LimitExceeded
from beam_chunking.parsers.limits import check_time
from beam_chunking.text.headings import heading_path
from beam_chunking.types import Document, ParsedDocument, Section, TextBox

_SPACES = re.compile(r"[ \t\f\v\u00a0\u2000-\u200a\u202f\u205f\u3000]+")
_LEADING_BLANK_LINES = re.compile(r"^(?:[ \t]*\n)+")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffe\uffff]")


def collapse(text: str) -> str:
    """Collapse runs of horizontal whitespace to one space and strip the ends of each line."""
    lines = (_SPACES.sub(" ", line).strip() for line in text.splitlines())
    return "\n".join(line for line in lines if line)


def clean(text: str) -> str:
    """Normalise newlines to ``\\n`` and drop control characters (keeping tabs and newlines)."""
    return _CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


class TextBuilder:
    """Accumulates sections of text; ``build()`` returns the :class:`ParsedDocument`.

    Args:
        separator: Inserted between sections. Default a blank line.
        max_chars: Most characters of text (``limits.max_text_chars``); more raises
            :class:`~beam_chunking.errors.LimitExceeded`. Default ``None``: no cap.

    Each section added is also a checkpoint of the parse's time budget
    (:func:`~beam_chunking.parsers.limits.check_time`).
    """

    def __init__(self, separator: str = "\n\n", max_chars: Optional[int] = None):
        self.separator = separator
        self.max_chars = max_chars
        self._parts: List[str] = []
        self._length = 0
        self._sections: List[Dict[str, Any]] = []
        self._dropped: Dict[str, int] = {}
        self._last_start = 0
        self._boxes: List[TextBox] = []

    @property
    def length(self) -> int:
        """Characters of text so far: where the next piece's separator starts."""
        return self._length

    @property
    def last_start(self) -> int:
        """Where the text last added (by :meth:`add` or :meth:`extend`) starts."""
        return self._last_start

    def add_boxes(self, boxes: Sequence[TextBox], start: int, end: int, shift: int) -> None:
        """Place another parse's boxes that lie in its text's ``[start, end)`` (an
        attachment's section), moved by ``shift`` characters, their groups numbered after
        the ones placed so far."""
        first_group = self._boxes[-1].group + 1 if self._boxes else 0
        base = None
        for box in boxes:
            if box.start >= start and box.end <= end:
                base = box.group if base is None else base
                self._boxes.append(box._replace(start=box.start + shift, end=box.end + shift,
                                                group=first_group + box.group - base))

    def drop(self, label: str, text: str) -> None:
        """Record ``text`` as left out on purpose under ``label``; whitespace is not counted."""
        count = sum(1 for ch in text if not ch.isspace())
        if count:
            self._dropped[label] = self._dropped.get(label, 0) + count

    def add_drops(self, dropped: Sequence[Tuple[str, int]]) -> None:
        """Record another parse's drops (an attachment's): ``(label, characters)`` pairs."""
        for label, count in dropped:
            self._dropped[label] = self._dropped.get(label, 0) + count

    def _append(self, text: str) -> int:
        if self._length:
            self._parts.append(self.separator)
            self._length += len(self.separator)
        start = self._last_start = self._length
        self._parts.append(text)
        self._length += len(text)
        self._check()
        return start

    def _check(self) -> None:
        # A small file can hold text that repeats: PDF pages sharing one content stream, sheet
        # rows referencing one long shared string. Stop before it takes the worker's memory.
        if self.max_chars is not None and self._length > self.max_chars:
            raise LimitExceeded(f"the parsed text exceeds limits.max_text_chars={self.max_chars} characters; "
                                "raise the limit to parse it", limit="max_text_chars")
        check_time(f"section {len(self._sections) + 1}")

    def add(self, text: str, **fields: Any) -> bool:
        """Add ``text`` as a new section with ``Section`` fields; blank text adds nothing.

        Blank lines around ``text`` are dropped; the first line's indentation is kept (code).
        Returns whether a section was added.
        """
        text = _LEADING_BLANK_LINES.sub("", text.rstrip())
        if not text:
            return False
        start = self._append(text)
        self._sections.append(dict(fields, start=start, end=self._length))
        return True

    def extend(self, text: str, separator: Optional[str] = None) -> bool:
        """Append ``text`` to the last section (or start one); blank text adds nothing."""
        text = text.strip()
        if not text:
            return False
        if not self._sections:
            return self.add(text)
        sep = self.separator if separator is None else separator
        self._parts.append(sep + text)
        self._last_start = self._length + len(sep)
        self._length += len(sep) + len(text)
        self._sections[-1]["end"] = self._length
        self._check()
        return True

    @property
    def last_section(self) -> Dict[str, Any]:
        """The fields of the section added last (empty before the first)."""
        return self._sections[-1] if self._sections else {}

    def update_last(self, **fields: Any) -> None:
        """Change fields of the last section (e.g. its element path once it is known)."""
        self._sections[-1].update(fields)

    def build(self, doc: Document, metadata: Optional[Dict[str, Any]] = None,
              boxes: Tuple[TextBox, ...] = ()) -> ParsedDocument:
        """Return the parsed document; ``metadata`` is merged over the document's tags.
        ``boxes`` place the text on its pages (formats with geometry)."""
        meta = dict(doc.metadata)
        meta.update(metadata or {})
        sections = tuple(Section(**s) for s in self._sections)
        return ParsedDocument(doc.id, doc.uri, doc.content_type, "".join(self._parts), sections, meta,
                              dropped=tuple(self._dropped.items()), boxes=tuple(self._boxes) + tuple(boxes))


#: The drop label of a table without a word in any cell (a layout grid, a placeholder).
EMPTY_TABLE = "empty table"


def empty_table(rows: Sequence[Sequence[str]]) -> bool:
    """Whether no cell of ``rows`` holds text: such a table would be a chunk of pipes."""
    return not any(str(cell).strip() for row in rows for cell in row)


def markdown_table(rows: Sequence[Sequence[str]], *, header: bool = True, caption: str = "") -> str:
    """Render rows of cell texts as a Markdown pipe table.

    The first row is the header row; without one (``header=False``) an empty header row is
    added so every data row stays a row. Cell text is put on one line and ``|`` escaped.
    ``caption`` (if any) is the first line.
    """
    lines = [caption] if caption else []
    if not rows:
        return "\n".join(lines)
    width = max(len(r) for r in rows)
    cells = [[" ".join(str(c).split()).replace("|", "\\|") for c in r] + [""] * (width - len(r)) for r in rows]
    if not header:
        cells.insert(0, [""] * width)
    lines.append("| " + " | ".join(cells[0]) + " |")
    lines.append("|" + "---|" * width)
    lines.extend("| " + " | ".join(r) + " |" for r in cells[1:])
    return "\n".join(lines)


class HeadingSections:
    """Groups blocks into heading sections: a heading starts one, paragraphs extend it.

    Tables and code blocks are sections of their own (of kind ``table`` / ``code``), taking
    in a heading that has no body yet. ``element_path`` (when blocks have paths) is the
    common ancestry of a section's blocks.
    """

    def __init__(self, max_chars: Optional[int] = None, builder: Optional[TextBuilder] = None) -> None:
        self.builder = builder if builder is not None else TextBuilder(max_chars=max_chars)
        self.stack: List[tuple] = []
        self.path: Tuple[str, ...] = ()
        self.level = 0
        self.open = False  # the last section is text that paragraphs extend
        self.heading_only = False  # ... and so far holds only its heading
        self.common: Optional[List[str]] = None  # its blocks' common ancestry (None: no paths)

    def _set_common(self, common: Optional[List[str]]) -> None:
        self.common = common
        if common is not None:
            self.builder.update_last(metadata={"element_path": " > ".join(common)} if common else {})

    def heading(self, level: int, title: str, path: Optional[List[str]] = None, text: Optional[str] = None,
                **fields: Any) -> Optional[int]:
        """Start a section at a heading of ``level`` (1 = outermost).

        ``title`` goes into the heading path; ``text`` (default ``title``) into the text.
        ``fields`` are further :class:`Section` fields of the new section (``page``). Returns
        where the heading's text starts in the document, or ``None`` when it is blank.
        """
        self.path = heading_path(self.stack, level, title)
        self.level = level
        text = title if text is None else text
        if self.builder.add(text, level=level, heading_path=self.path, **fields):
            self.open = self.heading_only = True
            self._set_common(path)
            return self.builder.last_start
        return None

    def cut(self) -> None:
        """End the open section: the next block starts another under the same heading (the
        text between them was left out, so they are not one run of text)."""
        self.open = self.heading_only = False

    def untitled(self, level: int, title: str) -> None:
        """Start a section under a heading of ``level`` that is not in the text (a PDF
        bookmark its page does not show): the blocks after it go under ``title``."""
        self.path = heading_path(self.stack, level, title)
        self.level = level
        self.open = self.heading_only = False

    def paragraph(self, text: str, path: Optional[List[str]] = None, **fields: Any) -> Optional[int]:
        """Add a body block (extends the open section); ``fields`` apply to a new section.

        Returns where the block's text starts in the document, or ``None`` when it is blank.
        """
        if self.open and self.builder.extend(text):
            if self.heading_only:  # the body's ancestry, not the heading's, names the section
                self._set_common(path)
            elif path is not None and self.common is not None:
                narrowed = _common_prefix(self.common, path)
                if narrowed != self.common:
                    self._set_common(narrowed)
        elif self.builder.add(text, level=self.level, heading_path=self.path, **fields):
            self.open = True
            self._set_common(path)
        else:
            return None
        self.heading_only = False
        return self.builder.last_start

    def unit(self, text: str, kind: str, path: Optional[List[str]] = None, **fields: Any) -> Optional[int]:
        """A table or code block: its own section (absorbing a heading that has no body yet).

        Returns where the block's text starts in the document, or ``None`` when it is blank.
        """
        start = None
        if self.heading_only and self.builder.extend(text):
            self.builder.update_last(kind=kind)
            self._set_common(path)
            start = self.builder.last_start
        elif self.builder.add(text, level=self.level, heading_path=self.path, kind=kind, **fields):
            self._set_common(path)
            start = self.builder.last_start
        self.open = self.heading_only = False
        return start


def _common_prefix(a: List[str], b: List[str]) -> List[str]:
    n = 0
    limit = min(len(a), len(b))
    while n < limit and a[n] == b[n]:
        n += 1
    return a if n == len(a) else a[:n]
