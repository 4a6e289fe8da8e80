"""ClusterSemanticChunker on a tiny real ONNX model: topic cuts, the token ceiling, pieces embedded once."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from beam_chunking.errors import ConfigError
from beam_chunking.registry import get
from beam_chunking.strategies.cluster import ClusterSemanticChunker, best_partition, document_mean_similarity
from beam_chunking.types import ParsedDocument, Section
from tests.embeddings.fixtures import tiny_embedder
from tests.helpers import adversarial_text, check_chunks, check_pickle, check_properties, tokens

ANIMALS = ["The cat and the dog are in the barn.", "A horse is with a cow.", "The sheep and the goat eat.",
           "A lion and a tiger are very big.", "The wolf and the fox run."]
MONEY = ["The stock market price fell.", "A bank loan is debt.", "The fund has cash and shares.",
         "The tax rate on profit is high.", "A bond trade is a loss."]


class Counting:
    """A real embedder that counts its calls and the texts it was given."""

    def __init__(self, inner):
        self.inner, self.calls, self.seen, self.name = inner, 0, [], inner.name

    def embed(self, texts):
        self.calls += 1
        self.seen.extend(texts)
        return self.inner.embed(texts)


@pytest.fixture(scope="module")
def embedder(tmp_path_factory):
    return tiny_embedder(tmp_path_factory.mktemp("tiny"))


def test_cuts_where_the_topic_changes(embedder):
    # Golden case: three topic runs, each well under the ceiling; the cuts land between them.
    text = " ".join(ANIMALS + MONEY + ANIMALS)
    chunks = check_properties(ClusterSemanticChunker(embedder=embedder, max_chunk_size=100, min_chunk_size=0),
                              text, limit=100, measure=tokens)
    assert [c.text for c in chunks] == [" ".join(ANIMALS), " ".join(MONEY), " ".join(ANIMALS)]
    assert all(c.embedding is None for c in chunks)  # a chunk's vector is not its pieces' mean


def test_paragraph_breaks_are_preferred_cuts(embedder):
    # One topic in two paragraphs: similarity alone keeps them together; the penalty for a
    # pair across a line break decides the cut, and only when it is set.
    first, second, money = " ".join(ANIMALS[:3]), " ".join(ANIMALS[3:]), " ".join(MONEY)
    text = first + "\n" + second + "\n\n" + money
    together = ClusterSemanticChunker(embedder=embedder, paragraph_penalty=0, min_chunk_size=0).chunk(text)
    assert [c.text for c in together] == [first + "\n" + second, money]
    apart = ClusterSemanticChunker(embedder=embedder, paragraph_penalty=2, min_chunk_size=0).chunk(text)
    assert [c.text for c in apart] == [first, second, money]
    with pytest.raises(ConfigError, match="paragraph_penalty=3 must be a number between 0 and 2"):
        ClusterSemanticChunker(embedder=embedder, paragraph_penalty=3)


def test_hard_token_ceiling_on_text_without_a_topic_change(embedder):
    text = " ".join(ANIMALS * 40)
    chunks = check_properties(ClusterSemanticChunker(embedder=embedder, max_chunk_size=60), text, limit=60,
                              measure=tokens)
    assert len(chunks) > 5 and all(c.text.endswith(".") for c in chunks)  # whole sentences


def test_long_sentences_become_pieces_under_the_ceiling(embedder):
    text = " ".join(["cat dog bird fish"] * 3000)  # 12,000 tokens, no punctuation
    chunks = check_properties(ClusterSemanticChunker(embedder=embedder, max_chunk_size=256, piece_size=50), text,
                              limit=256, measure=tokens)
    assert len(chunks) >= 12000 // 256


def test_thousands_of_tiny_sentences_stay_exact_and_bounded(embedder):
    # Two-token pieces: the partition looks back at most MAX_PIECES pieces per chunk.
    text = "Go. " * 1000
    chunks = check_properties(ClusterSemanticChunker(embedder=embedder, max_chunk_size=400), text, limit=400,
                              measure=tokens)
    assert all(c.token_count >= 50 for c in chunks)  # the minimum holds where nothing forces less


def test_each_distinct_piece_embedded_once_in_batches(embedder):
    sentences = [f"The cat number {'abcdefghij'[k % 10]} is here." for k in range(70)]
    paragraphs = [" ".join(sentences[i:i + 7]) for i in range(0, 70, 7)]
    doc_text = "\n\n".join(paragraphs)
    sections, pos = [], 0
    for para in paragraphs:
        start = doc_text.index(para, pos)
        sections.append(Section(start, start + len(para)))
        pos = start + len(para)
    doc = ParsedDocument("d", "u", "text/plain", doc_text, tuple(sections))
    counting = Counting(embedder)
    chunks = ClusterSemanticChunker(embedder=counting, batch_size=4, max_chunk_size=40).chunk_document(doc)
    assert sorted(counting.seen) == sorted(set(sentences))  # 10 distinct sentences, each once
    assert counting.calls == math.ceil(10 / 4)
    # Sections are hard boundaries: no chunk crosses one.
    assert all(any(s.start <= c.start and c.end <= s.end for s in sections) for c in chunks)


def test_min_size_merges_and_flags_what_cannot_merge(embedder):
    text = " ".join(ANIMALS + MONEY)
    chunks = ClusterSemanticChunker(embedder=embedder, max_chunk_size=200, min_chunk_size=60).chunk(text)
    check_chunks(text, chunks, limit=200, measure=tokens)
    assert len(chunks) == 1 and "undersized" not in chunks[0].metadata  # one 85-token chunk beats two small
    short = "A cat."
    (only,) = ClusterSemanticChunker(embedder=embedder, min_chunk_size=10).chunk(short)
    assert only.text == short and only.metadata["undersized"] is True


@pytest.mark.parametrize("text", ["", "   \n\n ", "One sentence only.", "Same words. Same words. Same words."])
def test_degenerate_inputs(embedder, text):
    chunks = ClusterSemanticChunker(embedder=embedder).chunk(text)
    check_chunks(text, chunks, limit=400, measure=tokens)
    assert (chunks == []) == (not text.strip())


def test_validation_registry_and_pickle(embedder):
    assert ClusterSemanticChunker(embedder=embedder, max_chunk_size=40).floor == 10  # a quarter of the ceiling
    with pytest.raises(ConfigError, match="max_chunk_size must be an integer >= 4"):
        ClusterSemanticChunker(embedder=embedder, max_chunk_size=3)
    with pytest.raises(ConfigError, match="embedder must be"):
        ClusterSemanticChunker(embedder=42)
    strategy = get("cluster_semantic", embedder=embedder, max_chunk_size=64)
    assert isinstance(strategy, ClusterSemanticChunker) and strategy.unit == "cl100k_base tokens"
    check_pickle(strategy, " ".join(ANIMALS + MONEY))


def test_mean_similarity_and_partition_helpers():
    rng = np.random.default_rng(0)
    v = rng.normal(size=(7, 5))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    full = v @ v.T
    assert document_mean_similarity(v) == pytest.approx(full[~np.eye(7, dtype=bool)].mean())
    assert document_mean_similarity(v[:1]) == 0.0
    # Pieces 0-1 alike, 2-3 alike, the two pairs opposed: the best partition is [0, 1], [2, 3].
    band = np.array([[1.0, -1.0, -1.0], [-1.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    fits = [[True], [True, True], [True, True, True], [True, True, True, True]]
    small = [[False] * len(r) for r in fits]
    assert best_partition(band, fits, small) == [(0, 1), (2, 3)]


@settings(max_examples=60, deadline=None)
@given(adversarial_text, st.sampled_from([8, 40, 200]))
def test_bounded_exact_lossless_deterministic(embedder, text, budget):
    chunker = ClusterSemanticChunker(embedder=embedder, max_chunk_size=budget, min_chunk_size=min(10, budget),
                                     piece_size=min(50, budget))
    check_properties(chunker, text, limit=budget, measure=tokens)
