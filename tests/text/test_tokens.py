"""The per-token tables of ``beam_chunking.text.tokens`` against the text they index."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from beam_chunking.text.tokens import (_ENDS_WS, _GOOD, _LETTER, _NON_LETTER, _SOFT, _STARTS_CHAR, TokenIndex,
                                       _char_class)
from tests.helpers import CL100K

ENC = CL100K.tiktoken_encoding

# Common and rare ideographs (cl100k cuts many rare ones into two or three byte tokens),
# kana, Hangul, the punctuation letter ends sit before, ASCII, and characters of neither class.
CJK_TEXT = st.text(
    alphabet=st.one_of(
        st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF),
        st.characters(min_codepoint=0x3000, max_codepoint=0x30FF),
        st.characters(min_codepoint=0xAC00, max_codepoint=0xD7A3),
        st.characters(min_codepoint=0xFF01, max_codepoint=0xFF65),
        st.sampled_from("亚距岛母斯令略吗克框围封兰。、，．！？「」\n\n >abc Z1 \u00a0\u2014\u2026\U00020000\U0001F600"),
    ),
    max_size=300,
)


def reference_offsets(piece: str, ids: np.ndarray):
    """Character offset and whether it is a character boundary, per token boundary, from the bytes."""
    raw = piece.encode("utf-8")
    starts = [b & 0xC0 != 0x80 for b in raw] + [True]
    before = np.concatenate([[0], np.cumsum(starts[:-1])])
    boff = np.concatenate([[0], np.cumsum([len(ENC.decode_single_token_bytes(int(t))) for t in ids])]).astype(int)
    return before[boff].astype(np.int64), np.asarray(starts)[boff]


def reference_letter_ends(piece: str, coff: np.ndarray, char_ok: np.ndarray) -> np.ndarray:
    """A boundary between a letter and a non-letter, decided character by character."""
    cls = [_char_class(c) for c in piece]
    at = np.zeros(len(piece) + 1, dtype=bool)
    for i in range(1, len(piece)):
        at[i] = cls[i - 1] == _LETTER and cls[i] == _NON_LETTER
    return at[coff] & char_ok


@settings(max_examples=300)
@given(CJK_TEXT)
def test_offsets_and_letter_ends_read_from_tokens_equal_the_texts(text):
    tk = TokenIndex(ENC, text, 0, len(text))
    ids = np.asarray(ENC.encode_ordinary(text), dtype=np.int64)
    coff, char_ok = reference_offsets(text, ids)
    assert tk.coff.tolist() == coff.tolist()
    assert tk.char_ok.tolist() == char_ok.tolist()
    assert tk._letter_ends(text).tolist() == reference_letter_ends(text, coff, char_ok).tolist()


def test_letter_ends_after_characters_cut_into_byte_tokens():
    # 亚, 距 and 岛 are each two or three cl100k tokens: the class of the character before
    # the boundary comes from more than one token.
    text = "亚。距\n\n岛？克>"
    cut = [t for t in ENC.encode_ordinary(text) if len(ENC.decode_single_token_bytes(t)) < 3]
    assert cut, "the test needs characters that cl100k cuts"
    tk = TokenIndex(ENC, text, 0, len(text))
    ends = sorted(int(tk.coff[k]) for k in np.flatnonzero(tk._letter_ends(text)))
    assert ends == [1, 3, 6, 8]


def test_an_index_of_a_slice_keeps_document_offsets():
    text = "前置き。" + "日本語の文章、亚。" * 5
    tk = TokenIndex(ENC, text, 4, len(text))
    ids = np.asarray(ENC.encode_ordinary(text[4:]), dtype=np.int64)
    coff, char_ok = reference_offsets(text[4:], ids)
    assert tk.coff.tolist() == (coff + 4).tolist()
    assert tk._letter_ends(text).tolist() == reference_letter_ends(text[4:], coff, char_ok).tolist()


def test_edge_classes_of_tokens_that_are_not_utf8():
    from beam_chunking.text.tokens import _CUT, _edge_classes

    assert _edge_classes(b"\xe4A") == (0, _LETTER)  # a lead byte followed by ASCII
    assert _edge_classes(b"\xe4\xb8") == (0, 0)  # the start of an ideograph: never a non-letter
    assert _edge_classes(b"\xe3\x80") == (_CUT, 0)  # the start of CJK punctuation
    assert _edge_classes(b"\x80\x80") == (0, _CUT)  # the end of some character
    assert _edge_classes("、x".encode()) == (_NON_LETTER, _LETTER)


class _Vocabulary:
    """A tiny encoding: ids 4 and 5 are unused, the last used token is not ASCII."""

    name = "test-vocabulary"
    n_vocab = 6
    _tokens = {0: b"a", 1: " 中".encode(), 2: b"\xe3\x80", 3: "、".encode()}

    def decode_single_token_bytes(self, i):
        return self._tokens[i]  # KeyError for an unused id, as tiktoken raises


def test_tables_of_a_vocabulary_with_unused_last_ids():
    from beam_chunking.text.tokens import _FIRST_SHIFT, _LAST_SHIFT, _Tables, _edge_classes

    tables = _Tables(_Vocabulary())
    expected_starts = [sum(1 for b in t if b & 0xC0 != 0x80) for t in _Vocabulary._tokens.values()] + [0, 0]
    assert tables.starts.tolist() == expected_starts
    for i, token in _Vocabulary._tokens.items():
        flags = int(tables.flags[i])
        assert ((flags >> _FIRST_SHIFT) & 3, (flags >> _LAST_SHIFT) & 3) == _edge_classes(token)
    assert tables.flags[4] == tables.flags[5] == 0
    # The low bits, written out: "a" begins a character and ends without whitespace; " 中"
    # starts with a space (soft) but not with a space and an ASCII letter (not good), and
    # ends in a non-ASCII byte; the cut b"\xe3\x80" begins a character.
    low = [int(f) & 0x0F for f in tables.flags[:4]]
    assert low == [_STARTS_CHAR, _SOFT | _ENDS_WS | _STARTS_CHAR, _ENDS_WS | _STARTS_CHAR, _ENDS_WS | _STARTS_CHAR]


class _LongTokens(_Vocabulary):
    """A vocabulary with a token of 300 characters, more than one byte can count."""

    name = "test-long-tokens"
    n_vocab = 3
    _tokens = {0: b"x" * 300, 1: b" b", 2: "中".encode()}


def test_tables_count_the_characters_of_tokens_longer_than_a_byte_holds():
    from beam_chunking.text.tokens import _Tables

    tables = _Tables(_LongTokens())
    assert tables.starts.tolist() == [300, 2, 1]
    ids = np.asarray([0, 1, 2, 0])
    assert np.cumsum(tables.starts[ids], dtype=np.int64).tolist() == [300, 302, 303, 603]


def test_the_flags_of_every_cl100k_token_follow_their_definitions():
    """The tables are built with array operations; each token's flags, from its own bytes."""
    from beam_chunking.text.tokens import _FIRST_SHIFT, _LAST_SHIFT, _edge_classes, _tables

    tables = _tables(ENC)
    ws = b" \n\t\r"
    for i in range(ENC.n_vocab):
        try:
            t = ENC.decode_single_token_bytes(i)
        except KeyError:
            assert tables.flags[i] == 0 and tables.starts[i] == 0
            continue
        letter = len(t) > 1 and chr(t[1]).isascii() and chr(t[1]).isalpha()
        want = ((_GOOD if t[0] == 0x20 and letter else 0) | (_SOFT if t[0] in ws else 0)
                | (_ENDS_WS if t[-1] in ws or t[-1] >= 0x80 else 0) | (_STARTS_CHAR if t[0] & 0xC0 != 0x80 else 0))
        head, tail = _edge_classes(t)
        assert int(tables.flags[i]) == want | head << _FIRST_SHIFT | tail << _LAST_SHIFT, (i, t)
        assert tables.starts[i] == sum(1 for b in t if b & 0xC0 != 0x80), (i, t)


