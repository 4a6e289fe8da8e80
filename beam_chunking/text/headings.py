"""Headings and code fences: the one Markdown scanner, plain-text heading patterns, heading paths.

Markdown (:func:`scan_markdown`): ATX headings (``## Title``), setext headings (a one-line
paragraph underlined with ``===`` or ``---``) and fenced code blocks (```` ``` ```` or
``~~~``, closed by a fence of the same character at least as long). Lines inside a fence
are never headings. The Markdown parser cuts sections at every heading; the structural
strategy scores ATX headings and fence edges as boundaries.

Plain text (:func:`find_headings`): a pattern is ``(regex, level)``. The regex is matched
against each line (stripped of surrounding whitespace) that starts a paragraph: the first
line of the text, one after a blank line, or, for text written with single newlines, one
right after a line that ends a sentence (``.``, ``!``, ``?``, ``;`` or ``:``, closing quotes
and brackets allowed) or after another heading. Without a blank line before it a heading's
title must not start with a lowercase letter (``12.\\n30 days after notice`` stays prose),
a ``#`` line is never a heading (in plain text it is a shell prompt or a comment), and a run
of three or more heading lines in a row that end no sentence (``1 Intro``, ``2 Setup``,
``3 Usage``: a list or a table of contents, where a clause such as ``1.1 Fees are due.``
ends one) are not headings, but for a line after a blank line. A line indented by four or
more spaces or a tab (a numbered list item, code) is never a heading. The heading's title
must be at most ``max_chars`` long (default :data:`MAX_HEADING_CHARS`; ``0`` accepts any length and shortens
the title to :data:`TITLE_CHARS`, for clauses whose text starts on the number's line). Its
level is ``level`` when positive; with ``level=0`` it is derived from the named groups: the
number of parts of ``num`` (``"2.1.3"`` -> 3) or the number of ``#`` in ``hashes``. The
title is the ``title`` group (else the whole line) and the label, used for clause numbers,
is the ``label`` or ``num`` group.

Example:
    >>> from beam_chunking.text.spans import line_starts
    >>> text = "# A\\n```\\n# not a heading\\n```\\nB\\n==="
    >>> outline = scan_markdown(text, line_starts(text, 0, len(text)))
    >>> [(h.line, h.level, h.title) for h in outline.headings], outline.fences
    ([(0, 1, 'A'), (4, 1, 'B')], (Fence(first=1, end=4, info=''),))
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

#: A plain-text heading pattern: ``(regex, level)``; level 0 derives it from the match.
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

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)")


@dataclass(frozen=True)
class Heading:
    """A plain-text heading line: where it starts, its level, title and label (clause number)."""

    start: int
    level: int
    title: str
    label: str


@dataclass(frozen=True)
class MarkdownHeading:
    """A Markdown heading: its (first) line index, level 1-6, raw title and form.

    ``title`` still holds its inline markup (links, emphasis); ``setext`` is ``True`` for an
    underlined title, whose ``line`` is the title line, not the underline.
    """

    line: int
    level: int
    title: str
    setext: bool = False


@dataclass(frozen=True)
class Fence:
    """A fenced code block: lines ``[first, end)``, fences included; ``info`` is the language word."""

    first: int
    end: int
    info: str


@dataclass(frozen=True)
class MarkdownOutline:
    """What :func:`scan_markdown` found: headings and fences, in line order."""

    headings: Tuple[MarkdownHeading, ...]
    fences: Tuple[Fence, ...]


def scan_markdown(text: str, lines: Sequence[int]) -> MarkdownOutline:
    """Find the headings and fenced blocks of the lines ``lines`` of ``text``.

    Args:
        text: The document text.
        lines: Line offsets ending with the range's end, as
            :func:`beam_chunking.text.spans.line_starts` returns them; line ``k`` is
            ``text[lines[k]:lines[k + 1]]`` without its line break.

    Returns:
        The outline; an unclosed fence runs to the last line (``end == len(lines) - 1``).
    """
    n = len(lines) - 1
    headings: List[MarkdownHeading] = []
    fences: List[Fence] = []
    fence: Optional[Tuple[str, int, str]] = None  # (marker, first line, info) of the open fence
    para: List[int] = []  # lines of the current paragraph (a setext title must be one line)
    for k in range(n):
        body = text[lines[k]:lines[k + 1]].rstrip("\r\n")
        m = _FENCE.match(body)
        if fence is not None:
            closer = m.group(1) if m else ""
            if closer and closer[0] == fence[0][0] and len(closer) >= len(fence[0]) and not body.strip()[len(closer):]:
                fences.append(Fence(fence[1], k + 1, fence[2]))
                fence = None
            para = []
        elif m:
            fence = (m.group(1), k, m.group(2))
            para = []
        elif atx := _ATX.match(body):
            headings.append(MarkdownHeading(k, len(atx.group(1)), atx.group(2) or ""))
            para = []
        elif _SETEXT.match(body) and len(para) == 1:
            # Only a one-line paragraph becomes a setext title; else "---" is a rule.
            first = para[0]
            title = text[lines[first]:lines[first + 1]].rstrip("\r\n")
            headings.append(MarkdownHeading(first, 1 if body.strip()[0] == "=" else 2, title, setext=True))
            para = []
        elif body.strip() and (para or not body.startswith(("    ", "\t"))):
            para.append(k)
        else:
            para = []
    if fence is not None:
        fences.append(Fence(fence[1], n, fence[2]))
    return MarkdownOutline(tuple(headings), tuple(fences))


def heading_path(stack: List[tuple], level: int, title: str) -> tuple:
    """Push ``(level, title)`` on a heading stack and return the path of titles.

    Entries of the same or a deeper level are popped first, so skipped levels nest
    correctly: ``#`` A, ``###`` B, ``##`` C give ``(A,)``, ``(A, B)``, ``(A, C)``.

    Args:
        stack: The ``(level, title)`` stack, changed in place.
        level: The new heading's level (1 is outermost).
        title: The new heading's title.
    """
    while stack and stack[-1][0] >= level:
        stack.pop()
    stack.append((level, title))
    return tuple(t for _, t in stack)


def compile_patterns(owner: str, patterns: Sequence[Sequence]) -> Tuple[Tuple[re.Pattern, int], ...]:
    """Validate and compile ``(regex, level)`` pairs.

    Raises:
        ConfigError: a pair is malformed, a regex does not compile, or a level-0 pattern
            has no ``num`` or ``hashes`` group; the message names ``owner`` and the index.
    """
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


# The end of a line after which a heading may follow without a blank line.
_ENDS_SENTENCE = re.compile(r"[.!?;:][\"'\u201d\u2019)\]]*$")

# A plain-text heading: one short line without sentence punctuation or a table pipe at
# either end, starting with a capital, a digit or a section sign ("2.1 Setup", "Article 2").
_PLAIN_HEADING = re.compile(r"^[A-Z0-9\u00a7][^\n|]*[^\s.!?;,|)\]\"'\u201d]$")
# A MediaWiki heading: "= Title =", "== Section ==", also spaced out ("= = Section = =").
_WIKI_HEADING = re.compile(r"^(=(?: ?=)*) \S.*? \1$")


def looks_like_heading_line(line: str, max_chars: int = MAX_HEADING_CHARS) -> bool:
    """Whether one line reads like a heading by its shape alone.

    True for a MediaWiki heading (``= = Gameplay = =``) and for a plain one: at most
    ``max_chars`` characters (default :data:`MAX_HEADING_CHARS`) once stripped, starting with a
    capital, a digit or ``§``, and ending with no sentence punctuation or table pipe. This is
    evidence, not structure: callers weigh it with the lines around it.
    """
    s = line.strip()
    return 0 < len(s) <= max_chars and "\n" not in s and bool(_PLAIN_HEADING.match(s) or _WIKI_HEADING.match(s))


def ends_sentence(line: str) -> bool:
    """Whether ``line`` ends with sentence punctuation (``.``, ``!``, ``?``, ``;`` or ``:``,
    closing quotes and brackets allowed)."""
    return bool(_ENDS_SENTENCE.search(line.rstrip()))


def _match(line: str, patterns, after_blank: bool = True) -> Optional[Tuple[int, str, str]]:
    for regex, level in patterns:
        m = regex.match(line)
        if m is None:
            continue
        groups = m.groupdict()
        if not after_blank and groups.get("hashes"):
            continue
        if level == 0:
            if groups.get("num"):
                level = groups["num"].count(".") + 1
            elif groups.get("hashes"):
                level = len(groups["hashes"])
            else:
                continue
        title = " ".join((groups.get("title") or line).split())
        if not after_blank and title[:1].islower():
            continue
        label = groups.get("label") or groups.get("num") or ""
        return level, title, label
    return None


def _shorten(title: str) -> str:
    if len(title) <= TITLE_CHARS:
        return title
    cut = title.rfind(" ", 0, TITLE_CHARS)
    return title[: cut if cut > 0 else TITLE_CHARS] + "…"


def find_headings(text: str, start: int, end: int, patterns, max_chars: int = MAX_HEADING_CHARS) -> List[Heading]:
    """Return the plain-text heading lines of ``text[start:end]`` in order.

    Args:
        text: The document text.
        start: First character of the range.
        end: One past its last character.
        patterns: Compiled patterns from :func:`compile_patterns`.
        max_chars: Longest title accepted, in characters; 0 accepts any length and
            shortens the title. Default 120.
    """
    found: List[Heading] = []
    # (heading, run id, after a blank line) of every hit; a run is consecutive heading lines.
    hits: List[Tuple[Heading, int, bool]] = []
    run, in_run = 0, False
    pos = start
    after_blank = True
    may_follow = True  # the previous line ended a sentence or was a heading
    while pos < end:
        nl = text.find("\n", pos, end)
        line_end = end if nl < 0 else nl
        line = text[pos:line_end]
        stripped = line.strip()
        if not stripped:
            after_blank = True
        else:
            # A line indented by four or more columns is list or code text, never a heading.
            indented = line.startswith(("    ", "\t"))
            hit = _match(stripped, patterns, after_blank) if (after_blank or may_follow) and not indented else None
            if hit is not None and not (max_chars == 0 or len(hit[1]) <= max_chars):
                hit = None
            ends = bool(_ENDS_SENTENCE.search(stripped))
            if hit is not None:
                level, title, label = hit
                if not in_run or after_blank:
                    run += 1
                # A clause line that ends a sentence has a body of its own: never in a run.
                hits.append((Heading(pos + (len(line) - len(line.lstrip())), level,
                                     _shorten(title) if max_chars == 0 else title, label),
                             -1 if ends else run, after_blank))
            in_run = hit is not None and not ends
            may_follow = hit is not None or ends
            after_blank = False
        if nl < 0:
            break
        pos = nl + 1
    sizes: dict = {}
    for _, r, _ in hits:
        sizes[r] = sizes.get(r, 0) + 1
    # A run that starts after a blank line counts from there; its blank-led first line stays.
    for heading, r, blank in hits:
        if blank or r < 0 or sizes[r] < 3:
            found.append(heading)
    return found
