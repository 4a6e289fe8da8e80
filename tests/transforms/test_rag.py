"""ToEmbeddableItems / FromEmbeddableItems: Beam's RAG items, round trips and Beam's Qdrant writer."""
from __future__ import annotations

import uuid

import apache_beam as beam
import pytest
from apache_beam.ml.rag.embeddings.base import create_text_adapter
from apache_beam.ml.rag.types import Content, EmbeddableItem, Embedding
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from beam_chunking.errors import ChunkingError, ConfigError
from beam_chunking.schema import chunk_batch, chunk_rows
from beam_chunking.transforms import ChunkedDocument, DocumentHeader, Failure, Stage
from beam_chunking.transforms.rag import (ID_NAMESPACE, FromEmbeddableItems, ToEmbeddableItems, chunk_to_item,
                                          item_to_chunk)
from beam_chunking.types import Chunk

RUNNER = "FnApiRunner"
DIM = 4


def sample_chunks(doc_id="docs/a.md", vectors=True):
    """Chunks with every kind of metadata value, a shared start (ordinal 1) and a missing vector."""
    meta = {"heading": "Intro", "section_path": ["Guide", "Intro"], "page": 3, "team": "search", "rank": 7,
            "score": 0.5, "draft": False, "tags": ["a", "b"], "note": None, "embedding_model": "tiny"}
    return [
        Chunk(doc_id, 0, 0, 11, "Hello world", 2, meta, [0.5, -0.25, 1.0, 0.0] if vectors else None),
        Chunk(doc_id, 1, 11, 20, " and more", None, {"page": 4}, [0.125, 0.0, -1.0, 2.0] if vectors else None),
        Chunk(doc_id, 2, 11, 15, " and", 1, {}, None, ordinal=1),
    ]


def document(doc_id="docs/a.md", vectors=True):
    return ChunkedDocument(DocumentHeader(doc_id, f"/data/{doc_id}", "text/markdown", 20, "ab"), 2,
                           tuple(sample_chunks(doc_id, vectors)), "recursive", "fp123")


def rows_of(doc: ChunkedDocument):
    return chunk_rows(list(doc.chunks), strategy=doc.strategy, fingerprint=doc.strategy_fingerprint,
                      content_type=doc.content_type, uri=doc.uri)


def test_chunks_round_trip_losslessly_through_items():
    chunks = sample_chunks()
    with TestPipeline(runner=RUNNER) as p:
        items = p | beam.Create(chunks) | ToEmbeddableItems()
        assert_that(items | "Ids" >> beam.Map(lambda i: (i.id, i.index, i.content.text, i.dense_embedding)),
                    equal_to([(c.id, c.index, c.text, c.embedding) for c in chunks]), label="items")
        assert_that(items | FromEmbeddableItems(), equal_to(chunks), label="back")


def test_items_carry_plain_typed_metadata():
    item = chunk_to_item(sample_chunks()[0], {"uri": "/data/docs/a.md", "content_type": None})
    assert item.id == "docs/a.md:0000000000"
    assert item.metadata == {
        "chunk_id": "docs/a.md:0000000000", "document_id": "docs/a.md", "chunk_index": 0, "start": 0, "end": 11,
        "token_count": 2, "uri": "/data/docs/a.md", "heading": "Intro", "section_path": ["Guide", "Intro"],
        "page": 3, "team": "search", "rank": 7, "score": 0.5, "draft": False, "tags": ["a", "b"], "note": None,
        "embedding_model": "tiny"}
    assert [type(item.metadata[k]) for k in ("rank", "score", "draft")] == [int, float, bool]


def test_documents_and_rows_round_trip_as_chunk_table_rows():
    doc = document()
    expected = rows_of(doc)
    with TestPipeline(runner=RUNNER) as p:
        from_docs = p | "Docs" >> beam.Create([doc]) | "DocItems" >> ToEmbeddableItems() | "DocRows" >> FromEmbeddableItems(as_rows=True)
        from_rows = (p | "Rows" >> beam.Create(expected) | "RowItems" >> ToEmbeddableItems()
                     | "RowRows" >> FromEmbeddableItems(as_rows=True))
        assert_that(from_docs, equal_to(expected), label="documents")
        assert_that(from_rows, equal_to(expected), label="rows")
    assert chunk_batch(expected).num_rows == 3  # the rows it gives back fit the table schema


