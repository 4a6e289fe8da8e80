"""LateChunker on a tiny real ONNX model: exact spans, CJK and NFD, pooled vectors, fallback."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

from beam_chunking.errors import ConfigError
from beam_chunking.strategies.late import LateChunker
from tests.embeddings.fixtures import tiny_embedder
from tests.helpers import adversarial_text, check_chunks, check_pickle


@pytest.fixture(scope="module")
def embedder(tmp_path_factory):
    return tiny_embedder(tmp_path_factory.mktemp("tiny"), max_tokens=32, window_overlap_tokens=8)


class Broken:
    name = "broken"

    def embed_tokens(self, text):
        raise RuntimeError("model crashed")


def test_windows_spans_and_pooled_embeddings(embedder):
    text = "The cat and the dog. " * 20 + "The stock market price fell. " * 20
    chunks = LateChunker(embedder=embedder, max_chunk_size=24, overlap=4).chunk(text)
    check_chunks(text, chunks)
    assert all(c.token_count <= 24 and c.metadata["late_chunking"] for c in chunks)
    assert chunks[1].start < chunks[0].end  # token overlap
    vectors, offsets = embedder.embed_tokens(text)
    first = vectors[:24].mean(axis=0)
    assert np.allclose(chunks[0].embedding, first / np.linalg.norm(first), atol=1e-5)
    assert np.dot(chunks[0].embedding, chunks[-1].embedding) < 0.5


def test_cjk_and_nfd_text_are_chunked_not_refused(embedder):
    nfd = "e\u0301te\u0301 " * 30 + "日本語の文 " * 10
    chunks = LateChunker(embedder=embedder, max_chunk_size=7, overlap=0).chunk(nfd)
    check_chunks(nfd, chunks)  # every combining mark (claimed by no token) is inside a chunk
    assert all(c.embedding is not None for c in chunks)
    assert all(not c.text[-1].isspace() and c.text.split(" ")[0][-1] == "\u0301" for c in chunks[:5])


def test_fallback_keeps_every_chunk_without_embeddings():
    text = "Plenty of words in this section. " * 60
    chunks = LateChunker(embedder=Broken(), max_chunk_size=64, overlap=8).chunk(text)
    check_chunks(text, chunks)
    assert all(c.embedding is None and c.metadata["late_chunking_fallback"] for c in chunks)


def test_interrupts_propagate():
    class Interrupted:
        def embed_tokens(self, text):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        LateChunker(embedder=Interrupted()).chunk("some text")


def test_validation(embedder):
    with pytest.raises(ConfigError, match="overlap=256 must be smaller"):
        LateChunker(embedder=embedder, overlap=256)
    with pytest.raises(ConfigError, match="max_chunk_size"):
        LateChunker(embedder=embedder, max_chunk_size=0)
    assert (LateChunker(embedder=embedder).max_chunk_size, LateChunker(embedder=embedder).overlap) == (256, 32)
    check_pickle(LateChunker(embedder=embedder))


@settings(max_examples=25)
@given(adversarial_text)
def test_exact_and_lossless_on_adversarial_text(embedder, text):
    chunks = LateChunker(embedder=embedder, max_chunk_size=8, overlap=2).chunk(text)
    check_chunks(text, chunks)
