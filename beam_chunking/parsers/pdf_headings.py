"""Which blocks of a PDF are headings, at what level, and where each bookmark starts.

With an outline (bookmarks), each bookmark is looked for among the blocks that start on its
page, from where the previous bookmark was found. Titles match tolerantly: case, spacing,
underscores, punctuation and a leading number or label (``1.2.7``, ``Chapter 3``) are
ignored, and a title set over two blocks (a heading that wraps with a short first line) is
found too; a label line just above the title (``Chapter 1``) joins the heading. A bookmark not
found in the text takes the first block on its page set in a heading's size, else the first
block that starts on its page (not the rest of a paragraph from the page before); its
heading path then applies from there, so no body is filed under the previous heading. Blocks
set large that match no bookmark stay text.

Without an outline, blocks set at least :data:`~beam_chunking.parsers.pdf_paragraphs.HEADING_RATIO`
above the body are headings, ranked by size: the largest size is level 1. Short bold blocks in
the body's size that read as titles are headings one level below the smallest size.
"""
from __future__ import annotations

import re
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

from beam_chunking.parsers.pdf_paragraphs import Block

_NUMBERING = re.compile(r"^\s*(?:(?:chapter|part|appendix|section|kapitel|chapitre)\s+)?"
                        r"(?:[\dIVXLC]+|[A-Z])(?:[.\-:]\d+)*[.:)]?\s+", re.I)
_NOT_WORD = re.compile(r"[\W_]+")
_LABEL_LINE = re.compile(r"^(?:(?:chapter|part|appendix|section)\s+[\w.]+|[\dIVXLC.]+)$", re.I)
#: Deepest heading level given by size alone.
MAX_SIZE_LEVELS = 6
#: Over this share of bold lines, bold marks no heading (the body itself is bold).
_BOLD_SHARE = 0.3
_NOT_HEADING_END = re.compile(r"[.,;:!?]$")


class Heading(NamedTuple):
    """A heading placed at a block.

    Args:
        block: Index of the block it starts at.
        level: 1 = outermost.
        title: The title for the heading path.
        shown: Whether the block is the heading's own text (else the heading is not in the
            text and applies from the block on).
    """

    block: int
    level: int
    title: str
    shown: bool


def normalise(title: str) -> str:
    """``title`` without numbering, case, spacing, underscores and punctuation."""
    stripped = _NUMBERING.sub("", title, count=1)
    return _NOT_WORD.sub("", (stripped or title).casefold())


def _match(blocks: Sequence[Block], k: int, title: str) -> int:
    """How many blocks from ``k`` spell ``title`` (0: no match)."""
    want = normalise(title)
    if not want:
        return 0
    have = ""
    for n in range(k, min(k + 3, len(blocks))):
        if n > k and blocks[n].page != blocks[k].page:
            break
        text, _ = blocks[n].text_and_spans()
        if len(text) > 3 * len(title) + 40:
            return 0
        have += normalise(text) if n == k else _NOT_WORD.sub("", text.casefold())
        if have == want or (have.startswith(want) and len(have) <= len(want) + 12):
            return n - k + 1
        if not want.startswith(have) or not have:
            return 0
    return 0


def _merge(blocks: List[Block], k: int, count: int) -> None:
    """Make blocks ``k`` .. ``k + count - 1`` one heading block."""
    for extra in blocks[k + 1:k + count]:
        blocks[k].lines.extend(extra.lines)
    del blocks[k + 1:k + count]
    blocks[k].kind = "heading"