def test_uuid5_ids_are_stable_and_restore_the_chunk_id():
    chunks = sample_chunks()
    items = [chunk_to_item(c, mode="uuid5") for c in chunks]
    assert [i.id for i in items] == [str(uuid.uuid5(ID_NAMESPACE, c.id)) for c in chunks]
    assert [i.id for i in items] == [chunk_to_item(c, mode="uuid5").id for c in chunks]  # no randomness
    assert [item_to_chunk(i) for i in items] == chunks


def test_failures_are_skipped_and_bad_inputs_refused():
    failure = Failure(DocumentHeader("x", "x.txt"), Stage.PARSE, "ParseError", "broken")
    with TestPipeline(runner=RUNNER) as p:
        out = p | beam.Create([failure, document("b.md", vectors=False)]) | ToEmbeddableItems()
        assert_that(out | beam.Map(lambda i: (i.id, i.dense_embedding)),
                    equal_to([("b.md:0000000000", None), ("b.md:0000000011", None), ("b.md:0000000011#1", None)]))
    with pytest.raises(ChunkingError, match=r"metadata keys \['start'\]"):
        chunk_to_item(Chunk("d", 0, 0, 1, "x", metadata={"start": 5}))
    with pytest.raises(ChunkingError, match="no \\['document_id', 'start', 'end'\\]"):
        item_to_chunk(EmbeddableItem(content=Content(text="x"), id="foreign"))
    with pytest.raises(ConfigError, match="must be one of"):
        ToEmbeddableItems(id="uuid4")


def test_beam_text_adapter_embeds_our_items_and_we_read_the_vectors_back():
    # The adapter Beam's embedding transforms (MLTransform's RAG embeddings) apply to items.
    adapter = create_text_adapter()
    items = [chunk_to_item(c) for c in sample_chunks(vectors=False)]
    assert adapter.input_fn(items) == ["Hello world", " and more", " and"]
    embedded = adapter.output_fn(items, [[float(len(t))] * DIM for t in adapter.input_fn(items)])
    assert [item_to_chunk(i).embedding for i in embedded] == [[11.0] * DIM, [9.0] * DIM, [4.0] * DIM]


def test_beams_qdrant_writer_stores_our_items_in_local_mode(tmp_path):
    qdrant = pytest.importorskip("qdrant_client", reason="qdrant-client is not installed (the test extra has it)")
    from apache_beam.ml.rag.ingestion.base import VectorDatabaseWriteTransform
    from apache_beam.ml.rag.ingestion.qdrant import QdrantConnectionParameters, QdrantWriteConfig

    path = str(tmp_path / "qdrant")
    client = qdrant.QdrantClient(path=path)
    # DOT keeps vectors as written (COSINE would store them normalised).
    client.create_collection("chunks", vectors_config={
        "dense": qdrant.models.VectorParams(size=DIM, distance=qdrant.models.Distance.DOT)})
    client.close()
    chunks = sample_chunks()[:2]  # Qdrant needs a vector on every point
    config = QdrantWriteConfig(QdrantConnectionParameters.local(path), "chunks", batch_size=1)
    for _ in range(2):  # the second run overwrites the same points: stable ids
        with TestPipeline(runner=RUNNER) as p:
            (p | beam.Create(chunks) | ToEmbeddableItems(id="uuid5", text_key="text")
             | VectorDatabaseWriteTransform(config))

    client = qdrant.QdrantClient(path=path)
    try:
        points, _ = client.scroll("chunks", limit=10, with_payload=True, with_vectors=True)
    finally:
        client.close()
    assert sorted(str(p.id) for p in points) == sorted(str(uuid.uuid5(ID_NAMESPACE, c.id)) for c in chunks)
    # What the store gives back is again our chunks, ids, spans, metadata and vectors included.
    back = [item_to_chunk(EmbeddableItem(content=Content(), id=str(p.id), metadata=p.payload,
                                         embedding=Embedding(dense_embedding=list(p.vector["dense"]))), "text")
            for p in points]
    assert sorted(back, key=lambda c: c.id) == chunks

