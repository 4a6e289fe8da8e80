"""Cluster-semantic chunking: small pieces embedded once, chunk boundaries by dynamic programming.

In the spirit of Chroma's ClusterSemanticChunker (Smith & Troynikov, "Evaluating Chunking
Strategies for Retrieval", 2024). Each section is cut into pieces (sentences; a sentence over
``piece_size`` tokens, a quarter of ``max_chunk_size`` by default, is cut at line breaks,
then into token windows), each distinct piece of the document is embedded once, and each
section's pieces are partitioned into consecutive chunks that maximise the total
within-chunk similarity

    sum over chunks C, over pairs a < b in C, of (cos(a, b) - mu - penalty(a, b))

where ``mu`` is the mean cosine similarity of all pairs of pieces in the document: pieces
more alike than the document's average pull together, less alike push apart.
``penalty(a, b)`` is ``paragraph_penalty`` when a line break lies between the two pieces
and 0 otherwise: the writer's own paragraph breaks count as evidence of a change of topic,
so among cuts of similar semantic cost the one at a paragraph break wins. The partition is
exact (dynamic programming over every chunk that fits), so the cut lands where similarity
falls, not where a greedy packer ran out of room; a chunk is as long as its topic, up to
the ceiling, not as long as the ceiling.

Every candidate chunk is measured on its own text, so ``max_chunk_size`` is a hard ceiling;
a chunk under ``min_chunk_size`` is avoided whenever any partition allows it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from beam_chunking.embeddings.base import embed_batches
from beam_chunking.errors import ConfigError
from beam_chunking.sizing import Sizer
from beam_chunking.strategies.base import Chunker, UsesEmbedder, make_chunks, require_positive, section_metadata
from beam_chunking.strategies.token import MIN_WINDOW_TOKENS, token_sizer
from beam_chunking.text.packing import split_levels
from beam_chunking.text.sentences import sentence_spans
from beam_chunking.text.spans import line_starts
from beam_chunking.types import Chunk, ParsedDocument

#: Metadata key set on a chunk that stays under ``min_chunk_size`` because nothing it could
#: join has room (a short section, or neighbours already at the ceiling); the same key as
#: ``StructuralChunker``'s.
UNDERSIZED = "undersized"

Piece = Tuple[int, int]

#: Most pieces one chunk may hold. Normal prose never comes near it (a 400-token chunk of
#: 25-token sentences has 16); it bounds the work and memory of the partition, which grow
#: with pieces x pieces per chunk, on text cut into tiny pieces ("1. 2. 3. ..." lists).
MAX_PIECES = 128


def document_mean_similarity(vectors: np.ndarray) -> float:
    """Mean cosine similarity over all pairs ``a != b`` of unit ``vectors``, in O(n d).

    The sum of all pairwise dot products is ``|sum of vectors|^2``; taking away the ``n``
    self-products leaves the off-diagonal sum, so no ``n x n`` matrix is built.

    Returns:
        The mean, or 0.0 with fewer than two vectors.
    """
    n = len(vectors)
    if n < 2:
        return 0.0
    v = np.asarray(vectors, dtype=np.float64)
    total = float(np.square(v.sum(axis=0)).sum()) - float(np.square(v).sum())
    return total / (n * (n - 1))


def best_partition(sims: np.ndarray, fits: Sequence[Sequence[bool]], small: Sequence[Sequence[bool]]
                   ) -> List[Tuple[int, int]]:
    """The partition of pieces ``[0, n)`` into consecutive chunks with the highest reward.

    Chunks are compared first on how many are under the minimum (fewer wins), then on the
    summed reward of their pairs; ties go to the earlier, longer last chunk, so the result
    is deterministic.

    Args:
        sims: ``[n, m]`` banded rewards: ``sims[i, d]`` is the reward of pieces ``i`` and
            ``i + d + 1`` together (``cos - mu - penalty``).
        fits: ``fits[j][k]``: whether pieces ``[j - k, j]`` fit the ceiling together, for
            the ``k`` that were measured (``fits[j][0]`` must be true: one piece fits).
        small: ``small[j][k]``: whether that chunk is under the minimum size.

    Returns:
        ``(first, last)`` piece indices (inclusive) of each chunk, in order.
    """
    n = len(fits)
    # Cumulative band: row_sum[i, d] = rewards of piece i with pieces i+1 .. i+d.
    m = sims.shape[1] if sims.ndim == 2 else 0
    row_sum = np.zeros((n, m + 1))
    if m:
        np.cumsum(sims, axis=1, out=row_sum[:, 1:])
    rows = row_sum.tolist()
    best: List[Tuple[int, float]] = [(0, 0.0)] * (n + 1)  # best[j]: (undersized, -reward) of [0, j)
    back = [0] * (n + 1)
    for j in range(n):
        reward = 0.0
        choice, score = -1, None
        for k, ok in enumerate(fits[j]):
            i = j - k
            if k:  # reward of [i, j] from [i + 1, j]: piece i with pieces i+1 .. j
                reward += rows[i][k]
            if not ok:  # over the ceiling (a longer span may still fit: counts are not monotone)
                continue
            prev = best[i]
            cand = (prev[0] + (1 if small[j][k] else 0), prev[1] - reward)
            if score is None or cand <= score:
                choice, score = i, cand
        best[j + 1] = score
        back[j + 1] = choice
    out: List[Tuple[int, int]] = []
    j = n
    while j > 0:
        i = back[j]
        out.append((i, j - 1))
        j = i
    return out[::-1]


@dataclass(frozen=True)
class ClusterSemanticChunker(UsesEmbedder, Chunker):
    """Pieces embedded once, chunks chosen by dynamic programming to maximise within-chunk similarity.

    Each section is cut into pieces: sentences, and a sentence over ``piece_size`` tokens (a
    quarter of ``max_chunk_size`` by default) is cut at its line breaks and then into token
    windows of at most that. Each distinct piece of a document is embedded once
    (``ceil(distinct pieces / batch_size)`` embedder calls at most). Within each section the
    pieces are partitioned into consecutive chunks that maximise the sum, over the pairs of
    pieces in a chunk, of their cosine similarity minus the document's mean pairwise
    similarity, minus ``paragraph_penalty`` for a pair with a line break between them (exact
    dynamic programming; at most 128 pieces per chunk). Chunks follow their topic, so they
    are often well under the ceiling.

    Sections (headings, pages, slides) are hard boundaries. ``max_chunk_size`` is a hard
    ceiling on each chunk's own token count; a chunk under ``min_chunk_size`` tokens is
    chosen only when no partition avoids it, and is then marked ``undersized=True``.
    Chunks are exact spans from the first piece's start to the last piece's end; they carry
    their ``token_count``. No embedding is attached: a chunk's own embedding is not the mean
    of its pieces', so the embedding stage computes it.

    Args:
        embedder: ``"minilm"`` (default, the ``minilm`` extra), a mapping of ``OnnxEmbedder``
            options, or any object with ``embed(texts)``.
        max_chunk_size: Tokens per chunk, a hard ceiling counted on the chunk's own text; at
            least 4. Default 400.
        paragraph_penalty: Cosine similarity taken off every pair of pieces with a line break
            between them, 0-2; 0 ignores paragraphs. Default 0.2.
        min_chunk_size: Tokens; smaller chunks are avoided where the ceiling allows; at most a
            quarter of ``max_chunk_size`` applies (as in ``StructuralChunker``); 0 turns it
            off. Default 50.
        piece_size: Tokens; longer sentences are cut into pieces of at most this. Default
            ``None``: a quarter of ``max_chunk_size`` (at least 4), so that every chunk has
            room for several pieces and the partition has cuts to choose from.
        tokenizer: A tiktoken encoding or model name (``"cl100k_base"``, bundled);
            ``"embedder"``: the job's embedding model's own tokenizer (``embed:``), special
            tokens counted as the model counts them; or ``"hf:PATH"`` to a ``tokenizer.json``.
            Default ``"cl100k_base"``.
        batch_size: Pieces per embedder call. Default 32.

    Example:
        >>> chunker = ClusterSemanticChunker(max_chunk_size=200)  # the packaged MiniLM  # doctest: +SKIP
        >>> chunks = chunker.chunk(open("report.txt", encoding="utf-8").read())  # doctest: +SKIP
        >>> max(c.token_count for c in chunks) <= 200  # doctest: +SKIP
        True
    """

    name = "cluster_semantic"
    unit_template = "{tokenizer} tokens"
    embedder: Any = "minilm"
    max_chunk_size: int = 400
    paragraph_penalty: float = 0.2
    min_chunk_size: int = 50
    piece_size: Optional[int] = None
    tokenizer: str = "cl100k_base"
    batch_size: int = 32

    def __post_init__(self) -> None:
        owner = "ClusterSemanticChunker"
        require_positive(owner, "max_chunk_size", self.max_chunk_size, minimum=MIN_WINDOW_TOKENS)
        require_positive(owner, "min_chunk_size", self.min_chunk_size, minimum=0)
        if self.piece_size is not None:
            require_positive(owner, "piece_size", self.piece_size, minimum=MIN_WINDOW_TOKENS)
        require_positive(owner, "batch_size", self.batch_size)
        p = self.paragraph_penalty
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 2:
            raise ConfigError(f"{owner}.paragraph_penalty={p!r} must be a number between 0 and 2 (a cosine "
                              "similarity)", field="paragraph_penalty")
        object.__setattr__(self, "_sizer", token_sizer(owner, self.tokenizer, self.max_chunk_size))
        self._resolve_embedder(owner)

    @property
    def sizer(self) -> Sizer:
        """The tokenizer this strategy counts with (resolved once, at construction)."""
        return self._sizer

    @property
    def piece_budget(self) -> int:
        """Most tokens per piece: ``piece_size``, or a quarter of ``max_chunk_size``; never above the ceiling."""
        size = max(MIN_WINDOW_TOKENS, self.max_chunk_size // 4) if self.piece_size is None else self.piece_size
        return min(size, self.max_chunk_size)

    @property
    def floor(self) -> int:
        """The minimum that applies, in tokens: ``min_chunk_size``, at most ``max_chunk_size // 4``."""
        return min(self.min_chunk_size, self.max_chunk_size // 4)



    # -- pieces -----------------------------------------------------------------------
    def pieces(self, text: str, start: int, end: int) -> Tuple[List[Piece], Any]:
        """The pieces of ``text[start:end]`` and the section's token index.

        Returns:
            Trimmed, non-empty ``(start, end)`` spans in order, each at most ``piece_size``
            (and ``max_chunk_size``) tokens on its own; and the sizer's token index of the
            section (``None`` when it has no pieces).
        """
        sents = sentence_spans(text, start, end)
        if not sents:
            return [], None
        sizer = self._sizer
        tk = sizer.index(text, sents[0][0], sents[-1][1])
        budget = self.piece_budget
        out: List[Piece] = []
        for s, e in sents:
            if tk.count(text, s, e) <= budget:
                out.append((s, e))
                continue
            # A long "sentence" is often a list or a table: its lines are the natural pieces.
            lines = line_starts(text, s, e)

            def windows(x: int, y: int) -> List[Piece]:  # a line still too long: token windows
                return [(p, q) for p, q, _ in sizer.windows(text, x, y, budget, 0, tk)]

            for a, b, _ in split_levels(text, lines, [1] * (len(lines) - 1), budget,
                                        lambda x, y: tk.count(text, x, y), windows):
                out.append((a, b))
        return out, tk

    # -- partition --------------------------------------------------------------------
    def _spans(self, text: str, pieces: List[Piece], tk: Any, vecs: np.ndarray, mu: float
               ) -> List[Tuple[int, int, int, bool]]:
        """``(start, end, token_count, below_min)`` of the best partition of one section."""
        n = len(pieces)
        firsts = np.searchsorted(tk.coff, [s for s, _ in pieces], side="left").tolist() + [tk.n]
        counts: List[List[int]] = []
        fits: List[List[bool]] = []
        for j in range(n):
            row: List[int] = []
            for i in range(j, max(-1, j - MAX_PIECES), -1):
                # Slice counts grow with the span; past the ceiling plus a margin for the
                # re-tokenised edges a longer span almost never fits. Stopping only drops
                # candidates: every chunk that can be chosen was measured on its own text.
                if i < j and firsts[j + 1] - firsts[i] > self.max_chunk_size + 16:
                    break
                row.append(tk.count(text, pieces[i][0], pieces[j][1]))
            counts.append(row)
            fits.append([k == 0 or c <= self.max_chunk_size for k, c in enumerate(row)])
        width = max(len(r) for r in fits) - 1
        # Paragraph number of each piece: a line break in the gap before it starts a new one.
        para = np.cumsum([0] + ["\n" in text[pieces[k][1]:pieces[k + 1][0]] for k in range(n - 1)])
        band = np.zeros((n, width))
        for d in range(1, min(width, n - 1) + 1):
            penalty = self.paragraph_penalty * (para[d:] != para[:n - d])
            band[:n - d, d - 1] = np.einsum("ij,ij->i", vecs[:n - d], vecs[d:]) - mu - penalty
        floor = self.floor
        small = [[c < floor for c in row] for row in counts]
        out = []
        for i, j in best_partition(band, fits, small):
            c = counts[j][j - i]
            out.append((pieces[i][0], pieces[j][1], c, c < floor))
        return out

    # -- documents --------------------------------------------------------------------
    def chunk_document(self, doc: ParsedDocument) -> List[Chunk]:
        """Chunk ``doc`` (see the class docstring)."""
        text = doc.text
        per_section = [(section, *self.pieces(text, section.start, section.end)) for section in doc.sections]
        index: Dict[str, int] = {}
        for _, pieces, _ in per_section:
            for s, e in pieces:
                index.setdefault(text[s:e], len(index))
        if not index:
            return []
        unique = embed_batches(self._model, list(index), self.batch_size)
        # float64 keeps the sums of many small rewards from depending on summation order.
        unique = np.asarray(unique, dtype=np.float64)
        all_ids = [index[text[s:e]] for _, pieces, _ in per_section for s, e in pieces]
        mu = document_mean_similarity(unique[all_ids])
        chunks: List[Chunk] = []
        for section, pieces, tk in per_section:
            if not pieces:
                continue
            vecs = unique[[index[text[s:e]] for s, e in pieces]]
            spans = self._spans(text, pieces, tk, vecs, mu)
            meta = section_metadata(doc, section)
            flagged = dict(meta, **{UNDERSIZED: True})
            for s, e, c, low in spans:
                chunks.extend(make_chunks(doc, [(s, e, c)], flagged if low else meta, index=len(chunks)))
        return chunks
