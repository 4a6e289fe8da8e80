import os

import pytest
from hypothesis import given, strategies as st

from beam_chunking.errors import ConfigError
from beam_chunking.strategies import TokenChunker
from tests.helpers import CL100K, adversarial_text, check_chunks, check_long_text, check_pickle, check_properties, tokens

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "examples")


def test_model_names_map_to_cl100k():
    for model in ("gpt-4", "gpt-3.5-turbo", "text-embedding-ada-002", "text-embedding-3-small",
                  "text-embedding-3-large", "cl100k_base"):
        assert TokenChunker(tokenizer=model).sizer.name == "cl100k_base"
    assert TokenChunker().unit == "cl100k_base tokens"


def test_unknown_tokenizer_refused():
    with pytest.raises(ConfigError, match="no-such-model"):
        TokenChunker(tokenizer="no-such-model")


def test_overlap_not_below_size_fails_at_construction():
    with pytest.raises(ConfigError, match="overlap=32 must be smaller than TokenChunker.max_chunk_size=32"):
        TokenChunker(max_chunk_size=32, overlap=32)
    with pytest.raises(ConfigError, match="overlap=50 must be smaller than TokenChunker.max_chunk_size=32"):
        TokenChunker(max_chunk_size=32)  # the default overlap does not fit either


def test_window_below_four_refused():
    with pytest.raises(ConfigError, match=">= 4"):
        TokenChunker(max_chunk_size=3, overlap=0)


def test_windows_are_bounded_and_overlap():
    text = " ".join(f"word{i}" for i in range(2000))
    chunks = TokenChunker(max_chunk_size=64, overlap=8).chunk(text)
    check_chunks(text, chunks, limit=64, measure=tokens)
    for c in chunks:
        assert c.token_count == tokens(c.text)
    assert all(b.start < a.end for a, b in zip(chunks, chunks[1:]))


def test_special_token_strings_are_text():
    text = "before <|endoftext|> after <|fim_prefix|> end " * 50
    chunks = TokenChunker(max_chunk_size=16, overlap=2).chunk(text)
    check_chunks(text, chunks, limit=16, measure=tokens)


def test_multibyte_never_split_into_replacement_chars():
    text = "👩‍👩‍👧 日本語のテキスト 🇫🇷 e\u0301 " * 40
    chunks = TokenChunker(max_chunk_size=5, overlap=1).chunk(text)
    check_chunks(text, chunks, limit=5, measure=tokens)
    assert all("\ufffd" not in c.text for c in chunks)


def test_count_exact_when_trimming_after_multibyte_tokens():
    # Found by hypothesis: boundaries inside an emoji share its offset; the count must not shrink.
    text = "the" * 14 + "v1.2.3\U0001F44D\U0001F3FD  the"
    for c in TokenChunker(max_chunk_size=27, overlap=0).chunk(text):
        assert c.token_count == tokens(c.text)


def test_hangul_whose_tokens_straddle_syllables_fits_the_smallest_window():
    # "토큰" is five cl100k tokens, one of them the last byte of 토 with the first of 큰: no
    # token boundary falls between the syllables, so windows are cut by characters there.
    for text in ("토큰", "토큰 " * 30 + "끝", "가" + "토큰" * 50):
        chunks = TokenChunker(max_chunk_size=4, overlap=0).chunk(text)
        check_chunks(text, chunks, limit=4, measure=tokens)
        assert all(c.token_count == tokens(c.text) for c in chunks)


def test_letter_ends_make_cjk_windows_exact_without_recounting():
    text = "日本語のテキストです。句読点、そして漢字。" * 200
    chunks = TokenChunker(max_chunk_size=64, overlap=8).chunk(text)
    check_chunks(text, chunks, limit=64, measure=tokens)
    assert all(c.token_count == tokens(c.text) for c in chunks)


def test_empty():
    assert TokenChunker().chunk("") == []
    assert TokenChunker().chunk("  \n ") == []