@settings(max_examples=300)
@given(st.lists(st.booleans(), min_size=1, max_size=80), st.lists(st.tuples(st.integers(-5, 82), st.integers(-5, 82)),
                                                                 min_size=1, max_size=6))
def test_last_and_first_answer_alike_on_the_first_question_and_later_ones(bits, ranges):
    # The first question about a mask searches the asked range only, later ones the mask's index.
    # The C scan (where built) answers the same.
    tk = TokenIndex(ENC, "x", 0, 1)
    mask = np.asarray(bits)
    tk.indexed_last(mask, 0, 0)
    assert tk._index_of[id(mask)][1] is None  # asked once: no index built
    tk.indexed_first(mask, 0, 0)
    assert tk._index_of[id(mask)][1] is not None  # asked again: indexed
    tk = TokenIndex(ENC, "x", 0, 1)
    for lo, hi in ranges * 2:
        held = [k for k in range(max(lo, 0), min(hi, len(bits) - 1) + 1) if bits[k]]
        want_last, want_first = (held[-1], held[0]) if held and hi >= lo else (-1, -1)
        assert tk.last(mask, lo, hi) == tk.indexed_last(mask, lo, hi) == want_last
        assert tk.first(mask, lo, hi) == tk.indexed_first(mask, lo, hi) == want_first


def test_ranges_ending_before_zero_hold_nothing():
    # A slice would count a negative end from the back of the mask: [0:-1] is not empty.
    tk = TokenIndex(ENC, "x", 0, 1)
    mask = np.array([True, False, False])
    for lo, hi in [(-2, -2), (-5, -2), (-1, -1)]:
        assert tk.indexed_last(mask, lo, hi) == tk.indexed_first(mask, lo, hi) == -1
        assert tk.last(mask, lo, hi) == tk.first(mask, lo, hi) == -1


def test_the_c_scan_refuses_masks_that_are_not_bytes():
    from beam_chunking.text import tokens

    if not tokens.NATIVE_SCAN:
        pytest.skip("the C extension was not built (no compiler at install)")
    tk = TokenIndex(ENC, "x", 0, 1)
    for bad in (np.zeros(4, dtype=np.int64), np.zeros((2, 2), dtype=bool), [True, False]):
        with pytest.raises(TypeError):
            tk.last(bad, 0, 3)
    with pytest.raises(ValueError, match="contiguous"):  # a strided view is refused, not misread
        tk.first(np.ones(8, dtype=bool)[::2], 0, 3)
    assert tk.last(np.ones(5, dtype=np.uint8), -3, 99) == 4 and tk.first(np.ones(5, dtype=bool), -3, 99) == 0


def test_a_span_starting_inside_a_token_of_the_larger_encoding_is_cut_on_its_own():
    # "...ocious🇫🇷": the flag's first bytes merge with the letters before it, so a span that
    # starts inside the word has no boundary of the larger encoding to fit a window on.
    from beam_chunking.text.tokens import token_windows

    enc = CL100K.tiktoken_encoding
    text = "expialidocious🇫🇷xx"
    windows = token_windows(enc, text, 9, 18, 4, 0, TokenIndex(enc, text, 0, len(text)))
    assert windows == token_windows(enc, text, 9, 18, 4, 0)
    assert all(len(enc.encode_ordinary(text[s:e])) == n <= 4 for s, e, n in windows)
    assert "".join(text[s:e] for s, e, _ in windows) == text[9:18]
