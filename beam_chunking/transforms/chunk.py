"""ChunkDocuments: :class:`ParsedDocument` -> :class:`ChunkedDocument`, in one DoFn (no shuffle)."""
from __future__ import annotations

import logging
import time
from collections import deque
from concurrent.futures import Future
from typing import Any, Callable, Deque, Dict, Iterator, List, Optional, Tuple

import apache_beam as beam
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.windowed_value import WindowedValue

from beam_chunking.config import uses_embedder_tokenizer
from beam_chunking.errors import ConfigError
from beam_chunking.sizing import TiktokenSizer, get_sizer
from beam_chunking.strategies.base import Chunker, document_outcome
from beam_chunking.transforms._common import NAMESPACE, StageFn
from beam_chunking.transforms.runners import drops_finish_bundle_output
from beam_chunking.text.threaded import run_later, spare_core
from beam_chunking.text.tokens import TokenIndex, encode_span
from beam_chunking.transforms.records import ChunkedDocument, DocumentHeader, Failure, Stage, failure_from

_LOG = logging.getLogger(__name__)
_PROGRESS_SECONDS = 30.0
#: Most documents, and characters of chunk text, whose counts may be pending at once: the
#: documents wait in memory with their chunks.
MAX_WAITING = 64
MAX_WAITING_CHARS = 8_000_000


class _ChunkFn(StageFn):
    stage = Stage.CHUNK

    def __init__(self, strategy: Chunker, token_counter: Optional[str], defer_counts: bool = False):
        self.strategy = strategy
        self.token_counter = token_counter
        self.defer_counts = defer_counts
        self.chunks = beam.metrics.Metrics.counter(NAMESPACE, "chunks")
        self.chunked = beam.metrics.Metrics.counter(NAMESPACE, "documents_chunked")
        self.empty = beam.metrics.Metrics.counter(NAMESPACE, "documents_empty")

    def setup(self):
        # Tokenizers and models load once per worker process, never per element.
        self.strategy.setup()
        self._sizer = get_sizer(self.token_counter) if self.token_counter else None
        self._seen = 0
        self._last_log = time.monotonic()
        # Counting a document's chunks on another core while this thread chunks the next
        # documents needs a tokenizer that releases the GIL (tiktoken) and an idle core.
        self._later = (self.defer_counts and isinstance(self._sizer, TiktokenSizer) and spare_core())
        self._short_counts: Dict[str, int] = {}  # counts of chunk heads and tails (words, mostly)

    def start_bundle(self):
        # Documents whose counts are being taken, oldest first: (element, its window and
        # timestamp, the future of its counts or None, what makes its outputs from them, the
        # characters being counted).
        self._waiting: Deque[Tuple[Any, Any, Any, Optional[Future], Callable[[Any], Any], int]] = deque()
        self._waiting_chars = 0

    # -- counting ------------------------------------------------------------------------
    def _todo(self, chunks) -> Tuple[List[Tuple[int, int]], List[str]]:
        """The spans to count, and the rewritten texts (a sanitised chunk is counted on its
        own text, not on its source span)."""
        spans: List[Tuple[int, int]] = []
        texts: List[str] = []
        for c in chunks:
            if c.token_count is None:
                if c.metadata.get("rewrite"):
                    texts.append(c.text)
                else:
                    spans.append((c.start, c.end))
        return spans, texts

    @staticmethod
    def _filled(chunks, span_counts: Iterator[int], text_counts: Iterator[int]):
        out = []
        for c in chunks:
            if c.token_count is None:
                c = c.with_token_count(next(text_counts) if c.metadata.get("rewrite") else next(span_counts))
            out.append(c)
        return out

    def _counts_now(self, text, chunks):
        if self._sizer is None or all(c.token_count is not None for c in chunks):
            return chunks
        spans, texts = self._todo(chunks)
        many = getattr(self._sizer, "count_spans", None)
        span_counts = many(text, spans) if many else [self._sizer.count(text[s:e]) for s, e in spans]
        return self._filled(chunks, iter(span_counts), iter([self._sizer.count(t) for t in texts]))

    # -- documents -----------------------------------------------------------------------
    def _chunked(self, doc):
        """Chunk ``doc``: the outcome, and what makes its output once chunks and parents have counts."""
        strategy = self.strategy.resolve(doc)
        outcome = document_outcome(strategy, doc)

        def output(chunks, parents) -> ChunkedDocument:
            self.chunks.inc(len(chunks))
            (self.chunked if chunks else self.empty).inc()
            self._seen += 1
            now = time.monotonic()
            if now - self._last_log > _PROGRESS_SECONDS:
                _LOG.info("beam-chunking: %d documents chunked by this worker", self._seen)
                self._last_log = now
            return ChunkedDocument(
                DocumentHeader.of(doc), section_count=len(doc.sections), chunks=tuple(chunks), strategy=strategy.name,
                strategy_fingerprint=strategy.fingerprint,
                decode_replacements=int(doc.metadata.get("decode_replacements", 0) or 0),
                dropped=tuple(outcome.dropped), parents=tuple(parents), counts=dict(outcome.counts),
            )
        return outcome, output

    def handle(self, doc):
        outcome, output = self._chunked(doc)
        yield output(self._counts_now(doc.text, outcome.chunks), self._counts_now(doc.text, list(outcome.parents)))

    def process(self, element, window=beam.DoFn.WindowParam, timestamp=beam.DoFn.TimestampParam):
        if not self._later or not isinstance(window, GlobalWindow):
            # Counted here; documents still waiting (none outside the global window) go first.
            yield from self._emit(block=True, everything=True)
            yield from super().process(element)
            return
        # Deferred counts: this document's chunks are counted on the pool's thread while the
        # next ones are chunked here; outputs leave in input order, each with its own timestamp.
        try:
            ready = self._defer(element, window, timestamp)
        except Exception as exc:  # one bad document must not fail the job
            beam.metrics.Metrics.counter(NAMESPACE, f"failed_{self.stage.value}").inc()
            ready = (failure_from(element, exc, self.stage),)
        if ready is not None:  # nothing to count: in line behind the documents still counting
            self._waiting.append((element, window, timestamp, None, lambda _counts, out=ready: out, 0))
        yield from self._emit(block=self._waiting_chars > MAX_WAITING_CHARS or len(self._waiting) > MAX_WAITING)

    def _defer(self, element, window, timestamp):
        """Chunk ``element`` and start its counts; ``None``, or its outputs when there is nothing to count."""
        if isinstance(element, Failure):
            return (element,)
        outcome, output = self._chunked(element)
        parents = list(outcome.parents)
        spans, texts = self._todo(outcome.chunks)
        parent_spans, parent_texts = self._todo(parents)
        if not (spans or texts or parent_spans or parent_texts):
            return (output(outcome.chunks, parents),)
        count = self._sizer.count
        # The pool's thread encodes the whole document once, in one call that releases the
        # GIL (anything more there would wait for this busy thread at every step); each
        # chunk's own count then comes from that encoding and at most two short encodes
        # (TokenIndex.count_spans), on this thread.
        enc, text = self._sizer.tiktoken_encoding, element.text
        future = run_later(encode_span, enc, text, 0, len(text))
        n = len(spans)

        def finish(ids):
            index = TokenIndex(enc, text, 0, len(text), ids)
            span_counts = index.count_spans(text, spans + parent_spans, self._short_counts)
            chunks = self._filled(outcome.chunks, iter(span_counts[:n]), iter([count(t) for t in texts]))
            return (output(chunks, self._filled(parents, iter(span_counts[n:]), iter([count(t) for t in parent_texts]))),)
        chars = sum(e - s for s, e in spans + parent_spans)
        self._waiting.append((element, window, timestamp, future, finish, chars))
        self._waiting_chars += chars
        return None

    def _emit(self, block: bool, everything: bool = False):
        """Outputs of the oldest documents whose counts are done (waiting for the oldest when
        ``block``, for all when ``everything``), as windowed values."""
        while self._waiting:
            element, window, timestamp, future, finish, chars = self._waiting[0]
            if future is not None and not (block or everything or future.done()):
                return
            self._waiting.popleft()
            self._waiting_chars -= chars
            try:
                outputs = finish(future.result() if future is not None else None)
            except Exception as exc:
                beam.metrics.Metrics.counter(NAMESPACE, f"failed_{self.stage.value}").inc()
                outputs = (failure_from(element, exc, self.stage),)
            for out in outputs:
                yield WindowedValue(out, timestamp, (window,))
            block = False

    def finish_bundle(self):
        if self._later:
            yield from self._emit(block=True, everything=True)


