"""SemanticRefiner: oversized chunks of any strategy sub-split at sentence boundaries."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, List, Optional, Tuple

import numpy as np

from beam_chunking.embeddings.base import embed_batches
from beam_chunking.embeddings.resolve import resolve_embedder
from beam_chunking.errors import ConfigError
from beam_chunking.strategies.base import UNDERSIZED, Chunker, Drops, Outcome, make_chunk, require_positive
from beam_chunking.strategies.semantic import pack_sentences
from beam_chunking.text.fragments import effective_minimum, merge_undersized
from beam_chunking.text.sentences import sentence_spans
from beam_chunking.types import Chunk, ParsedDocument


@dataclass(frozen=True)
class SemanticRefiner:
    """Sub-split chunks longer than ``max_chunk_size`` characters at sentence boundaries.

    Use it after a strategy that does not bound size (``hierarchical`` and the templates that
    build on it, ``email``) or to tighten any other. With an embedder, an oversized chunk is
    cut at its lowest-similarity sentence boundary, recursively, until every piece fits;
    only boundaries that leave at least ``min_chunk_size`` characters on both sides are
    candidates, and among equally similar ones the most balanced wins (repetitive text is
    halved, not peeled a sentence at a time); when no boundary qualifies, sentences are
    packed greedily. Without an embedder (``embedder=None``) sentences are packed greedily.
    A sentence longer than the ceiling is cut by characters. A piece still under
    ``min_chunk_size`` joins a neighbouring piece of the same parent when the joined piece
    fits, and is otherwise kept with ``undersized=True``. Every piece keeps the
    parent's metadata, including its ``page``/``page_end`` range (the narrowest range the
    re-split can vouch for), plus ``refined_from`` (the parent's chunk id). Chunks that fit,
    and table pieces with a repeated header, pass through unchanged.

    Args:
        max_chunk_size: Ceiling per piece, in characters. Default 1500.
        embedder: ``None`` (default: sentence packing), ``"minilm"``, a mapping of
            ``OnnxEmbedder`` options, or an embedder.
        batch_size: Sentences per embedder call. Default 32.
        min_chunk_size: Smallest piece, in characters; at most a quarter of
            ``max_chunk_size`` applies; 0 turns it off. Default 100.
    """

    max_chunk_size: int = 1500
    embedder: Any = None
    batch_size: int = 32
    min_chunk_size: int = 100

    def __post_init__(self) -> None:
        require_positive("SemanticRefiner", "max_chunk_size", self.max_chunk_size)
        require_positive("SemanticRefiner", "batch_size", self.batch_size)
        require_positive("SemanticRefiner", "min_chunk_size", self.min_chunk_size, minimum=0)
        model = None if self.embedder is None else resolve_embedder(self.embedder, "SemanticRefiner")
        object.__setattr__(self, "_model", model)

    def setup(self) -> None:
        """Load the embedding model, if any."""
        if self._model is not None and hasattr(self._model, "setup"):
            self._model.setup()

    def _cuts(self, text: str, spans: List[Tuple[int, int]]) -> List[List[Tuple[int, int]]]:
        size = self.max_chunk_size
        if self._model is None or len(spans) < 2:
            return pack_sentences(text, spans, size)
        texts = [text[a:b] for a, b in spans]
        vecs = embed_batches(self._model, texts, self.batch_size)
        sims = np.einsum("ij,ij->i", vecs[:-1], vecs[1:])
        out: List[List[Tuple[int, int]]] = []
        minimum = effective_minimum(self.min_chunk_size, size)

        # Sentence ranges [a, b) still to split, the next one last: an explicit stack, since
        # a long chunk can need more levels of splitting than Python's recursion allows.
        todo = [(0, len(spans))]
        while todo:
            a, b = todo.pop()
            first, last = spans[a][0], spans[b - 1][1]
            if last - first <= size or b - a == 1:
                out.append(spans[a:b])
                continue
            # Cut after sentence k where the topic shifts most, never leaving a side under
            # the minimum; ties (identical sentences) go to the most balanced cut.
            cands = [k for k in range(a, b - 1) if spans[k][1] - first >= minimum and last - spans[k + 1][0] >= minimum]
            if not cands:
                out.extend(pack_sentences(text, spans[a:b], size))
                continue
            k = min(cands, key=lambda k: (round(float(sims[k]), 6),
                                          abs((spans[k][1] - first) - (last - spans[k + 1][0])), k))
            todo.append((k + 1, b))
            todo.append((a, k + 1))
        return out

    def refine(self, doc: ParsedDocument, chunks: List[Chunk]) -> List[Chunk]:
        """Return the chunks with every oversized one replaced by its pieces, renumbered."""
        out: List[Chunk] = []
        text = doc.text
        for chunk in chunks:
            repeated = chunk.metadata.get("table_header_repeated")
            if len(chunk.text) <= self.max_chunk_size or repeated:
                out.append(dataclasses.replace(chunk, index=len(out)))
                continue
            meta = dict(chunk.metadata, refined_from=chunk.id)
            meta.pop("embedding_model", None)  # the parent's vector does not describe a piece
            # Pieces keep the parent's document id, also when a caller refines bare-text chunks.
            source = doc if chunk.document_id == doc.id else dataclasses.replace(doc, id=chunk.document_id)
            pieces: List[Tuple[int, int]] = []
            for group in self._cuts(text, sentence_spans(text, chunk.start, chunk.end)):
                s, e = group[0][0], group[-1][1]
                pieces.extend([(s, e)] if e - s <= self.max_chunk_size else [
                    (p[0][0], p[-1][1]) for p in pack_sentences(text, group, self.max_chunk_size)])
            minimum = effective_minimum(self.min_chunk_size, self.max_chunk_size)
            flagged = dict(meta, **{UNDERSIZED: True})
            for a, b, small in merge_undersized(text, pieces, minimum, self.max_chunk_size, lambda s, e: e - s):
                out.append(make_chunk(source, index=len(out), start=a, end=b, token_count=None,
                                      metadata=flagged if small else meta))
        return out


@dataclass(frozen=True)
class Refined(Chunker):
    """A strategy followed by a refiner: ``Refined(get("hierarchical"), SemanticRefiner(800))``.

    Args:
        base: The strategy that shapes the chunks.
        refiner: The pass applied to each document's chunks.
    """

    base: Optional[Chunker] = None
    refiner: Optional[SemanticRefiner] = None

    def __post_init__(self) -> None:
        if not isinstance(self.base, Chunker) or self.refiner is None or not hasattr(self.refiner, "refine"):
            raise ConfigError("Refined needs a strategy (base) and a refiner with refine(doc, chunks)", field="base")

    @property
    def name(self) -> str:  # type: ignore[override]
        """The base strategy's name (the refinement shows in the fingerprint)."""
        return self.base.name

    def resolve(self, doc: ParsedDocument) -> "Refined":
        """This refinement around the strategy that chunks ``doc`` (a router's route)."""
        base = self.base.resolve(doc)
        return self if base is self.base else Refined(base, self.refiner)

    def setup(self) -> None:
        """Set up the strategy and the refiner."""
        for part in (self.base, self.refiner):
            if hasattr(part, "setup"):
                part.setup()

    def chunk_outcome(self, doc: ParsedDocument) -> Outcome:
        """The base strategy's outcome with its chunks refined (parents, drops and counters kept)."""
        outcome = self.base.chunk_outcome(doc)
        return dataclasses.replace(outcome, chunks=self.refiner.refine(doc, outcome.chunks))

    def chunk_with_drops(self, doc: ParsedDocument) -> Tuple[List[Chunk], Drops]:
        """Chunk with the base strategy, then refine; the base strategy's drops are kept."""
        outcome = self.chunk_outcome(doc)
        return outcome.chunks, outcome.dropped

    def chunk_document(self, doc: ParsedDocument) -> List[Chunk]:
        """Chunk with the base strategy, then refine."""
        return self.chunk_with_drops(doc)[0]
