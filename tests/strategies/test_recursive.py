import pytest
from hypothesis import given, strategies as st

from beam_chunking.errors import ConfigError
from beam_chunking.strategies import RecursiveChunker
from beam_chunking.types import ParsedDocument, Section
from tests.helpers import adversarial_text, check_chunks, check_long_text, check_pickle, check_properties


def test_defaults():
    c = RecursiveChunker()
    assert (c.max_chunk_size, c.overlap, c.separators) == (512, 50, ("\n\n", "\n", ". ", " ", ""))


def test_seed_sixty_short_lines_pack_into_two_chunks():
    text = "\n".join(f"line {i:02d} abcdefg" for i in range(60))  # 60 lines, 959 characters
    chunks = RecursiveChunker().chunk(text)
    assert len(chunks) == 2
    check_chunks(text, chunks, limit=512)
    # the second chunk carries overlap from the first, inside the ceiling
    assert chunks[1].start < chunks[0].end


def test_seed_periods_are_not_lost():
    text = "A. B. C"
    assert [c.text for c in RecursiveChunker(max_chunk_size=3, overlap=0).chunk(text)] == ["A.", "B.", "C"]
    assert [c.text for c in RecursiveChunker(max_chunk_size=8, overlap=0).chunk(text)] == ["A. B. C"]


def test_fit_check_before_split():
    text = "one\n\ntwo\nthree. four"
    assert [c.text for c in RecursiveChunker(max_chunk_size=100).chunk(text)] == [text]


def test_never_joins_across_levels():
    big = "word " * 30
    text = "short para\n\n" + big.strip() + "\n\nnext para"
    chunks = RecursiveChunker(max_chunk_size=40, overlap=0, min_chunk_size=0).chunk(text)
    # "short para" would fit with the first words of the big paragraph, but they are different levels
    assert chunks[0].text == "short para"
    assert chunks[-1].text == "next para"
    check_chunks(text, chunks, limit=40)


def test_section_offsets_and_metadata():
    text = "intro\n# H\nbody text here"
    doc = ParsedDocument("d", "u", "text/markdown", text,
                         (Section(0, 6), Section(6, len(text), level=1, heading_path=("H",), page=3)))
    chunks = RecursiveChunker().chunk_document(doc)
    assert [c.text for c in chunks] == ["intro", "# H\nbody text here"]
    assert chunks[1].metadata["heading"] == "H" and chunks[1].metadata["page"] == 3
    assert chunks[1].metadata["page_end"] == 3
    assert chunks[1].id == "d:0000000006"


def test_empty():
    assert RecursiveChunker().chunk("") == []


def test_validation():
    with pytest.raises(ConfigError, match="overlap=600"):
        RecursiveChunker(overlap=600)
    with pytest.raises(ConfigError, match="separators"):
        RecursiveChunker(separators=())


def test_pickle():
    check_pickle(RecursiveChunker(max_chunk_size=30, overlap=5))


def test_five_megabyte_line_without_spaces():
    check_long_text(RecursiveChunker(), "x" * 5_000_000, 512)


@given(adversarial_text, st.integers(1, 80), st.integers(0, 79))
def test_properties(text, size, overlap):
    check_properties(RecursiveChunker(max_chunk_size=size, overlap=min(overlap, size - 1)), text, size)
