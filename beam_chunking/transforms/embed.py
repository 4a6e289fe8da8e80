"""EmbedChunks: fill the ``embedding`` column, batching chunks across documents."""
from __future__ import annotations

import dataclasses
from typing import Any, List, Optional

import apache_beam as beam
from apache_beam.transforms.window import GlobalWindows
from apache_beam.utils.shared import Shared

from beam_chunking.embeddings.base import embed_batches, embedder_label
from beam_chunking.embeddings.context import check_context, render_context
from beam_chunking.errors import ChunkingError, ConfigError
from beam_chunking.transforms._common import LeanDoFn, NAMESPACE
from beam_chunking.transforms.runners import drops_finish_bundle_output
from beam_chunking.transforms.records import ChunkedDocument, Failure, Stage, failure_from


class _Handle:
    """What the process-wide ``Shared`` holds: the embedder with its model loaded."""

    def __init__(self, embedder):
        if hasattr(embedder, "setup"):
            embedder.setup()
        self.embedder = embedder
        self.dimension = int(embedder.dimension)
        # What its vectors are recorded as, worked out once: it is compared for every chunk.
        self.label = embedder_label(embedder)


class _EmbedFn(LeanDoFn):
    def __init__(self, embedder: Any, batch_size: int, shared: Shared, across_documents: bool = True,
                 context: Optional[str] = None):
        self.embedder = embedder
        self.context = context
        self.batch_size = batch_size
        self.shared = shared
        # Batches span documents only where the runner delivers what finish_bundle emits.
        self.across_documents = across_documents
        self.embedded = beam.metrics.Metrics.counter(NAMESPACE, "chunks_embedded")
        self.reused = beam.metrics.Metrics.counter(NAMESPACE, "chunks_embedding_reused")

    def setup(self):
        # One model per worker process, shared by every thread's DoFn instance.
        self.handle = self.shared.acquire(lambda: _Handle(self.embedder))

    def start_bundle(self):
        self.pending: List[ChunkedDocument] = []
        self.todo = 0

    def process(self, element):
        if isinstance(element, Failure):
            yield element
            return
        self.pending.append(element)
        self.todo += sum(1 for c in element.chunks if c.embedding is None)
        if self.todo >= self.batch_size or not self.across_documents:
            yield from self._flush()

    def finish_bundle(self):
        for out in self._flush():
            yield GlobalWindows.windowed_value(out)

    def _needs(self, chunk) -> bool:
        if chunk.embedding is None:
            return True
        made_by = chunk.metadata.get("embedding_model")
        if made_by is not None and made_by != self.handle.label:
            return True
        # A vector of the bare text lacks the context; late chunking's carry their document's.
        return self.context is not None and made_by is not None and not chunk.metadata.get("late_chunking")

    def _flush(self):
        docs, self.pending, self.todo = self.pending, [], 0
        if not docs:
            return
        dim, name = self.handle.dimension, self.handle.label
        ready, failed = [], []
        for doc in docs:
            bad = [c for c in doc.chunks if c.embedding is not None and not self._needs(c) and len(c.embedding) != dim]
            if bad:
                error = ChunkingError(f"chunk {bad[0].id} carries a precomputed {len(bad[0].embedding)}-dimensional "
                                      f"embedding but the embedding model {name!r} has {dim} dimensions",
                                      document_id=doc.document_id, uri=doc.uri)
                failed.append(failure_from(doc, error, Stage.EMBED))
            else:
                ready.append(doc)
        texts = [render_context(self.context, c.text, c.metadata, d.uri) for d in ready for c in d.chunks
                 if self._needs(c)]
        costs = None  # what a hosted model's requests cost, text by text
        try:
            if hasattr(self.handle.embedder, "embed_with_usage") and texts:
                # A hosted model packs its own requests (by count and tokens), so one call.
                costs = self.handle.embedder.embed_with_usage(texts)
                vectors = costs.vectors
            else:
                vectors = embed_batches(self.handle.embedder, texts, self.batch_size, dim)
        except Exception as exc:  # the model failed on this batch: its documents fail, the job goes on
            failed.extend(failure_from(d, exc, Stage.EMBED) for d in ready)
            ready = []
        k = 0
        for doc in ready:
            counts = costs.columns(k, k + sum(1 for c in doc.chunks if self._needs(c))) if costs else {}
            chunks = []
            for c in doc.chunks:
                meta = dict(c.metadata, embedding_model=name, embedding_dim=dim)
                if self._needs(c):
                    chunks.append(dataclasses.replace(c, embedding=vectors[k].tolist(), metadata=meta))
                    k += 1
                    self.embedded.inc()
                else:
                    chunks.append(dataclasses.replace(c, metadata=meta))
                    self.reused.inc()
            yield dataclasses.replace(doc, chunks=tuple(chunks), counts={**doc.counts, **counts})
        yield from failed


