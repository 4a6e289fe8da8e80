"""min_chunk_size in every size-bounded strategy: fragments join a neighbour or are flagged."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from beam_chunking.errors import ConfigError
from beam_chunking.registry import get
from beam_chunking.strategies import (CodeChunker, FixedSizeChunker, RecursiveChunker, SentenceChunker,
                                      StructuralChunker, TokenChunker)
from beam_chunking.text.fragments import effective_minimum
from beam_chunking.types import ParsedDocument, Section
from tests.helpers import adversarial_text, check_properties, tokens


def code_doc(src: str) -> ParsedDocument:
    return ParsedDocument("d", "x.py", "text/x-python", src,
                          (Section(0, len(src), kind="code", metadata={"language": "python"}),))


def check_minimum(chunks, minimum, measure):
    """Every chunk reaches the minimum, or says it could not."""
    for c in chunks:
        small = measure(c.text) < minimum
        assert bool(c.metadata.get("undersized")) == small, (c.text, measure(c.text), minimum)


CHAR_STRATEGIES = [
    lambda size: FixedSizeChunker(max_chunk_size=size, overlap=size // 5, min_chunk_size=size // 4),
    lambda size: RecursiveChunker(max_chunk_size=size, overlap=size // 5, min_chunk_size=size // 4),
    lambda size: CodeChunker(max_chunk_size=size, min_chunk_size=size // 4),
]
TOKEN_STRATEGIES = [
    lambda size: TokenChunker(max_chunk_size=size, overlap=size // 5, min_chunk_size=size // 4),
    lambda size: SentenceChunker(max_chunk_size=size, overlap=size // 5, min_chunk_size=size // 4),
    lambda size: StructuralChunker(max_chunk_size=size, min_chunk_size=size // 4),
]


@pytest.mark.parametrize("make", CHAR_STRATEGIES)
@settings(deadline=None, max_examples=60)
@given(text=adversarial_text, size=st.integers(8, 200))
def test_character_strategies_on_adversarial_text(make, text, size):
    strategy = make(size)
    chunks = check_properties(strategy, text, limit=size)
    check_minimum(chunks, strategy.min_chunk_size, len)


@pytest.mark.parametrize("make", TOKEN_STRATEGIES)
@settings(deadline=None, max_examples=40)
@given(text=adversarial_text, size=st.integers(8, 80))
def test_token_strategies_on_adversarial_text(make, text, size):
    strategy = make(size)
    chunks = check_properties(strategy, text, limit=size, measure=tokens)
    check_minimum(chunks, strategy.min_chunk_size, tokens)


def test_zero_turns_the_pass_off():
    text = "word " * 103
    off = RecursiveChunker(max_chunk_size=100, overlap=0, min_chunk_size=0).chunk(text)
    assert off[-1].text == "word word word" and "undersized" not in off[-1].metadata
    on = RecursiveChunker(max_chunk_size=100, overlap=0, min_chunk_size=20).chunk(text)
    # The tail cannot join the full chunk before it, so the two are cut again evenly.
    assert all(20 <= len(c.text) <= 100 for c in on[-2:]) and not any("undersized" in c.metadata for c in on)
    assert [c.text for c in off[:-2]] == [c.text for c in on[:-2]]


def test_token_windows_rebalance_a_short_tail():
    # The first length whose last plain window is a short tail (deterministic).
    for n in range(20, 80):
        text = "Results were reported by Smith and colleagues. " * n
        plain = TokenChunker(max_chunk_size=100, overlap=10, min_chunk_size=0).chunk(text)
        if plain[-1].token_count < 20:
            break
    assert plain[-1].token_count < 20
    chunks = TokenChunker(max_chunk_size=100, overlap=10, min_chunk_size=25).chunk(text)
    check_properties(TokenChunker(max_chunk_size=100, overlap=10, min_chunk_size=25), text, 100, tokens)
    assert min(c.token_count for c in chunks) >= 25 and len(chunks) == len(plain)
    assert not any(c.metadata.get("undersized") for c in chunks)


def test_a_tail_joins_back_when_the_ceiling_allows():
    text = "Alpha beta gamma delta.\n\nEpsilon zeta eta theta iota kappa lambda mu.\n\nNu."
    chunks = RecursiveChunker(max_chunk_size=60, overlap=0, min_chunk_size=10).chunk(text)
    assert [c.text for c in chunks][-1].endswith("lambda mu.\n\nNu.")
    assert not any(c.metadata.get("undersized") for c in chunks)


def test_code_block_headers_stay_with_their_body():
    body = "\n".join(f"        value_{i} = compute(value_{i - 1}, {i})" for i in range(1, 30))
    src = f"def run(self):\n    try:\n{body}\n    except ValueError:\n        pass\n"
    chunks = CodeChunker(max_chunk_size=400).chunk_document(code_doc(src))
    assert all(len(c.text) >= 100 for c in chunks[:-1])
    assert not any(c.text.strip() in ("try:", "def run(self):", "def run(self):\n    try:") for c in chunks)
    assert all(len(c.text) <= 400 for c in chunks)


def test_code_stdlib_module_has_no_unflagged_fragments():
    import argparse

    src = open(argparse.__file__, encoding="utf-8").read()
    chunks = CodeChunker().chunk_document(code_doc(src))
    minimum = effective_minimum(CodeChunker().min_chunk_size, CodeChunker().max_chunk_size)
    check_minimum(chunks, minimum, len)
    assert sum(len(c.text) < 60 for c in chunks) <= 2


def test_structural_shell_prompts_are_body_text_outside_markdown():
    text = "Install as root:\n# apt-get update\n# apt-get install foo\nThen check.\n"
    assert [c.text for c in StructuralChunker().chunk(text)] == [text.strip()]
    md = StructuralChunker(max_chunk_size=60).chunk_markdown("# Setup\n\n" + "Install it now. " * 20)
    assert md[0].text.startswith("# Setup\n\nInstall")  # the heading stays with its body


def test_sentence_table_row_with_etc_leaves_no_lone_pipe():
    rows = "".join(f"| tool {i} | grep, sed, awk, etc. | Done. More text |\n" for i in range(30))
    text = "Tools.\n\n| name | uses | notes |\n|---|---|---|\n" + rows
    for strategy in (SentenceChunker(max_chunk_size=64, overlap=0), get("sentence")):
        chunks = strategy.chunk(text)
        assert not any(c.text.strip() in ("|", "| |") for c in chunks)
        check_minimum(chunks, strategy.minimum_size(), tokens)


def test_token_tails_are_joined_or_flagged():
    text = "Results were reported by Smith et al. 1994). " * 30 + "Smith et al. 1994)."
    chunks = TokenChunker(max_chunk_size=64, overlap=0).chunk(text)
    check_minimum(chunks, 16, tokens)
    assert all(c.token_count <= 64 for c in chunks)


def test_validation_names_the_field():
    for cls in (FixedSizeChunker, RecursiveChunker, TokenChunker, SentenceChunker, StructuralChunker, CodeChunker):
        with pytest.raises(ConfigError, match="min_chunk_size"):
            cls(min_chunk_size=-1)
        assert cls(min_chunk_size=0).minimum_size() == 0 if hasattr(cls, "minimum_size") else True


def sectioned(parts):
    """A document whose sections are ``(text, heading_path, page)`` parts, one per line block."""
    text, sections, pos = "", [], 0
    for body, path, page in parts:
        text += body + "\n\n"
        sections.append(Section(pos, pos + len(body), level=len(path), heading_path=path, page=page,
                                kind="code" if body.startswith("$") else "text"))
        pos = len(text)
    return ParsedDocument("d", "u", "text/html", text, tuple(sections))


@pytest.mark.parametrize("strategy", [RecursiveChunker(max_chunk_size=400), SentenceChunker(max_chunk_size=100),
                                      StructuralChunker(max_chunk_size=100)])
def test_small_sections_join_neighbours_under_the_same_heading_only(strategy):
    long = ("Socket activation starts a service when a client connects to its socket. " * 3).strip()
    doc = sectioned([(long, ("3.7.1 Sockets",), None), ("Then reload.", ("3.7.1 Sockets",), None),
                     ("$ sudo systemctl daemon-reload", ("3.7.1 Sockets",), None),
                     ("Tiny.", ("3.8 Udev",), None), ("Other page.", ("3.8 Udev",), 2)])
    chunks = strategy.chunk_document(doc)
    texts = [c.text for c in chunks]
    assert texts[0] == long + "\n\nThen reload.\n\n$ sudo systemctl daemon-reload"
    assert texts[1:] == ["Tiny.", "Other page."]  # a new heading and a new page are hard boundaries
    assert chunks[0].metadata["heading"] == "3.7.1 Sockets" and "undersized" not in chunks[0].metadata
    assert all(c.metadata["undersized"] is True for c in chunks[1:])
    assert [c.index for c in chunks] == [0, 1, 2] and all(c.text == doc.text[c.start:c.end] for c in chunks)


@pytest.mark.parametrize("strategy", [RecursiveChunker(max_chunk_size=400), SentenceChunker(max_chunk_size=100),
                                      StructuralChunker(max_chunk_size=100)])
def test_a_header_like_line_closing_its_section_joins_the_chunk_before_it(strategy):
    # A root prompt read as a Markdown heading, and a caption whose table is too big to take it,
    # wait for the chunk after them; when that one cannot take them, the one before does.
    long = ("You can change to another virtual console from the command line as root. " * 3).strip()
    doc = sectioned([(long, ("1.1.6 Virtual consoles",), None), ("# chvt 3", ("1.1.6 Virtual consoles",), None),
                     ("Table 1.2 List of consoles", ("1.1.6 Virtual consoles",), None),
                     ("1.1.7 Leaving the prompt", ("1.1.7 Leaving the prompt",), None)])
    chunks = strategy.chunk_document(doc)
    assert chunks[0].text == long + "\n\n# chvt 3\n\nTable 1.2 List of consoles"
    assert chunks[0].metadata["heading"] == "1.1.6 Virtual consoles" and "undersized" not in chunks[0].metadata
    # A heading of its own never ends the chunk before it.
    assert [c.text for c in chunks[1:]] == ["1.1.7 Leaving the prompt"]
    assert all(c.text == doc.text[c.start:c.end] for c in chunks)


@pytest.mark.parametrize("strategy", [RecursiveChunker(max_chunk_size=400), SentenceChunker(max_chunk_size=100),
                                      StructuralChunker(max_chunk_size=100)])
def test_a_small_chunk_after_a_page_turn_joins_the_one_before_and_reports_both_pages(strategy):
    long = ("A paragraph of the book that runs to the foot of its page and on. " * 3).strip()
    other = "Next paragraph of the section, long enough to stand on its own page."
    doc = sectioned([(long, ("4.1 Files",), 7), ("%%", ("4.1 Files",), 8),  # the next page, same section
                     (other, ("4.1 Files",), 10),
                     ("tail", ("4.1 Files",), 12)])  # two pages on: something was left out between
    chunks = strategy.chunk_document(doc)
    assert [c.text for c in chunks] == [long + "\n\n%%", other, "tail"]
    assert (chunks[0].metadata["page"], chunks[0].metadata["page_end"]) == (7, 8)
    assert (chunks[1].metadata["page"], chunks[1].metadata["page_end"]) == (10, 10)
    assert chunks[2].metadata["undersized"] is True and all(c.text == doc.text[c.start:c.end] for c in chunks)



@pytest.mark.parametrize("strategy", [RecursiveChunker(max_chunk_size=400), StructuralChunker(max_chunk_size=100)])
def test_no_join_over_a_page_turn_where_furniture_was_dropped_between(strategy):
    # A running header cut out between the pages stays out: a join would put it back.
    long = ("A paragraph of the book that runs to the foot of its page and on. " * 3).strip()
    text = f"{long}\n\nDebian Reference / 4\n\n%%"
    tail = text.index("%%")
    doc = ParsedDocument("d", "u", "application/pdf", text,
                         (Section(0, len(long), heading_path=("4.1 Files",), page=7),
                          Section(tail, len(text), heading_path=("4.1 Files",), page=8)))
    chunks = strategy.chunk_document(doc)
    assert [c.text for c in chunks] == [long, "%%"] and chunks[1].metadata["undersized"] is True
