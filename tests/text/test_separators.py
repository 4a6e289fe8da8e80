"""The C separator splitter gives the spans of the Python reference, on any text."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from beam_chunking.strategies.recursive import DEFAULT_SEPARATORS
from beam_chunking.text import separators
from beam_chunking.text.separators import python_separator_spans, separator_spans
from tests.helpers import adversarial_text

native = pytest.mark.skipif(not separators.NATIVE, reason="the C extension was not built (no compiler at install)")

# Custom lists too: separators with trailing whitespace, "" in the middle, none at all, no "".
separator_lists = st.one_of(
    st.just(DEFAULT_SEPARATORS),
    st.lists(st.sampled_from(["\n\n", "\n", ". ", " ", "", "。", ", ", "\t", "ab", "  \n", "\u3000", " .",
                              "\u2028", "\ud800"]), min_size=1, max_size=6).map(tuple),
)


def sizes():
    return st.integers(1, 120).flatmap(lambda size: st.tuples(st.just(size), st.integers(0, size - 1)))


# Unicode spaces beyond ASCII, line separators and a lone surrogate, which str allows.
odd_text = st.lists(st.sampled_from(["a", "b ", "\u3000", "\x1c", "\x85", "\u2028", "\ud800", " .", "。", "\n"]),
                    max_size=200).map("".join)


@native
@settings(max_examples=400, deadline=None)
@given(st.one_of(adversarial_text, odd_text), separator_lists, sizes(), st.data())
def test_native_equals_python(text, seps, size_overlap, data):
    size, overlap = size_overlap
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    expected = python_separator_spans(text, start, end, seps, size, overlap)
    assert separators._native.separator_spans(text, start, end, seps, size, overlap, separators.safe_cut,
                                              separators.unaligned_overlap) == expected


@native
def test_native_equals_python_on_one_long_line():
    # One line of 5 MB without separators: every cut is a hard cut through the Python callback.
    text = ("word" * 7 + "é\u0301") * 170_000
    assert separator_spans(text, 0, len(text), DEFAULT_SEPARATORS, 512, 50) == python_separator_spans(
        text, 0, len(text), DEFAULT_SEPARATORS, 512, 50)


@native
def test_native_refuses_bad_bounds_and_passes_callback_errors():
    with pytest.raises(ValueError, match="out of range"):
        separators._native.separator_spans("abc", 2, 1, (" ",), 5, 0, separators.safe_cut,
                                           separators.unaligned_overlap)

    def broken(text, a, b):
        raise RuntimeError("callback failed")

    with pytest.raises(RuntimeError, match="callback failed"):
        separators._native.separator_spans("x" * 50, 0, 50, ("",), 10, 0, broken, separators.unaligned_overlap)
    with pytest.raises(ValueError, match="outside"):
        separators._native.separator_spans("x" * 50, 0, 50, ("",), 10, 0, lambda t, a, b: 10 ** 6,
                                           separators.unaligned_overlap)
    for bad in (-5, -1):
        with pytest.raises(ValueError, match="outside"):
            separators._native.separator_spans("x" * 50, 0, 50, ("",), 10, 5, separators.safe_cut,
                                               lambda t, a, b, bad=bad: bad)


@native
def test_native_nesting_is_bounded_like_python():
    # One recursion level per separator: thousands that never occur must not exhaust the C stack.
    seps = tuple(f"<{k}>" for k in range(100_000)) + ("",)
    with pytest.raises(RecursionError):
        separator_spans("x" * 50, 0, 50, seps, 10, 0)


def test_huge_sizes_use_python():
    text = "one two three"
    assert separator_spans(text, 0, len(text), DEFAULT_SEPARATORS, 2 ** 70, 5) == [(0, 13, None)]


def test_golden_spans():
    text = "One. Two. Three.\n\nA second paragraph that is long enough to be cut."
    spans = separator_spans(text, 0, len(text), DEFAULT_SEPARATORS, 30, 8)
    # Later spans hold at most 30 - 8 new characters and start up to 8 earlier, at a word.
    assert [text[s:e] for s, e, _ in spans] == [
        "One. Two. Three.", "Three.\n\nA second paragraph", "that is long enough to", "to be cut."]
