"""Where a chunk lies on its pages: ``page``, ``page_end`` and ``boxes`` from the parser's geometry.

A parser that knows the geometry of its text (PDF, OCR'd images) fills
:attr:`ParsedDocument.boxes <beam_chunking.types.ParsedDocument.boxes>`, one
:class:`~beam_chunking.types.TextBox` per line. A chunk's regions are the lines its span
``[start, end)`` touches, as one rectangle per block of lines (a paragraph, a table, a
heading) and page: what a viewer highlights to cite it. ``page`` and ``page_end`` are the
first and last pages of those lines, so a chunk that flows over a page turn says so.

Example:
    >>> from beam_chunking.types import ParsedDocument, Section, TextBox, Chunk
    >>> doc = ParsedDocument("d", "", "application/pdf", "One. Two.", (Section(0, 9, page=1),),
    ...                      boxes=(TextBox(0, 4, 1, 10, 20, 50, 32, 0), TextBox(5, 9, 2, 10, 40, 50, 52, 1)))
    >>> [c.metadata["page_end"] for c in locate(doc, [Chunk("d", 0, 0, 9, "One. Two.", None, {"page": 1})])]
    [2]
"""
from __future__ import annotations

import bisect
import dataclasses
from typing import Any, Dict, List, Sequence

from beam_chunking.errors import ConfigError
from beam_chunking.types import Chunk, ParsedDocument, Section, TextBox

#: Values of a strategy's ``page_boundaries``: ``"soft"`` lets chunks flow over page turns,
#: ``"hard"`` cuts them at every page turn.
PAGE_BOUNDARIES = ("soft", "hard")


class Regions:
    """An index of a document's boxes by text offset."""

    def __init__(self, boxes: Sequence[TextBox]):
        self.boxes = boxes
        self.starts = [box.start for box in boxes]
        # Boxes are in text order, so ends only grow; the running maximum keeps the search right
        # if a parser ever nests one line's span inside another's.
        self.ends: List[int] = []
        reach = 0
        for box in boxes:
            reach = max(reach, box.end)
            self.ends.append(reach)

    def touched(self, start: int, end: int) -> Sequence[TextBox]:
        """The boxes whose span overlaps ``[start, end)`` (an empty span touches the box it is in)."""
        first = bisect.bisect_right(self.ends, start)
        last = bisect.bisect_left(self.starts, max(end, start + 1))
        return self.boxes[first:last]

    def describe(self, start: int, end: int) -> Dict[str, Any]:
        """``page``, ``page_end`` and ``boxes`` of the span; empty when no box is touched."""
        touched = self.touched(start, end)
        if not touched:
            return {}
        merged: List[Dict[str, Any]] = []
        key = None
        for box in touched:
            if (box.group, box.page) == key:
                last = merged[-1]
                last["x0"] = min(last["x0"], box.x0)
                last["y0"] = min(last["y0"], box.y0)
                last["x1"] = max(last["x1"], box.x1)
                last["y1"] = max(last["y1"], box.y1)
            else:
                merged.append({"page": box.page, "x0": box.x0, "y0": box.y0, "x1": box.x1, "y1": box.y1})
                key = (box.group, box.page)
        for region in merged:  # two decimals are a 1/7200 inch: enough for any viewer
            for name in ("x0", "y0", "x1", "y1"):
                region[name] = round(float(region[name]), 2)
        pages = [box.page for box in touched]
        return {"page": min(pages), "page_end": max(pages), "boxes": merged}


def locate(doc: ParsedDocument, chunks: Sequence[Chunk]) -> List[Chunk]:
    """``chunks`` with ``page``, ``page_end`` and ``boxes`` set from ``doc.boxes`` (unchanged
    when the document has no geometry). A chunk's span names its source, rewrites included."""
    if not doc.boxes or not chunks:
        return list(chunks)
    regions = Regions(doc.boxes)
    out = []
    for chunk in chunks:
        where = regions.describe(chunk.start, chunk.end)
        if not where:
            out.append(chunk)
            continue
        meta = dict(chunk.metadata)
        meta.update(where)
        out.append(dataclasses.replace(chunk, metadata=meta))
    return out


def check_page_boundaries(value: Any, owner: str = "strategy") -> str:
    """``value`` if it is one of :data:`PAGE_BOUNDARIES`.

    Raises:
        ConfigError: it is not.
    """
    if value not in PAGE_BOUNDARIES:
        raise ConfigError(f"{owner}.page_boundaries={value!r} must be one of {', '.join(PAGE_BOUNDARIES)}",
                          field="page_boundaries")
    return value


def split_at_pages(doc: ParsedDocument) -> ParsedDocument:
    """``doc`` with every section cut where its lines turn to a new page, so that no chunk
    spans a page turn (``page_boundaries="hard"``). Each piece keeps its section's heading,
    kind and metadata and gets its own ``page``. A document without geometry is returned as
    it is: its sections are all there is to know of its pages."""
    if not doc.boxes:
        return doc
    regions = Regions(doc.boxes)
    sections: List[Section] = []
    changed = False
    for section in doc.sections:
        touched = regions.touched(section.start, section.end)
        cuts = [b.start for a, b in zip(touched, touched[1:]) if b.page != a.page and section.start < b.start]
        if not cuts:
            sections.append(section)
            continue
        changed = True
        bounds = [section.start, *cuts, section.end]
        pages = [touched[0].page] + [b.page for a, b in zip(touched, touched[1:])
                                     if b.page != a.page and section.start < b.start]
        for (start, end), page in zip(zip(bounds, bounds[1:]), pages):
            end = start + len(doc.text[start:end].rstrip())
            if end > start:
                sections.append(dataclasses.replace(section, start=start, end=end, page=page))
    return dataclasses.replace(doc, sections=tuple(sections)) if changed else doc


__all__ = ["PAGE_BOUNDARIES", "Regions", "check_page_boundaries", "locate", "split_at_pages"]
