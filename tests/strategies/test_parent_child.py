"""Parent–child chunking: children inside parents, ids that join, any strategy on either side."""
import pickle

import pytest
from hypothesis import given, strategies as st

from beam_chunking.errors import ConfigError
from beam_chunking.strategies import FixedSizeChunker, RecursiveChunker, SentenceChunker, TokenChunker
from beam_chunking.strategies.base import text_document
from beam_chunking.strategies.parent_child import ParentChildChunker, within
from beam_chunking.types import ParsedDocument, Section

PROSE = " ".join(f"Sentence {k} talks about topic {k % 7} in some detail." for k in range(200))


def test_children_lie_inside_their_parents_and_name_them():
    pc = ParentChildChunker(parent=TokenChunker(max_chunk_size=256, overlap=0),
                            child=SentenceChunker(max_chunk_size=48, overlap=0))
    doc = text_document(PROSE)
    children, parents = pc.chunk_with_parents(doc)
    by_id = {p.id: p for p in parents}
    assert len(parents) > 3 and len(children) > len(parents)
    for c in children:
        p = by_id[c.metadata["parent_id"]]
        assert p.start <= c.start < c.end <= p.end and c.text == doc.text[c.start:c.end]
        assert c.token_count <= 48
    assert [c.index for c in children] == list(range(len(children)))
    assert pc.chunk_document(doc) == children


def test_sections_and_their_metadata_are_kept_in_the_children():
    text = "Page one text. More of page one.\n\nPage two text."
    doc = ParsedDocument("d", "u", "application/pdf", text,
                         (Section(0, 32, page=1, heading_path=("Intro",)), Section(34, len(text), page=2)))
    children, parents = ParentChildChunker().chunk_with_parents(doc)
    assert len(parents) == 2  # the token parent keeps sections apart
    assert [(c.metadata["page"], c.metadata.get("heading")) for c in children] == [(1, "Intro"), (2, None)]


def test_children_of_overlapping_parents_get_distinct_ids():
    pc = ParentChildChunker(parent=FixedSizeChunker(max_chunk_size=300, overlap=150),
                            child=RecursiveChunker(max_chunk_size=100, overlap=0))
    children, _ = pc.chunk_with_parents(text_document(PROSE[:2000]))
    assert len({c.id for c in children}) == len(children)


def test_within_clips_sections_to_the_span():
    doc = ParsedDocument("d", "u", "text/plain", "abcdefghij", (Section(0, 4), Section(5, 10)))
    assert [(s.start, s.end) for s in within(doc, 2, 7).sections] == [(2, 4), (5, 7)]


@given(st.text(alphabet=st.sampled_from("ab .\n漢😀é\r"), max_size=600))
def test_any_text_children_are_exact_and_inside_a_parent(text):
    doc = text_document(text)
    children, parents = ParentChildChunker(parent=RecursiveChunker(max_chunk_size=80, overlap=10),
                                           child=RecursiveChunker(max_chunk_size=20, overlap=0)).chunk_with_parents(doc)
    spans = {p.id: (p.start, p.end) for p in parents}
    for c in children:
        s, e = spans[c.metadata["parent_id"]]
        assert s <= c.start < c.end <= e and c.text == text[c.start:c.end] and len(c.text) <= 20


def test_options_are_strategies_and_it_pickles():
    with pytest.raises(ConfigError, match="ParentChildChunker.child must be a strategy"):
        ParentChildChunker(child="sentence")
    pc = ParentChildChunker()
    assert pickle.loads(pickle.dumps(pc)) == pc
    assert pc.unit == "parents: cl100k_base tokens; children: cl100k_base tokens"
    assert ParentChildChunker().chunk("") == []
