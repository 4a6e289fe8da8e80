"""The minimum-size pass, heading lines without blank lines, and table rows in sentences."""
from __future__ import annotations

import re

from hypothesis import given, strategies as st

from beam_chunking.text.fragments import effective_minimum, looks_like_header, merge_undersized
from beam_chunking.text.headings import DEFAULT_PATTERNS, compile_patterns, find_headings
from beam_chunking.text.sentences import sentence_spans
from beam_chunking.text.spans import trim_span
from tests.helpers import adversarial_text


def _chars(s: int, e: int) -> int:
    return e - s


def _words(text: str):
    """Whitespace-trimmed word spans of ``text``: a realistic, adversarial span sequence."""
    return [m.span() for m in re.finditer(r"\S+", text)]


@given(adversarial_text, st.integers(0, 40), st.integers(1, 120))
def test_merge_keeps_spans_exact_bounded_and_lossless(text, minimum, ceiling):
    spans = [sp for sp in _words(text) if sp[1] - sp[0] <= ceiling]
    merged = merge_undersized(text, spans, minimum, ceiling, _chars)
    # Every input span lies inside exactly one output span; outputs are ordered unions.
    covered = [next(k for k, (s, e, _) in enumerate(merged) if s <= a and b <= e) for a, b in spans]
    assert covered == sorted(covered)
    assert len(merged) <= len(spans)
    for (s, e, small), nxt in zip(merged, merged[1:] + [None]):
        assert trim_span(text, s, e) == (s, e)
        if nxt is not None:
            assert s < nxt[0] and e < nxt[1]
        if (s, e) not in spans:  # a join never breaks the ceiling
            assert e - s <= ceiling
        assert small == (minimum > 0 and e - s < minimum)
    assert merged == merge_undersized(text, spans, minimum, ceiling, _chars)


@given(adversarial_text)
def test_zero_minimum_is_off(text):
    spans = _words(text)
    assert merge_undersized(text, spans, 0, 10, _chars) == [(s, e, False) for s, e in spans]


def test_headers_join_the_following_span_and_tails_the_previous():
    text = "try:\n    x = compute(a, b)\nexcept ValueError:\n    pass\n|"
    spans = [(0, 4), (9, 26), (27, 45), (50, 54), (55, 56)]
    got = [(text[s:e], small) for s, e, small in merge_undersized(text, spans, 10, 40, _chars)]
    assert got == [("try:\n    x = compute(a, b)", False), ("except ValueError:\n    pass\n|", False)]


def test_a_fragment_that_no_neighbour_can_take_is_flagged():
    text = "a" * 30 + " " + "b" * 30 + " tail"
    spans = [(0, 30), (31, 61), (62, 66)]
    assert merge_undersized(text, spans, 10, 32, _chars)[-1] == (62, 66, True)
    assert merge_undersized(text, spans, 10, 40, _chars)[-1] == (31, 66, False)  # the tail joins back


def test_hard_boundaries_are_never_crossed():
    text = "# A\n\nbody one here.\n\n# B\n\nend"
    spans = [(0, 19), (21, 24), (26, 29)]
    merged = merge_undersized(text, spans, 5, 100, _chars, hard=[21])
    assert merged == [(0, 19, False), (21, 29, False)]  # "# B" takes its body, not the text before


def test_header_shapes_and_the_effective_minimum():
    for header in ("try:", "class Action(argparse.Action):", "int main() {", "## Setup", "2.1 Scope", "Article 2"):
        assert looks_like_header(header, 0, len(header)), header
    for tail in ("|", " al. 1994).", "Then reload.", "it rained"):
        assert not looks_like_header(tail, 0, len(tail)), tail
    assert effective_minimum(64, 512) == 64 and effective_minimum(64, 40) == 10 and effective_minimum(0, 512) == 0


PATTERNS = compile_patterns("test", DEFAULT_PATTERNS)


def _titles(text, patterns=PATTERNS, max_chars=120):
    return [h.title for h in find_headings(text, 0, len(text), patterns, max_chars)]


def test_headings_need_no_blank_line_after_a_sentence():
    text = "Intro text.\n1 Introduction\nBody here.\n2 Methods\nMore body.\nChapter 3 The End\nDone.\n"
    assert _titles(text) == ["Introduction", "Methods", "Chapter 3 The End"]


def test_ordinary_lines_do_not_become_headings():
    # A hard-wrapped sentence: the line before does not end one; a lowercase title; a shell
    # prompt after a colon; a table of contents (a run of numbered lines).
    text = ("The package was released in\n2 Versions were shipped.\nIt took.\n30 days after notice\n"
            "Install as root:\n# apt-get update\n")
    assert _titles(text) == []
    toc = "Contents\n\n1 Intro\n2 Setup\n3 Usage\n4 Limits\n\n1 Intro\n\nText.\n"
    assert _titles(toc) == ["Intro", "Intro"]


def test_legal_articles_without_blank_lines():
    from beam_chunking.domains import LegalChunker

    text = ("Article 1 Definitions\n1.1 Services means the services.\n1.2 Fees means money.\n"
            "Article 2 Payment\n2.1 The Customer shall pay within\n30 days of invoice.\n")
    chunks = LegalChunker().chunk(text)
    assert [c.metadata.get("clause") for c in chunks] == ["Article 1", "1.1", "1.2", "Article 2", "2.1"]
    assert chunks[-1].text == "2.1 The Customer shall pay within\n30 days of invoice."


def test_book_chapters_without_blank_lines():
    from beam_chunking.domains import BookChunker

    text = "Chapter 1 The Start\nIt was dark. It rained.\nChapter 2 The End\nThe sun came out.\n"
    assert [c.metadata.get("chapter") for c in BookChunker().chunk(text)] == ["Chapter 1 The Start",
                                                                              "Chapter 2 The End"]


def test_table_rows_are_not_split_into_sentences():
    text = "Intro. Next.\n| name | value |\n|---|---|\n| foo | bar, baz, etc. |\n| x | Done. More |\n"
    got = [text[s:e] for s, e in sentence_spans(text, 0, len(text))]
    assert got[:2] == ["Intro.", "Next."]
    assert not any(piece.strip() == "|" or piece.startswith("More") for piece in got)
    row_end = "| Tool | Notes |\n|---|---|\n| apt | Installs packages, upgrades, etc. |\n| dpkg | Low level. |\n"
    assert [row_end[s:e] for s, e in sentence_spans(row_end, 0, len(row_end))] == [row_end.strip()]


@given(adversarial_text)
def test_sentences_still_cover_everything_with_table_rows(text):
    text = text.replace("\n", "\n| ")
    spans = sentence_spans(text, 0, len(text))
    covered = set()
    for s, e in spans:
        covered.update(range(s, e))
    assert all(k in covered for k, ch in enumerate(text) if not ch.isspace())


def test_indented_numbered_list_items_are_not_headings():
    text = "Steps:\n\n     1. Fetch archive metadata\n\n     2. Unpack fetched packages\n\n3 Results\n\nDone.\n"
    assert _titles(text) == ["Results"]
