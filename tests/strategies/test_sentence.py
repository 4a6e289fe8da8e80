import pytest
from hypothesis import given, strategies as st

from beam_chunking.errors import ConfigError
from beam_chunking.strategies import SentenceChunker
from beam_chunking.text.sentences import sentence_spans
from tests.helpers import adversarial_text, check_chunks, check_long_text, check_pickle, check_properties, tokens


def sentences(text):
    return [text[s:e] for s, e in sentence_spans(text, 0, len(text))]


def test_abbreviations_do_not_split():
    text = "Dr. Smith and Mrs. Jones travelled to the U.S. capital. They stayed a week."
    assert sentences(text) == ["Dr. Smith and Mrs. Jones travelled to the U.S. capital.", "They stayed a week."]


@pytest.mark.parametrize("text", [
    "Pi is about 3.14 today.", "Version v1.2.3 shipped.", "See https://example.org/a.b/c.html now.",
    "Mail first.last@example.co.uk please.", "It cost e.g. ten dollars.",
])
def test_numbers_urls_and_emails_stay_whole(text):
    assert sentences(text) == [text]


def test_cjk_splits_without_spaces():
    text = "今日は晴れです。明日は雨でしょう！本当？"
    assert sentences(text) == ["今日は晴れです。", "明日は雨でしょう！", "本当？"]
    assert "".join(sentences(text)) == text


def test_blank_line_is_a_boundary():
    assert sentences("Title without stop\n\nBody. More.") == ["Title without stop", "Body.", "More."]


def test_groups_with_sentence_overlap():
    text = " ".join(f"Sentence number {i} is here." for i in range(40))
    chunks = SentenceChunker(max_chunk_size=40, overlap=8).chunk(text)
    check_chunks(text, chunks, limit=40, measure=tokens)
    # every chunk starts and ends on sentence boundaries
    starts = {s for s, _ in sentence_spans(text, 0, len(text))}
    assert all(c.start in starts for c in chunks)
    assert all(b.start < a.end for a, b in zip(chunks, chunks[1:]))


def test_long_sentence_is_cut_by_tokens():
    text = "Short one. " + "word " * 300 + "end. Last one."
    chunks = SentenceChunker(max_chunk_size=32, overlap=4).chunk(text)
    check_chunks(text, chunks, limit=32, measure=tokens)


def test_five_megabyte_line_without_punctuation():
    text = "Start here. " + "word " * 1_000_000 + "end."
    check_long_text(SentenceChunker(), text.strip(), 512, size_of=lambda c: c.token_count)


def test_validation():
    with pytest.raises(ConfigError, match="overlap=64 must be smaller"):
        SentenceChunker(max_chunk_size=64, overlap=64)


def test_empty_and_pickle():
    assert SentenceChunker().chunk("") == []
    check_pickle(SentenceChunker(max_chunk_size=16, overlap=4))


@given(adversarial_text, st.integers(4, 40), st.integers(0, 39))
def test_properties(text, budget, overlap):
    strategy = SentenceChunker(max_chunk_size=budget, overlap=min(overlap, budget - 1))
    check_properties(strategy, text, budget, measure=tokens)