def place_bookmarks(blocks: List[Block], outline: Dict[int, List[Tuple[int, str]]]) -> List[Heading]:
    """Headings from the outline (page index -> ``[(level, title)]``), merging the blocks a
    wrapped title spans. Blocks not matched keep their kind, except size headings, which
    become text."""
    placed: List[Heading] = []
    cursor = 0
    for page in sorted(outline):
        for level, title in outline[page]:
            start = cursor
            while start < len(blocks) and blocks[start].page < page:
                start += 1
            k = start
            found = 0
            while k < len(blocks) and blocks[k].page == page:
                found = _match(blocks, k, title)
                if found:
                    break
                k += 1
            if found:
                _merge(blocks, k, found)
                if k > cursor and _label_above(blocks, k):
                    blocks[k - 1].lines.extend(blocks[k].lines)
                    del blocks[k]
                    blocks[k - 1].kind = "heading"
                    k -= 1
                placed.append(Heading(k, level, title, True))
                cursor = k + 1
                continue
            k = _fallback(blocks, start, page)
            placed.append(Heading(k, level, title, False))
            cursor = k
    shown = {h.block for h in placed if h.shown}
    for k, block in enumerate(blocks):
        if block.kind == "heading" and k not in shown:
            block.kind = "text"
    return placed


def _label_above(blocks: Sequence[Block], k: int) -> bool:
    above = blocks[k - 1]
    return (above.page == blocks[k].page and len(above.lines) == 1
            and bool(_LABEL_LINE.match(above.lines[0][1].text.strip())))


def _fallback(blocks: Sequence[Block], start: int, page: int) -> int:
    """Where a bookmark not found in the text applies from."""
    on_page = [k for k in range(start, len(blocks)) if blocks[k].page == page]
    for k in on_page:
        if blocks[k].kind == "heading":
            return k
    if on_page:
        return on_page[0]
    later = next((k for k in range(start, len(blocks)) if blocks[k].page > page), None)
    return len(blocks) if later is None else later


def size_headings(blocks: Sequence[Block]) -> List[Heading]:
    """Headings by size alone (no outline): each distinct size of heading blocks is a level,
    the largest first; bold headings set in the body's size (:func:`_bold_heading`) come one
    level below the smallest size."""
    sizes = sorted({round(b.size * 2) / 2 for b in blocks if b.kind == "heading"}, reverse=True)
    level_of = {size: min(n + 1, MAX_SIZE_LEVELS) for n, size in enumerate(sizes)}
    bold_level = min(len(sizes) + 1, MAX_SIZE_LEVELS)
    lines = [line for block in blocks for _, line in block.lines]
    mostly_bold = sum(1 for line in lines if line.bold) > _BOLD_SHARE * max(1, len(lines))
    out = []
    for k, block in enumerate(blocks):
        if block.kind == "text" and not mostly_bold and _bold_heading(blocks, k):
            block.kind = "heading"
            text, _ = block.text_and_spans()
            out.append(Heading(k, bold_level, " ".join(text.split()), True))
        elif block.kind == "heading":
            text, _ = block.text_and_spans()
            out.append(Heading(k, level_of[round(block.size * 2) / 2], " ".join(text.split()), True))
    return out


def _bold_heading(blocks: Sequence[Block], k: int) -> bool:
    """Whether text block ``k`` is a heading set in bold at the body's size: one or two bold
    lines of at most 120 characters, not ending like a sentence or a run-in label (``.``,
    ``:`` ...), followed on its page or the next by a block that is not bold."""
    block = blocks[k]
    if len(block.lines) > 2 or not all(line.bold for _, line in block.lines) or k + 1 >= len(blocks):
        return False
    text, _ = block.text_and_spans()
    after = blocks[k + 1]
    return (len(text) <= 120 and not _NOT_HEADING_END.search(text) and not after.lines[0][1].bold
            and after.kind != "heading" and after.page <= block.lines[-1][0] + 1)


def headings(blocks: List[Block], outline: Optional[Dict[int, List[Tuple[int, str]]]]) -> List[Heading]:
    """The document's headings in block order: from the outline when it has one, else by size."""
    placed = place_bookmarks(blocks, outline) if outline else size_headings(blocks)
    return sorted(placed, key=lambda h: h.block)


__all__ = ["Heading", "MAX_SIZE_LEVELS", "headings", "normalise", "place_bookmarks", "size_headings"]
