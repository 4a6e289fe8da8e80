"""SemanticChunker: no chunk left without a vector, fragments joined or flagged."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

from beam_chunking.strategies.semantic import SemanticChunker
from tests.embeddings.fixtures import tiny_embedder
from tests.helpers import adversarial_text, check_chunks


@pytest.fixture(scope="module")
def embedder(tmp_path_factory):
    return tiny_embedder(tmp_path_factory.mktemp("tiny"))


def test_pieces_of_an_over_long_sentence_get_their_own_vectors(embedder):
    long_sentence = " ".join(["the cat and the dog"] * 60) + "."  # ~1,200 characters, no boundary
    text = "A horse is with a cow. " + long_sentence + " The sheep and the goat eat."
    chunks = SemanticChunker(embedder=embedder, max_chunk_size=300, min_chunk_size=50).chunk(text)
    check_chunks(text, chunks, limit=300)
    assert len(chunks) > 3
    for c in chunks:
        assert c.embedding is not None and c.metadata["embedding_model"] == "tiny"
        assert np.isclose(np.linalg.norm(c.embedding), 1.0, atol=1e-4)
    piece = next(c for c in chunks if not c.text.endswith("."))
    expected = embedder.embed([piece.text])[0]
    assert np.allclose(piece.embedding, expected / np.linalg.norm(expected), atol=1e-4)


def test_threshold_mode_also_joins_fragments(embedder):
    text = "The cat and the dog are in the barn. " * 8 + "Fox."
    chunks = SemanticChunker(embedder=embedder, similarity_threshold=0.99, min_chunk_size=40,
                             max_chunk_size=400).chunk(text)
    check_chunks(text, chunks, limit=400)
    for c in chunks:
        assert len(c.text) >= 40 or c.metadata.get("undersized") is True


@settings(deadline=None, max_examples=25)
@given(adversarial_text)
def test_every_chunk_has_a_vector_and_fragments_are_flagged(embedder, text):
    chunker = SemanticChunker(embedder=embedder, max_chunk_size=120, min_chunk_size=30)
    chunks = chunker.chunk(text)
    check_chunks(text, chunks, limit=120)
    for c in chunks:
        assert c.embedding is not None
        assert (len(c.text) < 30) == bool(c.metadata.get("undersized"))


def test_small_sections_join_under_one_heading_and_get_a_vector(embedder):
    from tests.strategies.test_min_chunk_size import sectioned

    long = ("The cat and the dog are in the barn. A horse is with a cow. " * 3).strip()
    doc = sectioned([(long, ("Farm",), None), ("Then feed.", ("Farm",), None), ("Tiny.", ("Bank",), None)])
    chunks = SemanticChunker(embedder=embedder, min_chunk_size=50).chunk_document(doc)
    assert [c.text for c in chunks] == [long + "\n\nThen feed.", "Tiny."]
    assert chunks[1].metadata["undersized"] is True and "undersized" not in chunks[0].metadata
    expected = embedder.embed([chunks[0].text])[0]
    assert np.allclose(chunks[0].embedding, expected / np.linalg.norm(expected), atol=1e-4)


def test_table_rows_leave_no_lone_pipe(embedder):
    from beam_chunking.refiners import SemanticRefiner
    from beam_chunking.types import ParsedDocument, Section

    rows = "".join(f"| apt{i} | Installs packages, upgrades, etc. |\n| dpkg{i} | Low level. |\n" for i in range(12))
    text = "| Tool | Notes |\n|---|---|\n" + rows
    doc = ParsedDocument("d", "u", "text/plain", text, (Section(0, len(text)),))
    chunks = SemanticChunker(embedder=embedder, max_chunk_size=300, min_chunk_size=0).chunk_document(doc)
    refined = SemanticRefiner(max_chunk_size=300, embedder=embedder, min_chunk_size=0).refine(
        doc, SemanticChunker(embedder=embedder, max_chunk_size=1500).chunk_document(doc))
    for got in (chunks, refined):
        check_chunks(text, got, limit=300)
        assert not any(c.text.strip() == "|" for c in got)
