"""Chunk regions (page, page_end, boxes) and page_boundaries, on documents with geometry."""
from __future__ import annotations

import pyarrow as pa
import pytest

from beam_chunking.errors import ConfigError
from beam_chunking.registry import get
from beam_chunking.schema import CHUNKS_SCHEMA, chunk_batch, chunk_rows
from beam_chunking.strategies import RecursiveChunker, SentenceChunker
from beam_chunking.strategies.base import document_outcome
from beam_chunking.strategies.regions import Regions, locate, split_at_pages
from beam_chunking.types import Chunk, ParsedDocument, Section, TextBox

# Two paragraphs; the second runs over the turn from page 1 to page 2.
TEXT = "First line here and more.\n\nSecond paragraph starts on one page and ends on the next."
LINES = [(0, 25, 1, 0, 10), (27, 62, 1, 1, 30), (63, 84, 2, 1, 50)]


def geometry_doc(text: str = TEXT) -> ParsedDocument:
    boxes = tuple(TextBox(s, e, page, 50.0, y, 400.0, y + 12.0, group) for s, e, page, group, y in LINES)
    return ParsedDocument("d", "a.pdf", "application/pdf", text, (Section(0, len(text), page=1),), boxes=boxes)


def test_a_span_gets_one_box_per_block_and_page_and_its_page_range():
    regions = Regions(geometry_doc().boxes)
    assert regions.describe(0, len(TEXT)) == {
        "page": 1, "page_end": 2,
        "boxes": [{"page": 1, "x0": 50.0, "y0": 10.0, "x1": 400.0, "y1": 22.0},
                  {"page": 1, "x0": 50.0, "y0": 30.0, "x1": 400.0, "y1": 42.0},
                  {"page": 2, "x0": 50.0, "y0": 50.0, "x1": 400.0, "y1": 62.0}]}
    assert regions.describe(30, 40)["page_end"] == 1  # inside one line
    assert regions.describe(25, 27) == {}  # the blank line between blocks lies on no line
    assert regions.describe(63, 63)["page"] == 2  # an empty span lies where it is


def test_locate_keeps_spans_and_text_and_leaves_documents_without_geometry_alone():
    doc = geometry_doc()
    chunks = [Chunk("d", 0, 0, 25, TEXT[:25], None, {"page": 1}), Chunk("d", 1, 27, 84, TEXT[27:], None, {"page": 1})]
    located = locate(doc, chunks)
    assert [(c.start, c.end, c.text) for c in located] == [(c.start, c.end, c.text) for c in chunks]
    assert [(c.metadata["page"], c.metadata["page_end"], len(c.metadata["boxes"])) for c in located] == [
        (1, 1, 1), (1, 2, 2)]
    bare = ParsedDocument("d", "a.txt", "text/plain", TEXT, (Section(0, len(TEXT)),))
    assert locate(bare, chunks) == chunks


def test_split_at_pages_cuts_sections_where_lines_turn_the_page():
    split = split_at_pages(geometry_doc())
    assert [(s.start, s.end, s.page) for s in split.sections] == [(0, 62, 1), (63, 84, 2)]
    bare = ParsedDocument("d", "a.txt", "text/plain", TEXT, (Section(0, len(TEXT)),))
    assert split_at_pages(bare) is bare


@pytest.mark.parametrize("strategy", [RecursiveChunker(max_chunk_size=200, overlap=0, min_chunk_size=0),
                                      SentenceChunker(max_chunk_size=100, overlap=0, min_chunk_size=0)])
def test_page_boundaries_hard_keeps_each_chunk_on_one_page(strategy):
    doc = geometry_doc()
    soft = document_outcome(strategy, doc).chunks
    assert any(c.metadata["page_end"] == 2 and c.metadata["page"] == 1 for c in soft)
    hard = document_outcome(get(strategy.name, **{**_options(strategy), "page_boundaries": "hard"}), doc).chunks
    assert all(c.metadata["page"] == c.metadata["page_end"] for c in hard)
    assert " ".join(c.text for c in hard).split() == TEXT.split()


def _options(strategy):
    return {k: getattr(strategy, k) for k in ("max_chunk_size", "overlap", "min_chunk_size")}


def test_page_boundaries_is_checked_and_changes_the_fingerprint_only_when_set():
    with pytest.raises(ConfigError, match="page_boundaries='always' must be one of soft, hard"):
        get("recursive", page_boundaries="always")
    with pytest.raises(ConfigError, match="page_boundaries"):
        document_outcome(RecursiveChunker(page_boundaries="strict"), geometry_doc())
    assert RecursiveChunker().fingerprint == RecursiveChunker(page_boundaries="soft").fingerprint
    assert RecursiveChunker().fingerprint != RecursiveChunker(page_boundaries="hard").fingerprint
    # Fingerprints of existing configurations are those before the option existed.
    assert RecursiveChunker().fingerprint == "2e3f9b6c7754"


def test_boxes_are_a_typed_column_of_the_chunks_table():
    chunks = document_outcome(RecursiveChunker(max_chunk_size=200, overlap=0), geometry_doc()).chunks
    batch = chunk_batch(chunk_rows(chunks, strategy="recursive", fingerprint="f", content_type="application/pdf",
                                   uri="a.pdf"))
    assert batch.schema.field("boxes").type == CHUNKS_SCHEMA.field("boxes").type
    assert pa.types.is_float32(batch.schema.field("boxes").type.value_type.field("x0").type)
    back = batch.to_pylist()
    assert back[0]["boxes"][0] == {"page": 1, "x0": 50.0, "y0": 10.0, "x1": 400.0, "y1": 22.0}
    bare = RecursiveChunker().chunk("plain text without pages")
    rows = chunk_rows(bare, strategy="recursive", fingerprint="f", content_type="text/plain", uri="a.txt")
    assert chunk_batch(rows).to_pylist()[0]["boxes"] is None
