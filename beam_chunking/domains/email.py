"""E-mail template: one chunk per part (headers, body, each attachment), ``part`` metadata.

It consumes the sections of the e-mail parser (:mod:`beam_chunking.parsers.mail`) and
registers no parser of its own. A document without ``part`` metadata is one ``body`` part.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from beam_chunking.strategies.base import Chunker, Drops
from beam_chunking.strategies.hierarchical import Group, Unit, build_chunks, subtree_metadata
from beam_chunking.types import Chunk, ParsedDocument


@dataclass(frozen=True)
class EmailChunker(Chunker):
    """One chunk per e-mail part: ``headers``, ``body`` and ``attachment:<name>``.

    An attachment's sections (a PDF's pages, a sheet's rows) merge into one chunk with the
    min/max page range. Size is unbounded; add a refiner to bound
    a long body. Dropped parts are reported in the documents table.

    Args:
        include_headers: Emit the headers part. Default ``True``.
        include_attachments: Emit attachment parts. Default ``True``.
    """

    name = "email"
    unit_template = "unbounded"
    include_headers: bool = True
    include_attachments: bool = True

    def _groups(self, doc: ParsedDocument) -> List[Group]:
        groups: List[Group] = []
        for section in doc.sections:
            part = str(section.metadata.get("part", "body"))
            unit = Unit(section.start, section.end, tuple(section.heading_path[:1]), section.page, True, part,
                        page_end=section.metadata.get("page_end"))
            if groups and groups[-1].label == part:
                groups[-1] = Group(groups[-1].path, groups[-1].units + (unit,), part)
            else:
                groups.append(Group(unit.path, (unit,), part))
        return groups

    def _drop(self, group: Group) -> Optional[str]:
        kind = group.label.rsplit("/", 1)[-1]
        if not self.include_headers and kind == "headers":
            return group.label
        # "attachment:a.pdf", "attachment:fwd.eml/body", a mailbox's "message-2/attachment:a.pdf"
        if not self.include_attachments and any(p.startswith("attachment:") for p in group.label.split("/")):
            return group.label
        return None

    @staticmethod
    def _metadata(group: Group) -> Dict[str, Any]:
        return dict(subtree_metadata(group), template="email", part=group.label)

    def chunk_with_drops(self, doc: ParsedDocument) -> Tuple[List[Chunk], Drops]:
        """Return one chunk per kept part and the parts left out."""
        return build_chunks(doc, self._groups(doc), self._metadata, self._drop)

    def chunk_document(self, doc: ParsedDocument) -> List[Chunk]:
        """Return one chunk per kept part."""
        return self.chunk_with_drops(doc)[0]