def test_pickle_drops_the_encoder():
    check_pickle(TokenChunker(max_chunk_size=8, overlap=2))


def test_the_longest_line_a_tokenizer_is_given():
    from beam_chunking.text.pieces import MAX_PIECE_CHARS

    # One letter run of MAX_PIECE_CHARS (4 MB); one character more is refused (tests/text/test_pieces.py).
    check_long_text(TokenChunker(max_chunk_size=512, overlap=0), "ab" * (MAX_PIECE_CHARS // 2), 512,
                    size_of=lambda c: c.token_count)


@given(adversarial_text, st.integers(4, 40), st.integers(0, 39))
def test_properties(text, window, overlap):
    strategy = TokenChunker(max_chunk_size=window, overlap=min(overlap, window - 1))
    check_properties(strategy, text, window, measure=tokens)


@given(adversarial_text, st.data())
def test_encoded_count_equals_own_tokenization(text, data):
    """The head/middle/tail count is exact for any span of an encoded section."""
    from beam_chunking.text.tokens import TokenIndex

    if not text:
        return
    tk = TokenIndex(CL100K.tiktoken_encoding, text, 0, len(text))
    for _ in range(5):
        cs = data.draw(st.integers(0, len(text) - 1))
        ce = data.draw(st.integers(cs + 1, len(text)))
        assert tk.count(text, cs, ce) == tokens(text[cs:ce]), (cs, ce)


# Letters and non-letters on both sides of every range the letter-end boundaries use, and the
# characters next to them that the ranges leave out on purpose (marks, the prolonged sound
# mark, iteration marks, full-width letters and digits, a letter-like number).
CJK_ALPHABET = ("日本語中文한국어ひらがなカタカナーゝ々〆〇、。，．・「」『』（）！？：；〜…—"
                "\u3099\u309a\u0301ＡＢａｂ１２Ⅻ①abcXYZ019 .,;:'!?-_()[]\n\r\t\u00a0\u3000"
                "\u4e00\u9fa5\u9fa6\u9fff\u3400\u4db5\u4db6\uac00\ud7a3\ud7a4\u3041\u3094\u3095\u30a1\u30fa\u30fb"
                "\U00020000\U0001F600")


@given(st.text(alphabet=CJK_ALPHABET, min_size=1, max_size=200), st.data())
def test_encoded_count_equals_own_tokenization_on_cjk_and_punctuation(text, data):
    """Counts that cut at letter ends (before 。 and 、) stay exact."""
    from beam_chunking.text.tokens import TokenIndex

    tk = TokenIndex(CL100K.tiktoken_encoding, text, 0, len(text))
    for _ in range(8):
        cs = data.draw(st.integers(0, len(text) - 1))
        ce = data.draw(st.integers(cs + 1, len(text)))
        assert tk.count(text, cs, ce) == tokens(text[cs:ce]), (cs, ce)


def test_encoded_count_on_real_cjk_text():
    from beam_chunking.text.tokens import TokenIndex

    text = ("日本語の文章は、句読点で区切られる。東京は日本の首都であり、人口は多い。"
            "中文的句子也用标点符号分开。北京是中国的首都，历史悠久。"
            "한국어 문장은 띄어쓰기를 사용한다. 서울은 한국의 수도이다.\n") * 20
    tk = TokenIndex(CL100K.tiktoken_encoding, text, 0, len(text))
    for cs in range(0, len(text) - 300, 13):
        for ce in (cs + 1, cs + 37, cs + 299):
            assert tk.count(text, cs, ce) == tokens(text[cs:ce])


def test_encoded_count_on_real_prose():
    from beam_chunking.text.tokens import TokenIndex

    text = open(os.path.join(EXAMPLES, "printing-press.txt"), encoding="utf-8").read()
    tk = TokenIndex(CL100K.tiktoken_encoding, text, 0, len(text))
    for cs in range(0, len(text) - 300, 37):
        for ce in (cs + 1, cs + 50, cs + 299):
            assert tk.count(text, cs, ce) == tokens(text[cs:ce])
