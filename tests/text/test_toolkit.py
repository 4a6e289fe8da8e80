"""The text toolkit on its own: the Markdown scanner, the packer and the span helpers."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from beam_chunking.text.headings import Fence, heading_path, scan_markdown
from beam_chunking.text import packing
from beam_chunking.text.packing import balanced_groups, greedy_end, greedy_groups, split_levels
from beam_chunking.text.sentences import sentence_spans
from beam_chunking.text.spans import ALL_NEWLINES, line_starts, trim_span


def outline(text, newlines=None):
    lines = line_starts(text, 0, len(text)) if newlines is None else line_starts(text, 0, len(text), newlines)
    return scan_markdown(text, lines)


def test_atx_setext_and_fences_in_one_scan():
    text = "# A #\n\nIntro\n=====\n~~~~ python\n# no\n```\n~~~~~\n## B\n   ```js\nrest"
    found = outline(text)
    assert [(h.line, h.level, h.title, h.setext) for h in found.headings] == [
        (0, 1, "A", False), (2, 1, "Intro", True), (8, 2, "B", False)]
    # ``` does not close a ~~~~ fence, a longer ~~~~~ does; the last fence is never closed
    assert found.fences == (Fence(4, 8, "python"), Fence(9, 11, "js"))


def test_a_rule_after_two_lines_and_indented_code_are_not_headings():
    found = outline("one\ntwo\n---\n\n    code\n---\n#nospace\n####### seven")
    assert found.headings == ()


def test_every_unicode_line_break_can_end_a_line():
    assert [h.line for h in outline("x\u2028# A", ALL_NEWLINES).headings] == [1]
    assert outline("x\u2028# A").headings == ()


def test_heading_path_pops_same_and_deeper_levels():
    stack = []
    assert [heading_path(stack, lvl, t) for lvl, t in [(1, "A"), (3, "B"), (2, "C"), (1, "D")]] == [
        ("A",), ("A", "B"), ("A", "C"), ("D",)]


@given(st.lists(st.integers(0, 9), max_size=40), st.integers(1, 20))
def test_greedy_groups_cover_in_order_fit_and_are_maximal(sizes, limit):
    def fits(a, b):
        return sum(sizes[a:b]) <= limit

    groups = greedy_groups(len(sizes), fits)
    assert [i for a, b in groups for i in range(a, b)] == list(range(len(sizes)))
    for a, b in groups:
        assert b - a == 1 or fits(a, b)
        assert b == len(sizes) or not fits(a, b + 1)
    assert greedy_end(0, len(sizes), lambda end: fits(0, end)) == (groups[0][1] if groups and fits(0, 1) else 0)


def test_split_levels_keeps_fitting_blocks_whole_and_hands_long_lines_to_the_fallback():
    text = "aaa bbb\nccc\n\nddd eee fff ggg\nhhh"
    lines = line_starts(text, 0, len(text))  # 5 lines; a blank-line boundary before line 3
    scores = [0, 2, 1, 1, 2]

    def fallback(s, e):  # windows of 8 characters
        return [(a, min(e, a + 8)) for a in range(s, e, 8)]

    chunks = split_levels(text, lines, scores, 11, lambda s, e: e - s, fallback)
    assert [text[s:e] for s, e, _ in chunks] == ["aaa bbb\nccc", "ddd eee ", "fff ggg", "hhh"]


@given(st.text(alphabet="ab .!?\n\t。", max_size=80))
def test_sentences_are_trimmed_exact_spans_that_keep_every_character(text):
    spans = sentence_spans(text, 0, len(text))
    assert all(trim_span(text, s, e) == (s, e) and s < e for s, e in spans)
    assert all(e1 <= s2 for (_, e1), (s2, _) in zip(spans, spans[1:]))
    kept = "".join(text[s:e] for s, e in spans)
    assert "".join(kept.split()) == "".join(text.split())



def test_balanced_groups_are_as_few_as_greedy_and_even_until_the_cap(monkeypatch):
    sizes = [20] * 23  # 460 units of size under a limit of 200: greedy gives 200, 200, 60
    size = lambda a, b: sum(sizes[a:b])  # noqa: E731
    greedy = greedy_groups(len(sizes), lambda a, b: size(a, b) <= 200)
    even = balanced_groups(len(sizes), size, 200)
    assert [size(a, b) for a, b in greedy] == [200, 200, 60]
    assert len(even) == 3 and [size(a, b) for a, b in even] == [160, 160, 140]
    assert even[0][0] == 0 and even[-1][1] == len(sizes) and all(x[1] == y[0] for x, y in zip(even, even[1:]))
    # Past MAX_BALANCED_GROUPS groups the greedy ones come back unchanged.
    monkeypatch.setattr(packing, "MAX_BALANCED_GROUPS", 2)
    assert balanced_groups(len(sizes), size, 200) == greedy
    assert balanced_groups(0, size, 200) == [] and balanced_groups(3, size, 200) == [(0, 3)]


@given(st.lists(st.integers(1, 50), min_size=1, max_size=60), st.integers(50, 300))
def test_balanced_groups_never_pass_the_limit_nor_use_more_groups_than_greedy(sizes, limit):
    size = lambda a, b: sum(sizes[a:b])  # noqa: E731
    greedy = greedy_groups(len(sizes), lambda a, b: size(a, b) <= limit)
    even = balanced_groups(len(sizes), size, limit)
    assert len(even) == len(greedy) and all(size(a, b) <= limit for a, b in even)
    assert max(size(a, b) for a, b in even) <= max(size(a, b) for a, b in greedy)