class ChunkDocuments(beam.PTransform):
    """Chunk each parsed document with a strategy (or a :class:`Router` by content type).

    Chunking errors become failures (stage ``chunk``); a document that yields no chunk is
    recorded with status ``empty``.

    With a tiktoken counter and a core left idle, a document's tokens are encoded on
    another thread while the next documents are chunked, and documents leave in input order
    once counted (the last ones when the bundle finishes). Each chunk's count is still that
    of its own text: it comes from the document's encoding where the chunk's ends fall on
    pre-tokenizer piece boundaries, and from short encodes of its head and tail otherwise.

    Args:
        strategy: Any strategy or a :class:`Router`.
        token_counter: Sizer spec used to fill ``token_count`` for strategies that count
            characters (default ``"cl100k_base"``; ``None`` leaves it empty).
    """

    def __init__(self, strategy: Chunker, token_counter: Optional[str] = "cl100k_base"):
        super().__init__()
        if not isinstance(strategy, Chunker):
            raise ConfigError(f"ChunkDocuments needs a strategy, got {type(strategy).__name__}")
        if uses_embedder_tokenizer(strategy):
            # Only a job knows its embedding model: fail here, not on every document.
            raise ConfigError("tokenizer: embedder counts in the job's embedding model's tokens; ChunkDocuments "
                              "has no embedding model: build the strategy through JobConfig(embed=...) or "
                              "ChunkFiles, or give tokenizer: hf:PATH/tokenizer.json", field="tokenizer")
        if token_counter:
            get_sizer(token_counter)  # fail at construction, not on a worker
        self.strategy = strategy
        self.token_counter = token_counter

    def fns(self, defer_counts: bool = False):
        """The DoFns of this stage (for a fused stage). ``defer_counts``: count a document's
        chunks on another core while the next documents are chunked, emitting the waiting
        documents when the bundle finishes (not for a runner that drops those outputs)."""
        return [_ChunkFn(self.strategy, self.token_counter, defer_counts)]

    def expand(self, pcoll):
        defer = not drops_finish_bundle_output(pcoll.pipeline.runner)
        return pcoll | "ChunkDocument" >> beam.ParDo(_ChunkFn(self.strategy, self.token_counter, defer))

    def display_data(self):
        return {"strategy": self.strategy.name, "fingerprint": self.strategy.fingerprint,
                "token_counter": self.token_counter or ""}
