"""LateChunker: a short last window starts earlier instead of being a fragment."""
from __future__ import annotations

import numpy as np
import pytest

from beam_chunking.strategies.late import LateChunker
from tests.embeddings.fixtures import tiny_embedder
from tests.helpers import check_chunks


@pytest.fixture(scope="module")
def embedder(tmp_path_factory):
    return tiny_embedder(tmp_path_factory.mktemp("tiny"), max_tokens=32, window_overlap_tokens=8)


def test_short_tail_window_is_rebalanced(embedder):
    text = "The cat and the dog. " * 11  # 66 tokens: windows of 32 leave a 2-token tail
    vectors, offsets = embedder.embed_tokens(text)
    n = sum(1 for a, b in offsets if b > a)
    assert n % 32 < 8
    plain = LateChunker(embedder=embedder, max_chunk_size=32, overlap=0, min_chunk_size=0).chunk(text)
    assert plain[-1].token_count == n % 32
    chunks = LateChunker(embedder=embedder, max_chunk_size=32, overlap=0, min_chunk_size=8).chunk(text)
    check_chunks(text, chunks)
    assert len(chunks) == len(plain) and chunks[-1].token_count == 8
    assert all(c.token_count <= 32 for c in chunks) and chunks[-1].end == plain[-1].end
    keep = [k for k, (a, b) in enumerate(offsets) if b > a]
    tail = np.asarray(vectors)[keep[n - 8:]].mean(axis=0)
    assert np.allclose(chunks[-1].embedding, tail / np.linalg.norm(tail), atol=1e-5)


def test_single_window_sections_are_left_alone(embedder):
    chunks = LateChunker(embedder=embedder, max_chunk_size=32, overlap=0, min_chunk_size=8).chunk("Cat.")
    assert [c.text for c in chunks] == ["Cat."]
