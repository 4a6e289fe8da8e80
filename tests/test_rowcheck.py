"""check_rows refuses everything the Arrow conversion of the tables refuses.

It may refuse more (a float 2.0 in an integer column, which Arrow takes): the rows it checks
come from the row builders, which give each column its own type.
"""
from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from beam_chunking.errors import ChunkingError
from beam_chunking.rowcheck import check_rows, checker
from beam_chunking.schema import CHUNKS_SCHEMA, DOCUMENTS_SCHEMA, chunk_rows
from beam_chunking.strategies import RecursiveChunker

ROW = chunk_rows(RecursiveChunker(max_chunk_size=40, overlap=0).chunk("One two three. Four five six seven."),
                 strategy="recursive", fingerprint="f", content_type="text/plain", uri="u")[0]

# Values of every kind a buggy strategy or parser could hand over.
VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True),
    st.text(max_size=5), st.sampled_from(["ok\ud800", "\udfff", "日本"]),
    st.lists(st.one_of(st.text(max_size=3), st.integers(), st.just("\ud801")), max_size=3),
    st.lists(st.tuples(st.text(max_size=3), st.fixed_dictionaries({"str": st.one_of(st.none(), st.text(max_size=3))})),
             max_size=2),
)


def arrow_accepts(rows, schema) -> bool:
    try:
        table = pa.Table.from_pylist(rows, schema=schema)
    except (pa.ArrowException, UnicodeError, TypeError, ValueError, OverflowError):
        return False
    # Arrow lets a null into a non-nullable column; the Parquet writer refuses it later.
    return all(table.column(f.name).null_count == 0 for f in schema if not f.nullable)


def check_accepts(rows, schema) -> bool:
    try:
        check_rows(rows, schema)
    except ChunkingError:
        return False
    return True


@settings(max_examples=400, deadline=None)
@given(st.sampled_from([f.name for f in CHUNKS_SCHEMA]), VALUES)
def test_a_chunk_row_with_any_value_in_any_column_that_arrow_refuses_is_refused(column, value):
    row = dict(ROW, **{column: value})
    if check_accepts([row], CHUNKS_SCHEMA):
        assert arrow_accepts([row], CHUNKS_SCHEMA), (column, value)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([f.name for f in DOCUMENTS_SCHEMA]), VALUES)
def test_a_document_row_likewise(column, value):
    row = {"document_id": "d", "status": "ok", column: value}
    if check_accepts([row], DOCUMENTS_SCHEMA):
        assert arrow_accepts([row], DOCUMENTS_SCHEMA), (column, value)


def test_rows_the_builders_make_are_accepted():
    chunks = RecursiveChunker(max_chunk_size=60, overlap=10).chunk("日本語の文章。 Some prose, then more prose. " * 9)
    rows = chunk_rows(chunks, strategy="recursive", fingerprint="f", content_type="text/plain", uri="gs://b/ü")
    check_rows(rows, CHUNKS_SCHEMA)
    assert arrow_accepts(rows, CHUNKS_SCHEMA)


def test_the_message_names_the_column_and_the_row():
    with pytest.raises(ChunkingError, match=r"column 'text': not valid UTF-8 text .* \(row 1\)"):
        check_rows([ROW, dict(ROW, text="bad \ud800")], CHUNKS_SCHEMA)
    with pytest.raises(ChunkingError, match=r"column 'page': 4294967296 does not fit a 32-bit integer"):
        check_rows([dict(ROW, page=2**32)], CHUNKS_SCHEMA)


def test_a_type_without_a_check_fails_at_once():
    with pytest.raises(TypeError, match="no row check"):
        checker(pa.timestamp("s"))


def test_numpy_numbers_are_numbers():
    import numpy as np

    check_rows([dict(ROW, token_count=np.int64(7), embedding=[np.float32(0.5), 1])], CHUNKS_SCHEMA)
    assert arrow_accepts([dict(ROW, token_count=np.int64(7), embedding=[np.float32(0.5), 1])], CHUNKS_SCHEMA)


@pytest.mark.parametrize("value", [2**24, 2**24 + 1, -(2**24) - 1, 2**53, 2**53 + 1, 0.5, float("inf")])
def test_integers_in_float_columns_are_refused_where_arrow_cannot_hold_them_exactly(value):
    row = dict(ROW, embedding=[value])
    if check_accepts([row], CHUNKS_SCHEMA):
        assert arrow_accepts([row], CHUNKS_SCHEMA), value
    assert check_accepts([row], CHUNKS_SCHEMA) == (value not in (2**24 + 1, -(2**24) - 1, 2**53, 2**53 + 1))
