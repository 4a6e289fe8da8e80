"""HierarchicalChunker: heading subtrees to max_depth, unbounded by design, pages min/max."""
from __future__ import annotations

import pytest
from hypothesis import given

from beam_chunking.errors import ConfigError
from beam_chunking.parsers import parse
from beam_chunking.registry import get
from beam_chunking.strategies import HierarchicalChunker
from beam_chunking.types import ParsedDocument, Section
from tests.helpers import adversarial_text, check_chunks, check_pickle
from tests.parsers.fixtures import document

PLAIN = """Preamble before any heading.

1 Introduction

Intro body.

1.1 Scope

Scope body.

1.1.1 Deep detail

Deep body.

2 Methods

Methods body. 1. Not a heading inside a paragraph.
"""


def paths(chunks):
    return [tuple(c.metadata.get("section_path", ())) for c in chunks]


@pytest.mark.parametrize("depth,expected", [
    (1, [(), ("Introduction",), ("Methods",)]),
    (2, [(), ("Introduction",), ("Introduction", "Scope"), ("Methods",)]),
    (3, [(), ("Introduction",), ("Introduction", "Scope"), ("Introduction", "Scope", "Deep detail"), ("Methods",)]),
])
def test_plain_text_headings_by_pattern_and_depth(depth, expected):
    chunks = HierarchicalChunker(max_depth=depth).chunk(PLAIN)
    check_chunks(PLAIN, chunks)
    assert paths(chunks) == expected
    if depth == 1:
        assert chunks[1].text.startswith("1 Introduction") and chunks[1].text.endswith("Deep body.")
        assert chunks[1].metadata["heading"] == "Introduction" and chunks[1].metadata["sections"] == 3


def test_parser_headings_and_size_is_ignored_by_design():
    body = "Long subtree sentence. " * 2000  # 46,000 characters under one heading
    md = f"# Guide\n\nIntro.\n\n## Install\n\n{body}\n\n### Linux\n\nApt.\n\n## Use\n\nRun it.\n".encode()
    doc = parse(document("guide.md", md))
    chunks = HierarchicalChunker(max_depth=2).chunk_document(doc)
    check_chunks(doc.text, chunks)
    assert paths(chunks) == [("Guide",), ("Guide", "Install"), ("Guide", "Use")]
    assert len(chunks[1].text) > 46_000  # one subtree, however long: refine it to bound it
    assert chunks[1].text.endswith("Apt.")


def test_pages_are_min_max_and_mixed_sections_keep_the_pages_they_have():
    text = "A chapter\n\nPage three text.\n\nPage four text.\n\nNo page text.\n\nB chapter\n\nB text."
    def span(s):
        a = text.index(s)
        return a, a + len(s)
    sections = (
        Section(*span("A chapter\n\nPage three text."), level=1, heading_path=("A chapter",), page=3),
        Section(*span("Page four text."), level=1, heading_path=("A chapter",), page=4),
        Section(*span("No page text."), level=1, heading_path=("A chapter",)),
        Section(*span("B chapter\n\nB text."), level=1, heading_path=("B chapter",)),
    )
    doc = ParsedDocument("d", "u", "text/plain", text, sections)
    a, b = HierarchicalChunker().chunk_document(doc)
    assert (a.metadata["page"], a.metadata["page_end"]) == (3, 4)
    assert a.text == text[: text.index("\n\nB chapter")]
    assert "page" not in b.metadata and "page_end" not in b.metadata


def test_pdf_like_continuation_pages_merge_into_their_chapter():
    text = "1 Start\nbody one\n\nmore of chapter one\n\n2 Next\nbody two"
    sections = (Section(0, 18, level=1, heading_path=("Start",), page=1),
                Section(20, 39, level=1, heading_path=("Start",), page=2),
                Section(41, len(text), level=1, heading_path=("Next",), page=3))
    doc = ParsedDocument("d", "u", "application/pdf", text, sections)
    chunks = HierarchicalChunker().chunk_document(doc)
    assert [(c.metadata["page"], c.metadata["page_end"]) for c in chunks] == [(1, 2), (3, 3)]


def test_options_validated_and_registry():
    with pytest.raises(ConfigError, match="max_depth"):
        HierarchicalChunker(max_depth=0)
    with pytest.raises(ConfigError, match=r"heading_patterns\[0\].*invalid regex"):
        HierarchicalChunker(heading_patterns=(("(", 1),))
    with pytest.raises(ConfigError, match="needs a 'num' or 'hashes' group"):
        HierarchicalChunker(heading_patterns=(("^x", 0),))
    with pytest.raises(ConfigError, match="heading_detection"):
        HierarchicalChunker(heading_detection="sometimes")
    custom = get("hierarchical", heading_patterns=(("^Step (?P<num>\\d+)", 0),), max_depth=1)
    assert paths(custom.chunk("Step 1 mix\n\nflour\n\nStep 2 bake\n\nhot")) == [("Step 1 mix",), ("Step 2 bake",)]
    check_pickle(HierarchicalChunker(), PLAIN)


@given(adversarial_text)
def test_invariants_on_adversarial_text(text):
    chunks = HierarchicalChunker().chunk(text)
    check_chunks(text, chunks)
    assert chunks == HierarchicalChunker().chunk(text)


def test_running_headers_are_skipped_and_headings_carry_across_unstructured_pages():
    pages = ["Manual iv\nContents\nIntro 1", "Manual v\nMore contents 2", "Manual 1\n1 Start\nBody"]
    text = "\n\n".join(pages)
    sections, pos = [], 0
    for n, page in enumerate(pages, start=4):
        start = text.index(page, pos)
        sections.append(Section(start, start + len(page), page=n, metadata={"page_header": page.split("\n")[0]}))
        pos = start + len(page)
    doc = ParsedDocument("d", "u", "application/pdf", text, tuple(sections))
    patterns = (("^(?P<title>Contents)$", 1), *HierarchicalChunker().heading_patterns)
    chunks = HierarchicalChunker(heading_patterns=patterns).chunk_document(doc)
    # "Contents" is found under the page header and carries to the next page; "1 Start" begins anew
    assert [(paths([c])[0], c.metadata["page"], c.metadata["page_end"]) for c in chunks] == [
        (("Contents",), 4, 5), (("Start",), 6, 6)]
    assert chunks[0].text.startswith("Manual iv\nContents") and chunks[1].text.startswith("Manual 1\n1 Start")


def test_a_heading_alone_joins_its_first_subsection():
    text = "1 Introduction\n\n1.1 Scope\n\nScope body.\n\n1.2 Terms\n\nTerms body.\n\n2 Methods\n\nMethods body.\n"
    chunks = HierarchicalChunker(max_depth=2).chunk(text)
    check_chunks(text, chunks)
    assert [c.text.split("\n")[0] for c in chunks] == ["1 Introduction", "1.2 Terms", "2 Methods"]
    assert chunks[0].text == "1 Introduction\n\n1.1 Scope\n\nScope body."
    assert paths(chunks) == [("Introduction",), ("Introduction", "Terms"), ("Methods",)]


def test_hash_lines_are_headings_in_markdown_only():
    text = "Install as root:\n\n# apt-get update\n\nThen check.\n\n# Usage\n\nRun it.\n"
    assert [c.text for c in HierarchicalChunker().chunk(text)] == [text.strip()]  # plain text
    md = ParsedDocument("d", "u.md", "text/markdown", text, (Section(0, len(text)),))
    assert paths(HierarchicalChunker().chunk_document(md)) == [(), ("apt-get update",), ("Usage",)]