class EmbedChunks(beam.PTransform):
    """Embed every chunk that has no vector yet, batching chunks across documents.

    The model loads once per worker process (Beam's ``Shared``). Chunks that already carry
    an embedding from the same model (late chunking, semantic chunking's sentence vectors)
    are kept, not embedded again; a precomputed vector whose dimension differs from the
    model's fails its document with a clear error (stage ``embed``), not the job. Chunks get
    ``embedding_model`` and ``embedding_dim`` metadata. On Beam's DaskRunner, which drops what
    a bundle emits when it finishes, batches stay within one document.

    Chunks are buffered across a bundle's documents and sent to the embedder ``batch_size``
    at a time: ``OnnxEmbedder`` sorts each call's texts by length and cuts them into passes
    under its token budget, so the larger the call, the less padding. The vectors are the
    same, bit for bit, whatever the call size.

    With a ``context`` template each chunk is embedded in its context (its title and heading
    path, say: :mod:`beam_chunking.embeddings.context`), and vectors that strategies made of the
    bare text are made again; late chunking's are kept. The ``text`` column never changes.

    A hosted model (``"openai:MODEL"``, :class:`~beam_chunking.embeddings.HostedEmbedder`)
    gets each buffer in one call and packs its own requests; what they cost is added to each
    document's counters (:data:`~beam_chunking.schema.EMBED_COLUMNS`).

    Args:
        embedder: An embedder (``OnnxEmbedder``, ``minilm()``, ``HostedEmbedder``),
            ``"minilm"`` or ``"openai:MODEL"``.
        batch_size: Chunks per embedder call (not per model pass). Default 1024.
        context: A template of what is embedded for each chunk, such as
            ``"{title}\n{section_path}\n\n{text}"``. Default ``None``: the chunk's text.
    """

    def __init__(self, embedder: Any = "minilm", batch_size: int = 1024, context: Optional[str] = None):
        super().__init__()
        from beam_chunking.embeddings.resolve import resolve_embedder

        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ConfigError(f"EmbedChunks.batch_size must be an integer >= 1, got {batch_size!r}", field="batch_size")
        self.embedder = resolve_embedder(embedder, "EmbedChunks")
        self.batch_size = batch_size
        self.context = check_context(context, "EmbedChunks.context")
        self._shared = Shared()

    def fns(self):
        """The DoFns of this stage for a fused stage: batches stay within one document."""
        return [_EmbedFn(self.embedder, self.batch_size, self._shared, across_documents=False, context=self.context)]

    def expand(self, pcoll):
        across = not drops_finish_bundle_output(pcoll.pipeline.runner)
        return pcoll | "EmbedChunk" >> beam.ParDo(
            _EmbedFn(self.embedder, self.batch_size, self._shared, across, context=self.context))

    def display_data(self):
        return {"embedder": embedder_label(self.embedder), "batch_size": self.batch_size,
                "context": self.context or ""}
