"""Parent–child retrieval: small chunks to match a query, their larger parents to answer it."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from beam_chunking.errors import ConfigError
from beam_chunking.strategies.base import Chunker, Outcome, add_counts
from beam_chunking.strategies.sentence import SentenceChunker
from beam_chunking.strategies.token import TokenChunker
from beam_chunking.types import Chunk, ParsedDocument


def _default_parent() -> Chunker:
    return TokenChunker(max_chunk_size=1024, overlap=0)


def _default_child() -> Chunker:
    return SentenceChunker(max_chunk_size=128, overlap=0)


def within(doc: ParsedDocument, start: int, end: int) -> ParsedDocument:
    """``doc`` restricted to ``[start, end)``: its sections clipped to the span, same text.

    Offsets stay those of the whole document, so chunks of the view are chunks of ``doc``.
    """
    sections = tuple(dataclasses.replace(s, start=max(s.start, start), end=min(s.end, end))
                     for s in doc.sections if s.start < end and s.end > start)
    return dataclasses.replace(doc, sections=sections, dropped=())


@dataclass(frozen=True)
class ParentChildChunker(Chunker):
    """Child chunks cut inside parent chunks: index the children, answer with the parents.

    ``parent`` cuts the document; ``child`` then cuts each parent's span (the sections of the
    document clipped to it). Every child carries ``parent_id``, the chunk id of its parent.
    The pipeline writes the children to the chunks table and the parents to the ``parents``
    table (same columns), so a retriever that matched a child gets its parent with one join
    on ``parents.chunk_id = chunks.parent_id``. Children of overlapping parents that start
    at the same character are told apart by their ordinal.

    Any strategy can be either side; a non-LLM, non-embedding parent is the cheap choice
    (the parent pass runs once more over the whole document).

    Args:
        parent: Cuts the parents. Default ``token`` with 1024 tokens and no overlap.
        child: Cuts each parent into children. Default ``sentence`` with 128 tokens and no
            overlap.

    Example:
        >>> from beam_chunking.strategies.base import text_document
        >>> doc = text_document("One sentence. Another one.\n\nA second paragraph here.")
        >>> children, parents = ParentChildChunker().chunk_with_parents(doc)
        >>> all(c.metadata["parent_id"] in {p.id for p in parents} for c in children)
        True
    """

    name = "parent_child"
    unit_template = "unbounded"
    parent: Chunker = field(default_factory=_default_parent)
    child: Chunker = field(default_factory=_default_child)

    def __post_init__(self) -> None:
        for side in ("parent", "child"):
            if not isinstance(getattr(self, side), Chunker):
                raise ConfigError(f"ParentChildChunker.{side} must be a strategy, got {getattr(self, side)!r}",
                                  field=side)

    @property
    def unit(self) -> str:
        """Both sides' units: ``"parents: ...; children: ..."``."""
        return f"parents: {self.parent.unit}; children: {self.child.unit}"

    def setup(self) -> None:
        """Set up both sides."""
        self.parent.setup()
        self.child.setup()

    def chunk_document(self, doc: ParsedDocument) -> List[Chunk]:
        """Return the children (the chunks to index) in document order."""
        return self.chunk_with_parents(doc)[0]

    def chunk_with_parents(self, doc: ParsedDocument) -> Tuple[List[Chunk], List[Chunk]]:
        """Return ``(children, parents)``; each child's ``parent_id`` names one of the parents."""
        outcome = self.chunk_outcome(doc)
        return outcome.chunks, list(outcome.parents)

    def chunk_outcome(self, doc: ParsedDocument) -> Outcome:
        """The children as chunks, the parents as parents, both sides' drops and counters."""
        top = self.parent.chunk_outcome(doc)
        parents = top.chunks
        dropped, counts = tuple(top.dropped), dict(top.counts)
        children: List[Chunk] = []
        seen: Dict[int, int] = {}
        for parent in parents:
            inner = self.child.chunk_outcome(within(doc, parent.start, parent.end))
            dropped += tuple(inner.dropped)
            counts = add_counts(counts, inner.counts)
            for child in inner.chunks:
                ordinal: Optional[int] = seen.get(child.start)
                seen[child.start] = 0 if ordinal is None else ordinal + 1
                meta = {**child.metadata, "parent_id": parent.id}
                children.append(dataclasses.replace(child, index=len(children), metadata=meta,
                                                    ordinal=max(child.ordinal, seen[child.start])))
        return Outcome(children, dropped, tuple(parents), counts)
