"""The text toolkit on its own: the Markdown scanner, the packer and the span helpers."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from beam_chunking.text.headings import Fence, heading_path, scan_markdown
from beam_chunking.text.packing import greedy_end, greedy_groups, split_levels
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
