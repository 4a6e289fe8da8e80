"""EmbedChunks on a real tiny ONNX model inside a Beam pipeline."""
from __future__ import annotations

import dataclasses

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from beam_chunking.errors import ConfigError
from beam_chunking.transforms import ChunkedDocument, DocumentHeader, EmbedChunks, Failure, Stage
from beam_chunking.types import Chunk
from tests.embeddings.fixtures import DIM, tiny_embedder


def chunked(doc_id, texts, embedding=None, model=None):
    chunks = tuple(Chunk(doc_id, k, 0, len(t), t, None, {"embedding_model": model} if model else {}, embedding)
                   for k, t in enumerate(texts))
    return ChunkedDocument(DocumentHeader(doc_id, f"{doc_id}.txt", "text/plain", 1, ""), 1, chunks, "recursive", "f")


def summary(element):
    if isinstance(element, Failure):
        return (element.document_id, "failed", element.error_message.split(": ", 1)[-1][:40])
    return (element.document_id, "ok", tuple((len(c.embedding), c.metadata["embedding_model"]) for c in element.chunks))


@pytest.fixture(scope="module")
def embedder(tmp_path_factory):
    return tiny_embedder(tmp_path_factory.mktemp("tiny"))


def test_batches_across_documents_reuses_and_fails_bad_dimensions(embedder):
    docs = [chunked("a", ["the cat", "the dog"]), chunked("b", ["the stock"] * 5),
            chunked("c", ["late chunk"], embedding=[0.5] * DIM, model="tiny"),
            chunked("d", ["bad"], embedding=[0.1] * 3, model="tiny"),
            Failure(DocumentHeader("e", "e.txt"), Stage.PARSE, "ParseError", "broken")]
    with TestPipeline(runner="FnApiRunner") as p:
        out = p | beam.Create(docs) | EmbedChunks(embedder, batch_size=3) | beam.Map(summary)
        assert_that(out, equal_to([
            ("a", "ok", ((DIM, "tiny"), (DIM, "tiny"))), ("b", "ok", ((DIM, "tiny"),) * 5),
            ("c", "ok", ((DIM, "tiny"),)),
            ("d", "failed", "chunk d:0000000000 carries a precomputed"),
            ("e", "failed", "broken"),
        ]))


def test_reused_vectors_are_kept_and_others_from_the_model(embedder):
    doc = chunked("c", ["the cat", "the dog"], embedding=[1.0] + [0.0] * (DIM - 1), model="tiny")
    with TestPipeline(runner="FnApiRunner") as p:
        out = p | beam.Create([doc]) | EmbedChunks(embedder) | beam.Map(lambda d: [c.embedding[0] for c in d.chunks])
        assert_that(out, equal_to([[1.0, 1.0]]))


def test_vectors_from_another_model_are_replaced(embedder):
    doc = chunked("o", ["the cat"], embedding=[1.0] + [0.0] * (DIM - 1), model="other-model")
    expected = embedder.embed(["the cat"])[0].tolist()
    with TestPipeline(runner="FnApiRunner") as p:
        out = p | beam.Create([doc]) | EmbedChunks(embedder) | beam.Map(lambda d: d.chunks[0].embedding)
        assert_that(out, equal_to([expected]))


class FailingModel:
    """A model whose inference fails, as a corrupt or out-of-memory session would."""

    name, dimension = "failing", DIM

    def embed(self, texts):
        raise RuntimeError("inference failed")


def test_a_failing_model_fails_its_documents_not_the_job():
    docs = [chunked("a", ["x"]), chunked("b", ["y"])]
    with TestPipeline(runner="FnApiRunner") as p:
        out = p | beam.Create(docs) | EmbedChunks(FailingModel()) | beam.Map(summary)
        assert_that(out, equal_to([("a", "failed", "inference failed"), ("b", "failed", "inference failed")]))


def test_validation():
    with pytest.raises(ConfigError, match="batch_size"):
        EmbedChunks("minilm", batch_size=0)
    with pytest.raises(ConfigError, match="embedder must be"):
        EmbedChunks(42)


def test_the_call_size_never_changes_a_vector(embedder):
    """Large calls let the embedder sort more texts by length; the vectors stay bit-identical
    to embedding each text on its own."""
    words = ["alpha", "beta gamma", "delta epsilon zeta eta", "theta", "iota kappa lambda mu nu xi omicron"]
    docs = [chunked(f"d{k}", [" ".join(words[: 1 + (k + j) % len(words)]) * (1 + j) for j in range(4)])
            for k in range(12)]
    alone = [((d.document_id, c.index), tuple(float(x) for x in embedder.embed([c.text])[0]))
             for d in docs for c in d.chunks]
    with TestPipeline(runner="FnApiRunner") as p:
        out = (p | beam.Create(docs) | EmbedChunks(embedder)  # the default: every chunk in one call
               | beam.FlatMap(lambda d: [((d.document_id, c.index), tuple(c.embedding)) for c in d.chunks]))
        assert_that(out, equal_to(alone))


def test_a_context_template_changes_what_is_embedded_never_the_text(embedder):
    template = "{title}\n{section_path}\n\n{text}"
    plain = chunked("t", ["the cat", "the dog"])
    doc = dataclasses.replace(plain, chunks=tuple(
        dataclasses.replace(c, metadata={"section_path": ["Pets", "Cats"], "title": "Care"}) for c in plain.chunks))
    # Bare-text vectors the strategy made are made again in context; late chunking's are kept.
    made = dataclasses.replace(plain, header=DocumentHeader("m", "notes/guide.md", "text/markdown", 1, ""), chunks=(
        dataclasses.replace(plain.chunks[0], embedding=[1.0] + [0.0] * (DIM - 1), metadata={"embedding_model": "tiny"}),
        dataclasses.replace(plain.chunks[1], embedding=[1.0] + [0.0] * (DIM - 1),
                            metadata={"embedding_model": "tiny", "late_chunking": True})))
    expected = embedder.embed(["Care\nPets > Cats\n\nthe cat", "Care\nPets > Cats\n\nthe dog", "guide\n\n\nthe cat"])
    with TestPipeline(runner="FnApiRunner") as p:
        out = (p | beam.Create([doc, made]) | EmbedChunks(embedder, context=template)
               | beam.Map(lambda d: (d.document_id, [(c.text, c.embedding) for c in d.chunks])))
        assert_that(out, equal_to([
            ("t", [("the cat", expected[0].tolist()), ("the dog", expected[1].tolist())]),
            ("m", [("the cat", expected[2].tolist()), ("the dog", [1.0] + [0.0] * (DIM - 1))]),
        ]))


def test_a_context_template_is_checked():
    with pytest.raises(ConfigError, match=r"no \{text\} field"):
        EmbedChunks("minilm", context="{title}")
