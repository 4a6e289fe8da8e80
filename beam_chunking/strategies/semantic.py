"""Semantic chunking: sentences grouped where meaning holds, cut where similarity drops."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from beam_chunking.embeddings.base import embed_batches, embedder_label, normalize
from beam_chunking.errors import ConfigError
from beam_chunking.strategies.base import (UNDERSIZED, Chunker, UsesEmbedder, join_soft_sections, make_chunk,
                                           require_positive, section_metadata)
from beam_chunking.strategies.recursive import RecursiveChunker
from beam_chunking.text.fragments import merge_undersized
from beam_chunking.text.packing import greedy_groups
from beam_chunking.text.sentences import sentence_spans
from beam_chunking.text.spans import trim_span
from beam_chunking.types import Chunk, ParsedDocument

Span = Tuple[int, int]


class SentenceVectors:
    """Each unique sentence of a document embedded once, in batches of ``batch_size``."""

    def __init__(self, embedder, batch_size: int):
        self.embedder = embedder
        self.batch_size = batch_size
        self.index: Dict[str, int] = {}
        self.vectors: Optional[np.ndarray] = None

    def add(self, texts: Sequence[str]) -> None:
        for t in texts:
            self.index.setdefault(t, len(self.index))

    def compute(self) -> None:
        unique = list(self.index)
        self.vectors = embed_batches(self.embedder, unique, self.batch_size)

    def of(self, texts: Sequence[str]) -> np.ndarray:
        return self.vectors[[self.index[t] for t in texts]]


def pack_sentences(text: str, spans: Sequence[Span], size: int) -> List[List[Span]]:
    """Pack sentences greedily into groups that span at most ``size`` characters.

    A sentence longer than ``size`` is cut on its own by the recursive splitter, each piece
    a group of one span.

    Args:
        text: The document text.
        spans: Sentence spans in order (see :func:`beam_chunking.text.sentences.sentence_spans`).
        size: Ceiling per group, in characters (from the first start to the last end).
    """
    out: List[List[Span]] = []
    for a, b in greedy_groups(len(spans), lambda a, b: spans[b - 1][1] - spans[a][0] <= size):
        s, e = spans[a][0], spans[b - 1][1]
        if e - s > size:  # a single sentence over the ceiling
            pieces = RecursiveChunker(max_chunk_size=size, overlap=0).section_spans(text, s, e)
            out.extend([[(x, y)] for x, y, _ in pieces])
        else:
            out.append(list(spans[a:b]))
    return out


def breakpoints(sims: np.ndarray, percentile: Optional[float], threshold: Optional[float]) -> List[int]:
    """Indices ``i`` where a cut goes between sentence ``i`` and ``i + 1``."""
    if len(sims) == 0:
        return []
    if threshold is not None:
        return [int(i) for i in np.flatnonzero(sims < threshold)]
    cut = float(np.quantile(sims, percentile))
    # Strictly below: identical sentences (zero variance) give no breakpoint at all.
    return [int(i) for i in np.flatnonzero(sims < cut)]


@dataclass(frozen=True)
class SemanticChunker(UsesEmbedder, Chunker):
    """Sentences embedded, neighbours compared, cut where similarity drops.

    Each section's sentences are embedded (each unique sentence once per document, in batches
    of ``batch_size``: at most ``ceil(unique sentences / batch_size)`` embedder calls) and the
    cosine similarity of neighbours computed. Breakpoints are where it falls below:

    - the ``breakpoint_percentile`` of the section's similarities (default mode). **The
      percentile is on a 0-1 scale: 0.25 is the 25th percentile** (other libraries use 0-100;
      a value above 1 is rejected with that hint); or
    - ``similarity_threshold`` when set (e.g. 0.5).

    Headings, pages and slides are hard boundaries. In percentile mode groups shorter
    than ``min_chunk_size`` characters merge into their more similar neighbour, and groups over
    ``max_chunk_size`` are split at sentence boundaries (a longer sentence by characters):
    ``max_chunk_size`` is a hard ceiling in both modes. Then, in both modes, a chunk still
    under ``min_chunk_size`` (the tail of a split group, a lone table-cell end) joins its
    neighbour in the section when the joined chunk fits, else a chunk of the neighbouring
    section when both have the same heading path and page and nothing was left out between
    them (an HTML caption and its table), and is otherwise kept with ``undersized=True``.
    Sizes are in characters.

    ``document_level=True`` embeds all sections of a document in one call and merges adjacent
    sections whose similarity reaches ``similarity_threshold`` (0.5 when unset) while they fit
    ``max_chunk_size``; merged chunks report ``page``/``page_end`` as min/max. Oversized
    sections go through the sentence path.

    With ``reuse_embeddings`` (default) every chunk gets an embedding, with ``embedding_model``
    metadata, so an embedding stage with the same model does not embed it again: a chunk of
    whole sentences gets the normalised mean of its sentence vectors; a piece of a sentence
    longer than ``max_chunk_size`` (cut by characters, so no sentence vector describes it)
    is embedded on its own, in one extra batched pass per document.

    Args:
        embedder: ``"minilm"`` (default, the ``minilm`` extra), a mapping of ``OnnxEmbedder``
            options, or any object with ``embed(texts)``.
        breakpoint_percentile: 0-1. Default 0.25.
        similarity_threshold: Cosine similarity below which to cut; ``None`` (default) uses
            the percentile.
        min_chunk_size: Smallest chunk kept alone, in characters; smaller groups merge
            (0 turns it off; it may not exceed ``max_chunk_size``). Default 100.
        max_chunk_size: Characters; hard ceiling. Default 1500.
        batch_size: Sentences per embedder call. Default 32.
        document_level: Merge whole sections by similarity first. Default ``False``.
        reuse_embeddings: Attach sentence-mean embeddings to chunks. Default ``True``.
    """

    name = "semantic"
    embedder: Any = "minilm"
    breakpoint_percentile: float = 0.25
    similarity_threshold: Optional[float] = None
    min_chunk_size: int = 100
    max_chunk_size: int = 1500
    batch_size: int = 32
    document_level: bool = False
    reuse_embeddings: bool = True

    def __post_init__(self) -> None:
        owner = "SemanticChunker"
        p = self.breakpoint_percentile
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
            hint = f" (a 0-1 scale: did you mean {p / 100:g}?)" if isinstance(p, (int, float)) and 1 < p <= 100 else ""
            raise ConfigError(f"{owner}.breakpoint_percentile={p!r} must be between 0 and 1{hint}",
                              field="breakpoint_percentile")
        t = self.similarity_threshold
        if t is not None and (isinstance(t, bool) or not isinstance(t, (int, float)) or not -1 <= t <= 1):
            raise ConfigError(f"{owner}.similarity_threshold={t!r} must be a cosine similarity in [-1, 1]",
                              field="similarity_threshold")
        require_positive(owner, "min_chunk_size", self.min_chunk_size, minimum=0)
        require_positive(owner, "max_chunk_size", self.max_chunk_size)
        if self.min_chunk_size > self.max_chunk_size:
            raise ConfigError(f"{owner}.min_chunk_size={self.min_chunk_size} must not exceed "
                              f"max_chunk_size={self.max_chunk_size}", field="min_chunk_size")
        require_positive(owner, "batch_size", self.batch_size)
        self._resolve_embedder(owner)



    # -- grouping ---------------------------------------------------------------------
    def _groups(self, text: str, spans: List[Span], sims: np.ndarray) -> List[List[Span]]:
        cuts = breakpoints(sims, self.breakpoint_percentile, self.similarity_threshold)
        bounds = [0] + [c + 1 for c in cuts] + [len(spans)]
        groups = [(a, b) for a, b in zip(bounds, bounds[1:]) if b > a]
        if self.similarity_threshold is None:
            groups = self._merge_small(spans, sims, groups)
        out: List[List[Span]] = []
        for a, b in groups:
            out.extend(pack_sentences(text, spans[a:b], self.max_chunk_size))
        return out

    def _join_small(self, text: str, groups: List[List[Span]]) -> List[Tuple[List[Span], bool]]:
        """Groups after the minimum-size pass, each with its ``undersized`` flag."""
        bounds = [(g[0][0], g[-1][1]) for g in groups]
        merged = merge_undersized(text, bounds, self.min_chunk_size, self.max_chunk_size, lambda s, e: e - s)
        out: List[Tuple[List[Span], bool]] = []
        k = 0
        for s, e, small in merged:
            joined: List[Span] = []
            while k < len(groups) and groups[k][-1][1] <= e:  # the groups the joined span covers
                joined.extend(groups[k])
                k += 1
            out.append((joined, small))
        return out

    def _merge_small(self, spans: List[Span], sims: np.ndarray, groups: List[Span]) -> List[Span]:
        def size(g: Span) -> int:
            return spans[g[1] - 1][1] - spans[g[0]][0]

        changed = True
        while changed and len(groups) > 1:
            changed = False
            for k, g in enumerate(groups):
                if size(g) >= self.min_chunk_size:
                    continue
                options = []
                if k > 0:
                    options.append((float(sims[g[0] - 1]), k - 1))
                if k + 1 < len(groups):
                    options.append((float(sims[g[1] - 1]), k + 1))
                for _, j in sorted(options, reverse=True):
                    lo, hi = min(k, j), max(k, j)
                    merged = (groups[lo][0], groups[hi][1])
                    if size(merged) <= self.max_chunk_size:
                        groups[lo:hi + 1] = [merged]
                        changed = True
                        break
                if changed:
                    break
        return groups

    # -- documents --------------------------------------------------------------------
    def chunk_document(self, doc: ParsedDocument) -> List[Chunk]:
        """Chunk ``doc`` (see the class docstring)."""
        text = doc.text
        if self.document_level:
            return self._document_level(doc)
        per_section = [(section, sentence_spans(text, section.start, section.end)) for section in doc.sections]
        vectors = SentenceVectors(self._model, self.batch_size)
        for _, spans in per_section:
            vectors.add([text[s:e] for s, e in spans])
        vectors.compute()
        chunks: List[Chunk] = []
        owners: List[int] = []  # the section index of each chunk
        for k, (section, spans) in enumerate(per_section):
            self._emit(doc, section_metadata(doc, section), spans, vectors, chunks)
            owners.extend([k] * (len(chunks) - len(owners)))
        if any(c.metadata.get(UNDERSIZED) for c in chunks):
            # A joined chunk has no vector yet: _fill_vectors embeds it.
            chunks = join_soft_sections(doc, chunks, owners, self.min_chunk_size, self.max_chunk_size,
                                        lambda s, e: (e - s, None))
        return self._fill_vectors(chunks)

    def _fill_vectors(self, chunks: List[Chunk]) -> List[Chunk]:
        """Embed the chunks no sentence vector describes (pieces of over-long sentences)."""
        if not self.reuse_embeddings:
            return chunks
        missing = [k for k, c in enumerate(chunks) if c.embedding is None]
        if not missing:
            return chunks
        vecs = normalize(embed_batches(self._model, [chunks[k].text for k in missing], self.batch_size))
        name = embedder_label(self._model)
        out = list(chunks)
        for k, vec in zip(missing, vecs):
            out[k] = dataclasses.replace(chunks[k], embedding=vec.tolist(),
                                         metadata=dict(chunks[k].metadata, embedding_model=name))
        return out

    def _emit(self, doc: ParsedDocument, meta: Dict[str, Any], spans: List[Span], vectors: SentenceVectors,
              chunks: List[Chunk]) -> None:
        if not spans:
            return
        text = doc.text
        vecs = vectors.of([text[s:e] for s, e in spans])
        sims = np.einsum("ij,ij->i", vecs[:-1], vecs[1:]) if len(spans) > 1 else np.zeros(0)
        whole = {s: k for k, s in enumerate(spans)}
        for group, small in self._join_small(text, self._groups(text, spans, sims)):
            s, e = group[0][0], group[-1][1]
            embedding = None
            extra = dict(meta, **{UNDERSIZED: True}) if small else meta
            if self.reuse_embeddings and all(g in whole for g in group):
                idx = [whole[g] for g in group]
                embedding = normalize(vecs[idx].mean(axis=0, keepdims=True))[0].tolist()
                extra = dict(extra, embedding_model=embedder_label(self._model))
            chunks.append(make_chunk(doc, index=len(chunks), start=s, end=e, token_count=None, metadata=extra,
                                     embedding=embedding))

    def _document_level(self, doc: ParsedDocument) -> List[Chunk]:
        text = doc.text
        sections = [s for s in doc.sections if text[s.start:s.end].strip()]
        if not sections:
            return []
        section_vecs = self._model.embed([text[s.start:s.end] for s in sections])  # one call per document
        threshold = 0.5 if self.similarity_threshold is None else self.similarity_threshold

        def joins(a: int, b: int) -> bool:  # section b - 1 joins the run [a, b - 1)
            similar = float(section_vecs[b - 2] @ section_vecs[b - 1]) >= threshold
            return similar and sections[b - 1].end - sections[a].start <= self.max_chunk_size

        runs = [list(range(a, b)) for a, b in greedy_groups(len(sections), joins)]
        chunks: List[Chunk] = []
        vectors: Optional[SentenceVectors] = None
        for run in runs:
            first, last = sections[run[0]], sections[run[-1]]
            meta = section_metadata(doc, first)
            if last.end - first.start <= self.max_chunk_size:
                pages = [sections[k].page for k in run if sections[k].page is not None]
                if pages:
                    meta["page"], meta["page_end"] = min(pages), max(pages)
                s, e = trim_span(text, first.start, last.end)
                vec = normalize(section_vecs[run].mean(axis=0, keepdims=True))[0].tolist()
                meta = dict(meta, embedding_model=embedder_label(self._model))
                chunks.append(make_chunk(doc, index=len(chunks), start=s, end=e, token_count=None, metadata=meta,
                                         embedding=vec if self.reuse_embeddings else None))
                continue
            if vectors is None:  # oversized sections: the sentence path, sentences embedded once
                vectors = SentenceVectors(self._model, self.batch_size)
                for r in runs:
                    big = sections[r[0]]
                    if len(r) == 1 and big.end - big.start > self.max_chunk_size:
                        vectors.add([text[a:b] for a, b in sentence_spans(text, big.start, big.end)])
                vectors.compute()
            self._emit(doc, meta, sentence_spans(text, first.start, first.end), vectors, chunks)
        return self._fill_vectors(chunks)
