"""Q&A pairs template: one chunk per row, by column name or position, header handling."""
from __future__ import annotations

import pytest

from beam_chunking.domains import QAPairsChunker
from beam_chunking.errors import ChunkingError, ConfigError
from beam_chunking.parsers import parse
from tests.parsers.fixtures import document, xlsx_bytes

CSV = b"Question,Answer,Topic\nWhat is RAG?,Retrieval-augmented generation.,ml\n,orphan answer,x\nWhy chunk?,Models have limits.,ml\n"


def test_one_chunk_per_pair_by_name():
    doc = parse(document("faq.csv", CSV))
    chunks, dropped = QAPairsChunker().chunk_with_drops(doc)
    assert [(c.metadata["question"], c.metadata["answer"], c.metadata["row"]) for c in chunks] == [
        ("What is RAG?", "Retrieval-augmented generation.", 2), ("Why chunk?", "Models have limits.", 4)]
    assert chunks[0].text == "Question: What is RAG?\nAnswer: Retrieval-augmented generation.\nTopic: ml"
    assert chunks[0].text == doc.text[chunks[0].start:chunks[0].end]
    assert all(c.metadata["template"] == "qa_pairs" and c.metadata["sheet"] == "faq.csv" for c in chunks)
    assert dropped == (("1 rows without a question or an answer", len("Answer: orphan answer\nTopic: x")),)


def test_positions_sheets_and_headerless_files():
    data = xlsx_bytes({"FAQ": [["How?", "Like this."], ["When?", "Now."]]})
    doc = parse(document("faq.xlsx", data))
    with_header = QAPairsChunker(question_column=1, answer_column=2).chunk_document(doc)
    assert [c.metadata["question"] for c in with_header] == ["When?"]
    headerless = QAPairsChunker(question_column=1, answer_column=2, skip_header=False).chunk_document(doc)
    assert [(c.metadata["question"], c.metadata["answer"]) for c in headerless] == [("How?", "Like this."), ("When?", "Now.")]
    assert headerless[0].metadata["row"] == 1 and headerless[0].metadata["sheet"] == "FAQ"


def test_errors_name_the_problem():
    doc = parse(document("faq.csv", CSV))
    with pytest.raises(ChunkingError, match="no column named 'query'"):
        QAPairsChunker(question_column="query").chunk_document(doc)
    with pytest.raises(ChunkingError, match="answer_column=9 but the sheet has 3 columns"):
        QAPairsChunker(answer_column=9).chunk_document(doc)
    with pytest.raises(ChunkingError, match="no table rows"):
        QAPairsChunker().chunk("plain text")
    with pytest.raises(ConfigError, match="1-based position"):
        QAPairsChunker(question_column=0)
