"""Heading lines found in plain text by regular expressions, for documents without markup.

A pattern is ``(regex, level)``. The regex is matched against each line (stripped of
surrounding whitespace) that starts a paragraph (the first line of the text or one after a
blank line); the heading's title must be at most ``max_chars`` long (default
:data:`MAX_HEADING_CHARS`; ``0`` accepts any length and shortens the title to
:data:`TITLE_CHARS`, for clauses whose text starts on the number's line). Its level is ``level`` when
positive; with ``level=0`` it is derived from the named groups: the number of parts of
``num`` (``"2.1.3"`` -> 3) or the number of ``#`` in ``hashes``. The heading's title is the
``title`` group (else the whole line) and its label, used for clause numbers, is the ``label``
or ``num`` group.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

from beam_chunking.errors import ConfigError

#: Longest heading title accepted by default, in characters.
MAX_HEADING_CHARS = 120
#: Titles are shortened to this many characters when any length is accepted.
TITLE_CHARS = 80

Pattern = Tuple[str, int]

#: Excludes table-of-contents entries, which end with a page number ("2.1 Setup ..... 37").
NOT_TOC_ENTRY = r"(?!.*\S(?:\s*\.{2,}\s*|\s+)\d+\s*$)"

#: Markdown ATX headings, numbered headings ("2.1 Setup") and "Chapter/Part N" lines (not
#: their table-of-contents entries).
DEFAULT_PATTERNS: Tuple[Pattern, ...] = (
    (r"^(?P<hashes>#{1,6})\s+(?P<title>.+?)(?:\s+#+)?$", 0),
    (rf"^(?P<num>\d{{1,3}}(?:\.\d{{1,3}}){{0,5}})\.?\s+{NOT_TOC_ENTRY}(?P<title>[A-Z][^.!?]{{0,100}})$", 0),
    (rf"^(?P<title>(?:CHAPTER|Chapter|PART|Part)\s+(?:\d+|[IVXLC]+)\b{NOT_TOC_ENTRY}.*)$", 1),
)


@dataclass(frozen=True)
class Heading:
    """A heading line: where it starts, its level, title and label (clause number)."""

    start: int
    level: int
    title: str
    label: str


def compile_patterns(owner: str, patterns: Sequence[Sequence]) -> Tuple[Tuple[re.Pattern, int], ...]:
    """Validate and compile ``(regex, level)`` pairs, naming the bad one in a ConfigError."""
    out = []
    for k, item in enumerate(patterns):
        if not (isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], str)
                and isinstance(item[1], int) and not isinstance(item[1], bool) and item[1] >= 0):
            raise ConfigError(f"{owner}.heading_patterns[{k}] must be a (regex, level >= 0) pair, got {item!r}",
                              field="heading_patterns")
        try:
            regex = re.compile(item[0])
        except re.error as exc:
            raise ConfigError(f"{owner}.heading_patterns[{k}]: invalid regex {item[0]!r}: {exc}",
                              field="heading_patterns") from None
        if item[1] == 0 and not ({"num", "hashes"} & set(regex.groupindex)):
            raise ConfigError(f"{owner}.heading_patterns[{k}]: level 0 needs a 'num' or 'hashes' group",
                              field="heading_patterns")
        out.append((regex, item[1]))
    return tuple(out)


def _match(line: str, patterns) -> Optional[Tuple[int, str, str]]:
    for regex, level in patterns:
        m = regex.match(line)
        if m is None:
            continue
        groups = m.groupdict()
        if level == 0:
            if groups.get("num"):
                level = groups["num"].count(".") + 1
            elif groups.get("hashes"):
                level = len(groups["hashes"])
            else:
                continue
        title = " ".join((groups.get("title") or line).split())
        label = groups.get("label") or groups.get("num") or ""
        return level, title, label
    return None


def _shorten(title: str) -> str:
    if len(title) <= TITLE_CHARS:
        return title
    cut = title.rfind(" ", 0, TITLE_CHARS)
    return title[: cut if cut > 0 else TITLE_CHARS] + "…"


def find_headings(text: str, start: int, end: int, patterns, max_chars: int = MAX_HEADING_CHARS) -> List[Heading]:
    """Heading lines of ``text[start:end]`` in order (see the module docstring)."""
    found: List[Heading] = []
    pos = start
    after_blank = True
    while pos < end:
        nl = text.find("\n", pos, end)
        line_end = end if nl < 0 else nl
        line = text[pos:line_end]
        stripped = line.strip()
        if not stripped:
            after_blank = True
        else:
            hit = _match(stripped, patterns) if after_blank else None
            if hit is not None and (max_chars == 0 or len(hit[1]) <= max_chars):
                level, title, label = hit
                found.append(Heading(pos + (len(line) - len(line.lstrip())), level,
                                     _shorten(title) if max_chars == 0 else title, label))
            after_blank = False
        if nl < 0:
            break
        pos = nl + 1
    return found
