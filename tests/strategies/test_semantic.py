"""SemanticChunker on a tiny real ONNX model: breakpoints, sizes, batching, degenerate input."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from beam_chunking.errors import ConfigError
from beam_chunking.strategies.semantic import SemanticChunker
from beam_chunking.types import ParsedDocument, Section
from tests.embeddings.fixtures import tiny_embedder
from tests.helpers import adversarial_text, check_chunks, check_pickle

ANIMALS = ["The cat and the dog are in the barn.", "A horse is with a cow.", "The sheep and the goat eat.",
           "A lion and a tiger are very big.", "The wolf and the fox run."]
MONEY = ["The stock market price fell.", "A bank loan is debt.", "The fund has cash and shares.",
         "The tax rate on profit is high.", "A bond trade is a loss."]


class Counting:
    """A real embedder that counts its calls."""

    def __init__(self, inner):
        self.inner, self.calls, self.texts, self.name = inner, 0, 0, inner.name

    def embed(self, texts):
        self.calls += 1
        self.texts += len(texts)
        return self.inner.embed(texts)


@pytest.fixture(scope="module")
def embedder(tmp_path_factory):
    return tiny_embedder(tmp_path_factory.mktemp("tiny"))


def test_cuts_where_the_topic_changes(embedder):
    text = " ".join(ANIMALS + MONEY + ANIMALS)
    chunks = SemanticChunker(embedder=embedder, min_chunk_size=0, breakpoint_percentile=0.1).chunk(text)
    check_chunks(text, chunks, limit=1500)
    assert [c.text for c in chunks] == [" ".join(ANIMALS), " ".join(MONEY), " ".join(ANIMALS)]
    assert all(c.metadata["embedding_model"] == "tiny" and len(c.embedding) == 16 for c in chunks)
    assert np.dot(chunks[0].embedding, chunks[2].embedding) > 0.99


def test_sentence_vectors_are_not_attached_when_reuse_is_off(embedder):
    chunks = SemanticChunker(embedder=embedder, reuse_embeddings=False).chunk(" ".join(ANIMALS + MONEY))
    assert chunks and all(c.embedding is None and "embedding_model" not in c.metadata for c in chunks)


def test_threshold_variant_and_ceiling(embedder):
    text = " ".join(ANIMALS + MONEY)
    chunks = SemanticChunker(embedder=embedder, similarity_threshold=0.5).chunk(text)
    assert [c.text for c in chunks] == [" ".join(ANIMALS), " ".join(MONEY)]
    long = " ".join(ANIMALS * 40)  # no similarity drop at all: whole sentences up to the ceiling
    chunks = SemanticChunker(embedder=embedder, similarity_threshold=0.5, max_chunk_size=300).chunk(long)
    check_chunks(long, chunks, limit=300)
    assert len(chunks) > 5 and all(c.text[-1] == "." for c in chunks)


def test_min_merge_and_max_ceiling(embedder):
    text = " ".join(ANIMALS + MONEY) * 6
    chunks = SemanticChunker(embedder=embedder, min_chunk_size=100, max_chunk_size=300).chunk(text)
    check_chunks(text, chunks, limit=300)
    assert all(len(c.text) >= 100 for c in chunks[:-1])


def test_each_unique_sentence_embedded_once_in_batches(embedder):
    sentences = [f"The cat number {'abcdefghij'[k % 10]} is here." for k in range(70)]
    doc_text = "\n\n".join(" ".join(sentences[i:i + 7]) for i in range(0, 70, 7))
    sections, pos = [], 0
    for para in doc_text.split("\n\n"):
        start = doc_text.index(para, pos)
        sections.append(Section(start, start + len(para)))
        pos = start + len(para)
    doc = ParsedDocument("d", "u", "text/plain", doc_text, tuple(sections))
    counting = Counting(embedder)
    SemanticChunker(embedder=counting, batch_size=4).chunk_document(doc)
    assert counting.texts == 10  # 10 distinct sentences, each embedded once
    assert counting.calls <= math.ceil(10 / 4)


@pytest.mark.parametrize("text", ["", "One sentence only.", "Two sentences. Here they are.",
                                  "Same words. Same words. Same words. Same words."])
def test_degenerate_inputs(embedder, text):
    chunks = SemanticChunker(embedder=embedder).chunk(text)
    check_chunks(text, chunks, limit=1500)


def test_no_punctuation_twenty_thousand_tokens_stays_under_the_ceiling(embedder):
    text = " ".join(["cat dog bird fish"] * 5000)
    chunks = SemanticChunker(embedder=embedder, max_chunk_size=1500).chunk(text)
    check_chunks(text, chunks, limit=1500)
    chunks = SemanticChunker(embedder=embedder, similarity_threshold=0.5, max_chunk_size=256).chunk(text)
    check_chunks(text, chunks, limit=256)


def test_document_level_merges_similar_sections_with_page_ranges(embedder):
    parts = [" ".join(ANIMALS[:2]), " ".join(ANIMALS[2:]), " ".join(MONEY)]
    text = "\n\n".join(parts)
    sections, pos = [], 0
    for page, part in enumerate(parts, start=3):
        start = text.index(part, pos)
        sections.append(Section(start, start + len(part), page=page))
        pos = start + len(part)
    doc = ParsedDocument("d", "u", "application/pdf", text, tuple(sections))
    counting = Counting(embedder)
    chunks = SemanticChunker(embedder=counting, document_level=True).chunk_document(doc)
    assert counting.calls == 1
    assert [(c.metadata["page"], c.metadata["page_end"]) for c in chunks] == [(3, 4), (5, 5)]
    assert chunks[0].text == parts[0] + "\n\n" + parts[1]


def test_validation_says_the_scale(embedder):
    with pytest.raises(ConfigError, match="0-1 scale: did you mean 0.25"):
        SemanticChunker(embedder=embedder, breakpoint_percentile=25)
    with pytest.raises(ConfigError, match="min_chunk_size=2000 must not exceed"):
        SemanticChunker(embedder=embedder, min_chunk_size=2000)
    with pytest.raises(ConfigError, match="embedder must be"):
        SemanticChunker(embedder=42)
    check_pickle(SemanticChunker(embedder=embedder), " ".join(ANIMALS + MONEY))


@settings(max_examples=25)
@given(adversarial_text, st.sampled_from([40, 200]))
def test_bounded_exact_lossless(embedder, text, budget):
    chunker = SemanticChunker(embedder=embedder, min_chunk_size=10, max_chunk_size=budget)
    chunks = chunker.chunk(text)
    check_chunks(text, chunks, limit=budget)
    assert chunks == chunker.chunk(text)
