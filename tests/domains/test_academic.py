"""Academic template: abstract kept, references dropped (both switchable), section metadata."""
from __future__ import annotations

from beam_chunking.domains import AcademicChunker
from beam_chunking.types import ParsedDocument, Section

PAPER = """Chunking Matters: A Study

Abstract— We study how chunking changes retrieval quality across four corpora.

1 Introduction

Retrieval needs chunks.

2 Method

2.1 Data

Four corpora.

3 Results

Better recall.

References

[1] A. Author. A paper. 2020.
[2] B. Author. Another. 2021.
"""


def doc():
    return ParsedDocument("d", "u", "text/plain", PAPER, (Section(0, len(PAPER)),))


def test_default_keeps_abstract_drops_references():
    chunks, dropped = AcademicChunker().chunk_with_drops(doc())
    assert [c.metadata.get("section") for c in chunks] == [None, "Abstract", "Introduction", "Method", "Results"]
    assert chunks[1].text.startswith("Abstract— We study")
    # "2 Method" has no body of its own: it is not a chunk alone but starts its first subsection's.
    assert chunks[3].text == "2 Method\n\n2.1 Data\n\nFour corpora."
    assert chunks[3].metadata["section_path"] == ["Method"]
    assert dropped == (("references", len("References\n\n[1] A. Author. A paper. 2020.\n[2] B. Author. Another. 2021.")),)
    assert all(c.metadata["template"] == "academic" for c in chunks)


def test_switches():
    chunks, dropped = AcademicChunker(include_abstract=False, include_references=True).chunk_with_drops(doc())
    assert [label for label, _ in dropped] == ["abstract"]
    assert chunks[-1].metadata["section"] == "References"
