"""EmbedChunks with a hosted model in a Beam pipeline: one call per buffer, costs per document."""
import apache_beam as beam
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from beam_chunking.embeddings import HostedEmbedder
from beam_chunking.transforms import ChunkedDocument, DocumentHeader, EmbedChunks
from beam_chunking.types import Chunk


def chunked(doc_id, texts):
    chunks = tuple(Chunk(doc_id, k, 0, len(t), t, None, {}, None) for k, t in enumerate(texts))
    return ChunkedDocument(DocumentHeader(doc_id, f"{doc_id}.txt", "text/plain", 1, ""), 1, chunks, "recursive", "f",
                           counts={"llm_calls": 1})


def test_requests_span_documents_and_each_document_gets_its_share(embedding_server, tmp_path):
    embedder = HostedEmbedder(model="m", base_url=embedding_server.base_url, dimensions=8, max_batch_size=2,
                              cache=str(tmp_path / "cache"))
    docs = [chunked("a", ["one two", "three"]), chunked("b", ["four", "one two", "five six seven"])]

    def costs(doc):
        return doc.document_id, tuple(sorted(doc.counts.items())), tuple(len(c.embedding) for c in doc.chunks)

    for cached in (0, 1):  # the second pipeline finds every vector in the cache
        with TestPipeline(runner="FnApiRunner") as p:
            out = p | beam.Create(docs) | EmbedChunks(embedder) | beam.Map(costs)
            # "one two" twice: sent once. Requests of 2 texts, [one two, three] and [four, five six
            # seven], each counted for the document of its first text; their chunks' words are the tokens.
            assert_that(out, equal_to([
                ("a", (("embed_cached_texts", 2 * cached), ("embed_requests", 1 - cached), ("embed_texts", 2),
                       ("embed_tokens", 3 - 3 * cached), ("llm_calls", 1)), (8, 8)),
                ("b", (("embed_cached_texts", 1 + 2 * cached), ("embed_requests", 1 - cached), ("embed_texts", 3),
                       ("embed_tokens", 4 - 4 * cached), ("llm_calls", 1)), (8, 8, 8)),
            ]))
    assert embedding_server.calls == 2
