"""ChunkDocuments: :class:`ParsedDocument` -> :class:`ChunkedDocument`, in one DoFn (no shuffle)."""
from __future__ import annotations

import logging
import time
from typing import Optional

import apache_beam as beam

from beam_chunking.errors import ConfigError
from beam_chunking.sizing import get_sizer
from beam_chunking.strategies.base import Chunker, document_outcome
from beam_chunking.transforms._common import NAMESPACE, StageFn
from beam_chunking.transforms.records import ChunkedDocument, DocumentHeader, Stage

_LOG = logging.getLogger(__name__)
_PROGRESS_SECONDS = 30.0


class _ChunkFn(StageFn):
    stage = Stage.CHUNK

    def __init__(self, strategy: Chunker, token_counter: Optional[str]):
        self.strategy = strategy
        self.token_counter = token_counter
        self.chunks = beam.metrics.Metrics.counter(NAMESPACE, "chunks")
        self.chunked = beam.metrics.Metrics.counter(NAMESPACE, "documents_chunked")
        self.empty = beam.metrics.Metrics.counter(NAMESPACE, "documents_empty")

    def setup(self):
        # Tokenizers and models load once per worker process, never per element.
        self.strategy.setup()
        self._sizer = get_sizer(self.token_counter) if self.token_counter else None
        self._seen = 0
        self._last_log = time.monotonic()

    def _with_counts(self, text, chunks):
        # A rewritten chunk (a sanitised one) is counted on its own text, not on its source span.
        todo = [c for c in chunks if c.token_count is None and not c.metadata.get("rewrite")]
        spans = [(c.start, c.end) for c in todo]
        many = getattr(self._sizer, "count_spans", None)
        counts = iter(many(text, spans) if many else [self._sizer.count(text[s:e]) for s, e in spans])
        out = []
        for c in chunks:
            if c.token_count is None:
                n = self._sizer.count(c.text) if c.metadata.get("rewrite") else next(counts)
                c = c.with_token_count(n)
            out.append(c)
        return out

    def _counted(self, text, chunks):
        if self._sizer is not None and any(c.token_count is None for c in chunks):
            return self._with_counts(text, chunks)
        return chunks

    def handle(self, doc):
        strategy = self.strategy.resolve(doc)
        outcome = document_outcome(strategy, doc)
        chunks = self._counted(doc.text, outcome.chunks)
        self.chunks.inc(len(chunks))
        (self.chunked if chunks else self.empty).inc()
        self._seen += 1
        now = time.monotonic()
        if now - self._last_log > _PROGRESS_SECONDS:
            _LOG.info("beam-chunking: %d documents chunked by this worker", self._seen)
            self._last_log = now
        yield ChunkedDocument(
            DocumentHeader.of(doc), section_count=len(doc.sections), chunks=tuple(chunks), strategy=strategy.name,
            strategy_fingerprint=strategy.fingerprint,
            decode_replacements=int(doc.metadata.get("decode_replacements", 0) or 0), dropped=tuple(outcome.dropped),
            parents=tuple(self._counted(doc.text, list(outcome.parents))), counts=dict(outcome.counts),
        )


class ChunkDocuments(beam.PTransform):
    """Chunk each parsed document with a strategy (or a :class:`Router` by content type).

    Chunking errors become failures (stage ``chunk``); a document that yields no chunk is
    recorded with status ``empty``.

    Args:
        strategy: Any strategy or a :class:`Router`.
        token_counter: Sizer spec used to fill ``token_count`` for strategies that count
            characters (default ``"cl100k_base"``; ``None`` leaves it empty).
    """

    def __init__(self, strategy: Chunker, token_counter: Optional[str] = "cl100k_base"):
        super().__init__()
        if not isinstance(strategy, Chunker):
            raise ConfigError(f"ChunkDocuments needs a strategy, got {type(strategy).__name__}")
        if token_counter:
            get_sizer(token_counter)  # fail at construction, not on a worker
        self.strategy = strategy
        self.token_counter = token_counter

    def fns(self):
        """The DoFns of this stage (for a fused stage)."""
        return [_ChunkFn(self.strategy, self.token_counter)]

    def expand(self, pcoll):
        return pcoll | "ChunkDocument" >> beam.ParDo(_ChunkFn(self.strategy, self.token_counter))

    def display_data(self):
        return {"strategy": self.strategy.name, "fingerprint": self.strategy.fingerprint,
                "token_counter": self.token_counter or ""}
