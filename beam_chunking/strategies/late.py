"""Late chunking: embed the whole section token by token, then cut token windows."""
from __future__ import annotations

import logging
import unicodedata
from dataclasses import dataclass
from typing import Any, List

import numpy as np

from beam_chunking.embeddings.base import embedder_label, normalize
from beam_chunking.errors import ConfigError
from beam_chunking.strategies.base import (Chunker, UsesEmbedder, make_chunk, make_chunks, require_overlap,
                                           require_positive, section_metadata)
from beam_chunking.strategies.token import TokenChunker
from beam_chunking.text.fragments import effective_minimum
from beam_chunking.text.spans import skip_space, trim_end
from beam_chunking.types import Chunk, ParsedDocument

_LOG = logging.getLogger(__name__)


def _extend_end(text: str, end: int, limit: int) -> int:
    """Move ``end`` over characters no token claimed (a stripped combining mark, a control
    character) up to ``limit``, the next token's start: the last non-space one before it.

    Nothing in ``[end, limit)`` belongs to a token, so no later window would cover it."""
    return max(end, trim_end(text, end, limit))


def _extend_start(text: str, start: int, floor: int) -> int:
    """Move ``start`` back over unclaimed non-space characters down to ``floor``."""
    while start > floor and not text[start - 1].isspace() and unicodedata.category(text[start - 1])[0] in "MC":
        start -= 1
    return start


@dataclass(frozen=True)
class LateChunker(UsesEmbedder, Chunker):
    """Late chunking: whole-section token vectors, pooled per token window.

    Each section is embedded once by a token embedder (long sections are windowed and
    stitched by the embedder, so any length works), then cut into windows of
    ``max_chunk_size`` model tokens overlapping by ``overlap``. A chunk's span is the
    exact ``str`` span from its first token's start to its last token's end, and its
    embedding is the L2-normalised mean of its window's token vectors, so every chunk
    vector carries context from the whole section.

    HF tokenizers map offsets back into the original string even when
    normalisation changes its length, so CJK and NFD text are chunked, not refused; a
    combining mark or other character that no token claims is taken into the chunk next to
    it, so no text is lost. If the token embedder fails, the section is still chunked into
    the same-sized cl100k token windows without embeddings (``late_chunking_fallback=True``,
    a warning is logged) to be embedded downstream; ``KeyboardInterrupt`` and cancellation
    propagate.

    A section's last window with fewer than ``min_chunk_size`` tokens (possible when
    ``overlap`` is below it) starts earlier instead, so it holds ``min_chunk_size`` tokens:
    it then shares more than ``overlap`` tokens with the window before it, never more than
    the ceiling allows.

    Args:
        embedder: ``"minilm"`` (default), a mapping of ``OnnxEmbedder`` options, or an object
            with ``embed_tokens(text)``.
        max_chunk_size: Model tokens per chunk, overlap included. Default 256.
        overlap: Model tokens shared by neighbouring chunks. Default 32.
        min_chunk_size: Fewest model tokens in a section's last window when the section has
            more than one; at most a quarter of ``max_chunk_size`` applies; 0 turns it off.
            Default 16.
    """

    name = "late"
    unit_template = "embedding-model tokens"
    embedder: Any = "minilm"
    max_chunk_size: int = 256
    overlap: int = 32
    min_chunk_size: int = 16

    def __post_init__(self) -> None:
        require_positive("LateChunker", "max_chunk_size", self.max_chunk_size)
        require_overlap("LateChunker", "max_chunk_size", self.max_chunk_size, "overlap", self.overlap)
        require_positive("LateChunker", "min_chunk_size", self.min_chunk_size, minimum=0)
        self._resolve_embedder("LateChunker")
        if not hasattr(self._model, "embed_tokens"):
            # A hosted model (or any sentence embedder) returns one vector per text; late
            # chunking pools per-token vectors, which only a local model gives.
            name = embedder_label(self._model)
            raise ConfigError(f"LateChunker.embedder: late chunking pools token vectors and {name!r} gives one vector "
                              "per text (a hosted model cannot give token vectors); use minilm or an ONNX model",
                              field="embedder")

    def _fallback(self, doc: ParsedDocument, start: int, end: int, meta, chunks: List[Chunk], error: Exception) -> None:
        _LOG.warning("late chunking fell back to token windows for %s [%d:%d]: %s", doc.uri or doc.id, start, end, error)
        window = max(4, self.max_chunk_size)
        windows = TokenChunker(max_chunk_size=window, overlap=min(self.overlap, window - 1))
        fallback_meta = dict(meta, late_chunking_fallback=True)
        spans = windows.section_spans(doc.text, start, end)
        chunks.extend(make_chunks(doc, spans, metadata=fallback_meta, index=len(chunks)))

    def chunk_document(self, doc: ParsedDocument) -> List[Chunk]:
        """Chunk every section into token windows with late-pooled embeddings."""
        text = doc.text
        chunks: List[Chunk] = []
        name = embedder_label(self._model)  # pooling and prefixes included: vectors are reused only under it
        for section in doc.sections:
            meta = section_metadata(doc, section)
            piece = text[section.start:section.end]
            if not piece.strip():
                continue
            try:
                vectors, offsets = self._model.embed_tokens(piece)
                offsets = np.asarray(offsets, dtype=np.int64).reshape(-1, 2)
                if len(vectors) != len(offsets) or (len(offsets) and (offsets.min() < 0 or offsets.max() > len(piece))):
                    raise ValueError(f"token embedder returned {len(vectors)} vectors for {len(offsets)} offsets "
                                     f"within a {len(piece)}-character text")
            except Exception as exc:  # KeyboardInterrupt / SystemExit are not Exceptions: they propagate
                self._fallback(doc, section.start, section.end, meta, chunks, exc)
                continue
            keep = [k for k in range(len(offsets)) if offsets[k][1] > offsets[k][0]]
            n = len(keep)
            if n == 0:
                self._fallback(doc, section.start, section.end, meta, chunks, ValueError("no tokens"))
                continue
            base = section.start
            late_meta = dict(meta, embedding_model=name, late_chunking=True)
            step = self.max_chunk_size - self.overlap
            minimum = effective_minimum(self.min_chunk_size, self.max_chunk_size)
            i = 0
            prev_start = -1
            while True:
                j = min(i + self.max_chunk_size, n)
                if j == n and i > 0 and j - i < minimum:
                    # A short tail: start the last window earlier rather than emit a fragment.
                    # The window before ended before n, so n - minimum still lies after its start.
                    i = n - minimum
                first, last = keep[i], keep[j - 1]
                s = base + int(offsets[first][0])
                e = base + int(offsets[last][1])
                limit = base + int(offsets[keep[j]][0]) if j < n else section.end
                e = _extend_end(text, e, limit)
                s = _extend_start(text, s, base if i == 0 else max(prev_start + 1, base))
                if i == 0:  # unclaimed characters before the first token
                    s = skip_space(text, section.start, s)
                vec = normalize(np.asarray(vectors)[keep[i:j]].mean(axis=0, keepdims=True))[0].tolist()
                chunks.append(make_chunk(doc, index=len(chunks), start=s, end=e, token_count=j - i,
                                         metadata=late_meta, embedding=vec))
                prev_start = s
                if j == n:
                    break
                i += step
        return chunks
