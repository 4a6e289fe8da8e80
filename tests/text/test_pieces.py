"""The bound on tokenizer pieces: long runs of one class are refused, everything else passes."""
import itertools

import pytest
from hypothesis import given, settings, strategies as st

from beam_chunking.errors import TextTooDense
from beam_chunking.text.pieces import MAX_PIECE_CHARS, check_piece_lengths


def _class(ch: str) -> str:
    if ch in " \t\n\r\x0b\x0c\x85\xa0\u3000\u2028":
        return "space"
    if ch.isalpha():
        return "letter"
    return "digit" if ch.isnumeric() else "other"


def _longest(text: str) -> int:
    """The longest run of one class other than digits, the slow and obvious way."""
    runs = [len(list(g)) for kind, g in itertools.groupby(text, _class) if kind != "digit"]
    return max(runs, default=0)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("a ,1中\n\u3000é"), st.integers(1, 30)), max_size=12),
       st.integers(1, 40))
def test_refuses_exactly_the_texts_with_a_run_over_the_limit(runs, limit):
    text = "".join(ch * n for ch, n in runs)
    if _longest(text) > limit:
        with pytest.raises(TextTooDense, match=f"more than {limit:,}"):
            check_piece_lengths(text, limit=limit)
    else:
        check_piece_lengths(text, limit=limit)


def test_the_span_alone_is_looked_at():
    text = "x" * 50 + " ab " * 10
    check_piece_lengths(text, 45, len(text), limit=10)
    with pytest.raises(TextTooDense, match="from character 30"):
        check_piece_lengths(text, 30, len(text), limit=10)


def test_the_message_names_the_run_and_the_way_out():
    text = "intro " + "=" * 25
    with pytest.raises(TextTooDense) as caught:
        check_piece_lengths(text, limit=20)
    assert "more than 20 punctuation or symbol characters in a row, from character 6" in str(caught.value)
    assert "--strategy recursive" in str(caught.value)


def test_a_long_text_of_words_and_a_genome_line_pass():
    check_piece_lengths("lorem ipsum dolor sit amet " * 400_000)  # 10.8 million characters
    check_piece_lengths("ACGT" * 500_000)  # 2 million bases, no line break


def test_tokenizers_refuse_a_run_too_long_to_encode_before_encoding_it():
    from beam_chunking.sizing import TiktokenSizer

    text = "a" * (MAX_PIECE_CHARS + 1)
    sizer = TiktokenSizer()
    for call in (lambda: sizer.count(text), lambda: sizer.encode(text), lambda: sizer.encode_span(text, 0, len(text)),
                 lambda: sizer.index(text, 0, len(text))):
        with pytest.raises(TextTooDense, match=f"more than {MAX_PIECE_CHARS:,} letters"):
            call()


def test_a_token_sized_strategy_refuses_the_document_not_the_process():
    from beam_chunking import StructuralChunker, TokenChunker

    text = "A title\n\nSome words before. " + "q" * (MAX_PIECE_CHARS + 1) + " and after."
    for strategy in (StructuralChunker(), TokenChunker()):
        with pytest.raises(TextTooDense):
            strategy.chunk(text)


def test_a_model_tokenizer_refuses_it_too():
    pytest.importorskip("tokenizers")
    from beam_chunking.sizing import HFTokenizerSizer
    from tests.hf_tokenizers import minilm_tokenizer

    text = " " * (MAX_PIECE_CHARS + 1)
    sizer = HFTokenizerSizer(minilm_tokenizer())
    for call in (lambda: sizer.count(text), lambda: sizer.encode_span(text, 0, len(text)),
                 lambda: sizer.index(text, 0, len(text))):
        with pytest.raises(TextTooDense, match="whitespace characters"):
            call()
