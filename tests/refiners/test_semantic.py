"""SemanticRefiner: oversized chunks of any strategy split at sentence boundaries."""
from __future__ import annotations

import pytest

from beam_chunking.errors import ConfigError
from beam_chunking.refiners import Refined, SemanticRefiner
from beam_chunking.registry import get
from beam_chunking.strategies import HierarchicalChunker
from beam_chunking.types import ParsedDocument, Section
from tests.embeddings.fixtures import tiny_embedder
from tests.helpers import check_chunks

ANIMALS = "The cat and the dog are in the barn. A horse is with a cow. The sheep and the goat eat. "
MONEY = "The stock market price fell. A bank loan is debt. The fund has cash and shares. "


def paged_doc(text):
    return ParsedDocument("d", "u", "application/pdf", text, (
        Section(0, len(text) // 2, level=1, heading_path=("Chapter",), page=4),
        Section(len(text) // 2, len(text), level=1, heading_path=("Chapter",), page=5)))


def test_hierarchical_subtrees_bounded_and_page_range_kept():
    text = "Chapter\n\n" + (ANIMALS + MONEY) * 12
    doc = paged_doc(text)
    chunks = Refined(HierarchicalChunker(), SemanticRefiner(max_chunk_size=300)).chunk_document(doc)
    check_chunks(text, chunks, limit=300)
    assert len(chunks) > 5
    parent = HierarchicalChunker().chunk_document(doc)[0]
    assert all((c.metadata["page"], c.metadata["page_end"]) == (4, 5) for c in chunks)
    assert all(c.metadata["refined_from"] == parent.id for c in chunks)
    assert all(c.text.endswith(".") for c in chunks)  # sentence boundaries


def test_with_an_embedder_cuts_at_the_topic_shift(tmp_path):
    text = ANIMALS * 3 + MONEY * 3
    refiner = SemanticRefiner(max_chunk_size=len(text) - 10, embedder=tiny_embedder(tmp_path))
    chunks = refiner.refine(ParsedDocument("d", "u", "text/plain", text, (Section(0, len(text)),)),
                            get("fixed", max_chunk_size=5000, overlap=0).chunk(text))
    assert [c.text for c in chunks] == [(ANIMALS * 3).strip(), (MONEY * 3).strip()]


def test_small_chunks_pass_through_and_long_sentences_are_cut():
    text = "word " * 700
    doc = ParsedDocument("d", "u", "text/plain", text, (Section(0, len(text)),))
    chunks = SemanticRefiner(max_chunk_size=500).refine(doc, HierarchicalChunker().chunk_document(doc))
    check_chunks(text, chunks, limit=500)
    short = get("recursive").chunk("Short text.")
    assert SemanticRefiner().refine(ParsedDocument("", "", "text/plain", "Short text.", ()), short) == short
    with pytest.raises(ConfigError):
        SemanticRefiner(max_chunk_size=0)
