import pytest
from hypothesis import given, strategies as st

from beam_chunking.errors import ConfigError
from beam_chunking.strategies import FixedSizeChunker
from tests.helpers import adversarial_text, check_chunks, check_long_text, check_pickle, check_properties


def test_defaults_and_units():
    c = FixedSizeChunker()
    assert (c.max_chunk_size, c.overlap) == (512, 50)


def test_golden_cuts_at_whitespace():
    text = "alpha beta gamma delta epsilon zeta"
    chunks = FixedSizeChunker(max_chunk_size=12, overlap=0).chunk(text)
    assert [c.text for c in chunks] == ["alpha beta", "gamma delta", "epsilon zeta"]
    check_chunks(text, chunks, limit=12)


def test_overlap_starts_at_a_word_and_stays_under_ceiling():
    text = "alpha beta gamma delta epsilon zeta"
    chunks = FixedSizeChunker(max_chunk_size=12, overlap=5).chunk(text)
    assert [c.text for c in chunks][:2] == ["alpha beta", "beta gamma"]
    check_chunks(text, chunks, limit=12)


def test_hard_cut_only_without_whitespace():
    text = "x" * 25
    chunks = FixedSizeChunker(max_chunk_size=10, overlap=0).chunk(text)
    assert [len(c.text) for c in chunks] == [10, 10, 5]


def test_hard_cut_keeps_grapheme_clusters():
    text = "e\u0301" * 20
    chunks = FixedSizeChunker(max_chunk_size=5, overlap=0).chunk(text)
    for c in chunks:
        assert not c.text[0] == "\u0301"
    check_chunks(text, chunks, limit=5)


def test_hard_cut_never_splits_crlf():
    text = "ab\r\n" * 10
    for size in range(2, 9):
        for c in FixedSizeChunker(max_chunk_size=size, overlap=0).chunk(text.replace("\r\n", "\r\nx")):
            assert not c.text.startswith("\n")


def test_empty_and_whitespace_input():
    assert FixedSizeChunker().chunk("") == []
    assert FixedSizeChunker().chunk(" \n\t ") == []


@pytest.mark.parametrize("kwargs", [dict(max_chunk_size=0), dict(overlap=-1), dict(max_chunk_size=10, overlap=10)])
def test_validation_names_field(kwargs):
    with pytest.raises(ConfigError) as err:
        FixedSizeChunker(**kwargs)
    assert "FixedSizeChunker." in str(err.value)


def test_pickle_round_trip():
    check_pickle(FixedSizeChunker(max_chunk_size=20, overlap=5))


def test_five_megabyte_line():
    check_long_text(FixedSizeChunker(), ("word " * 1_000_000).strip(), 512)


@given(adversarial_text, st.integers(1, 60), st.integers(0, 59))
def test_properties(text, size, overlap):
    check_properties(FixedSizeChunker(max_chunk_size=size, overlap=min(overlap, size - 1)), text, size)
