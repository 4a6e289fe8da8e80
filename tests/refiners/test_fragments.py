"""SemanticRefiner with an embedder: no pieces below min_chunk_size unless flagged."""
from __future__ import annotations

import pytest
from hypothesis import given, settings

from beam_chunking.refiners import SemanticRefiner
from beam_chunking.types import ParsedDocument, Section
from tests.embeddings.fixtures import tiny_embedder
from tests.helpers import adversarial_text, check_chunks

ANIMALS = "The cat and the dog are in the barn. A horse is with a cow. The sheep and the goat eat. "
MONEY = "The stock market price fell. A bank loan is debt. The fund has cash and shares. "


@pytest.fixture(scope="module")
def embedder(tmp_path_factory):
    return tiny_embedder(tmp_path_factory.mktemp("tiny"))


def whole(text):
    doc = ParsedDocument("d", "u", "text/plain", text, (Section(0, len(text)),))
    from beam_chunking.strategies.base import make_chunk

    return doc, [make_chunk(doc, index=0, start=0, end=len(text), token_count=None, metadata={})]


def test_repetitive_text_is_halved_not_peeled(embedder):
    # 18,000 characters of identical sentences: every similarity ties. Peeling one sentence
    # per level also needed more recursion than Python allows.
    text = "Same words. " * 1500
    doc, chunks = whole(text)
    pieces = SemanticRefiner(max_chunk_size=500, embedder=embedder).refine(doc, chunks)
    check_chunks(text, pieces, limit=500)
    assert len(pieces) <= 2 * len(text) // 500  # halved down to the ceiling, never single sentences
    assert all(len(p.text) >= 100 for p in pieces)


def test_prose_pieces_reach_the_minimum(embedder):
    text = (ANIMALS * 3 + MONEY * 3) * 4
    doc, chunks = whole(text)
    pieces = SemanticRefiner(max_chunk_size=400, embedder=embedder, min_chunk_size=100).refine(doc, chunks)
    check_chunks(text, pieces, limit=400)
    assert all(len(p.text) >= 100 or p.metadata.get("undersized") for p in pieces)
    assert sum(bool(p.metadata.get("undersized")) for p in pieces) == 0


@settings(deadline=None, max_examples=25)
@given(adversarial_text)
def test_refined_pieces_bounded_exact_and_flagged(embedder, text):
    if not text.strip():
        return
    doc, chunks = whole(text)
    pieces = SemanticRefiner(max_chunk_size=80, embedder=embedder, min_chunk_size=20).refine(doc, chunks)
    check_chunks(text, pieces, limit=80)  # a chunk of at most 80 passes through whole
    for p in pieces:
        if "refined_from" in p.metadata:
            assert (len(p.text) < 20) == bool(p.metadata.get("undersized"))
