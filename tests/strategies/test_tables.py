"""Pipe-table detection and row splitting with repeated headers."""
from __future__ import annotations

from beam_chunking.text.spans import line_starts
from beam_chunking.strategies._tables import split_table, table_blocks

TABLE = "text before\n| a | b |\n|:--|--:|\n| 1 | x |\n| 2 | y |\n| 3 | zzzzzzzzzzzzzzzzzzzzzzzzzzzzzz |\nafter\n"


def test_blocks_need_a_separator_line():
    lines = line_starts(TABLE, 0, len(TABLE))
    assert table_blocks(TABLE, lines) == [(1, 6)]
    no_sep = "| a |\n| b |\n"
    assert table_blocks(no_sep, line_starts(no_sep, 0, len(no_sep))) == []


def test_split_repeats_header_and_falls_back_for_giant_rows():
    lines = line_starts(TABLE, 0, len(TABLE))[1:7]
    windows = []

    def fallback(s, e):
        windows.append((s, e))
        return [(s, s + 10), (s + 10, e)]

    pieces = split_table(TABLE, lines, 34, lambda s, e: e - s, len, fallback)
    texts = [(prefix or "") + TABLE[s:e] for s, e, prefix in pieces]
    assert texts[0] == "| a | b |\n|:--|--:|\n| 1 | x |"
    assert texts[1] == "| a | b |\n|:--|--:|\n| 2 | y |"
    assert [p for _, _, p in pieces] == [None, "| a | b |\n|:--|--:|\n", None, None]
    assert windows == [(lines[4], lines[4] + len("| 3 | zzzzzzzzzzzzzzzzzzzzzzzzzzzzzz |"))]
    assert all(len(t) <= 34 for t in texts)
