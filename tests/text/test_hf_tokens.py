"""HFTokenIndex and hf_token_windows on real tokenizers: MiniLM's WordPiece and BPE built here."""
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from beam_chunking.sizing import HFTokenizerSizer
from beam_chunking.text.hf_tokens import hf_token_windows, piece_rule
from tests.helpers import adversarial_text
from tests.hf_tokenizers import build_bpe, minilm_tokenizer


@pytest.fixture(scope="module", params=["minilm", "bytelevel", "metaspace"])
def sizer(request, tmp_path_factory):
    if request.param == "minilm":
        return HFTokenizerSizer(minilm_tokenizer())
    return HFTokenizerSizer(build_bpe(str(tmp_path_factory.mktemp("bpe")), request.param))


def own(sizer, text):
    """What the model sees: the text encoded alone, special tokens included."""
    return len(sizer._tokenizer().encode(text, add_special_tokens=True).ids)


def test_specials_counted_as_the_model_counts_them(sizer):
    assert sizer.specials == 2
    assert sizer.count("hello world") == own(sizer, "hello world")
    assert sizer.count("") == 0


def test_piece_rules_found():
    assert piece_rule(HFTokenizerSizer(minilm_tokenizer())._tokenizer()) == "space"


def test_offsets_map_to_the_original_string_when_normalisation_changes_lengths():
    # MiniLM lowercases "İ" into two code points and drops control characters; offsets still
    # index the original string, so every window is an exact span that fits.
    sizer = HFTokenizerSizer(minilm_tokenizer())
    text = ("İstanbul ﬁne caf\u00e9 e\u0301t\u00e9 ab\x1fcd a\u200bb 日本語 " * 30).strip()
    index = sizer.index(text, 0, len(text))
    windows = hf_token_windows(index, text, 0, len(text), 16, 4)
    for s, e, n in windows:
        assert n == own(sizer, text[s:e]) <= 16
    joined = "".join(text[s:e] for s, e, _ in windows)
    assert set(joined) >= set(text) - {" "}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=adversarial_text, spans=st.lists(st.tuples(st.integers(0, 600), st.integers(0, 600)), max_size=12))
def test_span_counts_are_own_counts(sizer, text, spans):
    index = sizer.index(text, 0, len(text))
    for a, b in spans:
        s, e = min(a, b, len(text)), min(max(a, b), len(text))
        assert index.count(text, s, e) == (own(sizer, text[s:e]) if e > s else 0), (text[s:e],)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=adversarial_text, window=st.integers(6, 40), overlap=st.integers(0, 10))
def test_windows_exact_bounded_and_covering(sizer, text, window, overlap):
    overlap = min(overlap, window - 1)
    windows = sizer.windows(text, 0, len(text), window, overlap)
    covered = bytearray(len(text))
    starts = []
    for s, e, n in windows:
        assert text[s:e].strip()
        assert n == own(sizer, text[s:e]) <= window
        starts.append(s)
        covered[s:e] = b"\x01" * (e - s)
    assert starts == sorted(set(starts))
    assert not [k for k, ch in enumerate(text) if not covered[k] and not ch.isspace()]
