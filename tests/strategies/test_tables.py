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


def test_a_header_larger_than_the_budget_is_not_repeated():
    header = "| " + " | ".join(f"c{k}" for k in range(200)) + " |"
    table = header + "\n|" + "---|" * 200 + "\n" + "".join(f"| {k} |\n" for k in range(50))
    lines = line_starts(table, 0, len(table))
    measured = []

    def measure_text(s):
        measured.append(len(s))
        return len(s)

    pieces = split_table(table, lines, 40, lambda s, e: e - s, measure_text, lambda s, e: [(s, min(e, s + 40))])
    assert all(prefix is None for _, _, prefix in pieces)
    assert measured == [len(header) + 1 + 1 + 4 * 200 + 1]  # the header alone, once
    rows = [table[s:e] for s, e, _ in pieces if table[s:e].startswith("| ") and "c0" not in table[s:e]]
    assert "".join(r + "\n" for r in rows).count("|\n") == 50  # every row kept, packed
    assert all(e - s <= 40 for s, e, _ in pieces)


def _wide_doc(columns: int):
    from beam_chunking.parsers.tabular import parse_delimited
    from tests.parsers.fixtures import document, wide_csv

    return parse_delimited(document("wide.csv", wide_csv(columns)))


def test_sheet_rows_carry_columns_bounded_by_the_chunk_ceiling():
    from beam_chunking.strategies import RecursiveChunker
    from beam_chunking.strategies.base import document_outcome

    doc = _wide_doc(5_000)  # the names alone: 23,890 characters
    chunks = document_outcome(RecursiveChunker(max_chunk_size=512), doc).chunks
    assert len(chunks) > 100
    for chunk in chunks:
        columns = chunk.metadata["columns"]
        assert sum(map(len, columns)) <= len(chunk.text)
        if chunk.metadata["chunk_kind"] == "row":
            lines = chunk.text.split("\n")
            if doc.text[chunk.start - 1] != "\n":  # begins inside a line: its name is cut
                lines = lines[1:]
            assert columns == [line.split(": ")[0] for line in lines if ": " in line]
        else:
            assert set(columns) <= set(chunk.text.split(" | "))
    header = [c for c in chunks if c.metadata["chunk_kind"] == "header"]
    assert [n for c in header for n in c.metadata["columns"]][:3] == ["c0", "c1", "c2"]


def test_narrow_sheets_keep_their_whole_header_in_every_chunk():
    from beam_chunking.strategies import RecursiveChunker
    from beam_chunking.strategies.base import document_outcome

    doc = _wide_doc(20)
    chunks = document_outcome(RecursiveChunker(max_chunk_size=64, min_chunk_size=0, overlap=0), doc).chunks
    assert len(chunks) > 4
    assert all(c.metadata["columns"] is doc.sections[0].metadata["columns"] for c in chunks)
