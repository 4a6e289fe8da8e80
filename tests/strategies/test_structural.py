"""StructuralChunker: headings, fences, tables, indentation and braces within a token ceiling."""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from beam_chunking.errors import ConfigError
from beam_chunking.parsers import parse
from beam_chunking.strategies import StructuralChunker
from tests.helpers import adversarial_text, check_long_text, check_pickle, check_properties, tokens
from tests.parsers.fixtures import document

ROWS = "".join(f"| row {i} | value number {i} with several words |\n" for i in range(40))
DOC = f"""# Title

Intro paragraph here.

## Config

```yaml
server:
  port: 8080
```

## Data

| name | value |
|---|---|
{ROWS}
## Code

```python
def f(x):
    return x
```
"""


def test_headings_are_hard_boundaries_and_small_blocks_stay_whole():
    chunks = StructuralChunker(max_chunk_size=200).chunk_markdown("# A\n\none\n\n# B\n\ntwo\n")
    assert [c.text for c in chunks] == ["# A\n\none", "# B\n\ntwo"]
    chunks = StructuralChunker(max_chunk_size=60).chunk_markdown(DOC)
    assert chunks[0].text == "# Title\n\nIntro paragraph here."
    assert chunks[1].text == "## Config\n\n```yaml\nserver:\n  port: 8080\n```"


def test_oversized_table_repeats_its_header_on_every_piece():
    chunker = StructuralChunker(max_chunk_size=60)
    chunks = [c for c in chunker.chunk_markdown(DOC)
              if c.metadata.get("chunk_kind") == "table" or c.text.startswith("## Data")]
    assert len(chunks) > 5
    first, rest = chunks[0], chunks[1:]
    # The "## Data" heading stays with the table's first rows (it is under min_chunk_size alone).
    assert first.text == DOC[first.start:first.end]
    assert first.text.startswith("## Data\n\n| name | value |\n|---|---|\n| row 0 |")
    assert "table_header_repeated" not in first.metadata
    rows_seen = []
    for c in rest:
        assert c.metadata["table_header_repeated"] is True
        assert c.text == "| name | value |\n|---|---|\n" + DOC[c.start:c.end]
        assert DOC[c.start:c.end].startswith("| row ")
    for c in chunks:
        assert c.token_count == tokens(c.text) <= 60
        rows_seen += [line for line in DOC[c.start:c.end].split("\n") if line.startswith("| row")]
    assert rows_seen == ROWS.strip("\n").split("\n")  # every row once, in order


def test_fenced_code_gets_kind_and_language():
    chunks = StructuralChunker(max_chunk_size=12).chunk("Intro words here.\n\n```python\ndef f(x):\n    return x\n```\n")
    code = [c for c in chunks if c.metadata.get("chunk_kind") == "code"]
    assert code and all(c.metadata["language"] == "python" for c in code)


def test_indentation_and_brace_depth_boundaries():
    config = "a {\n  b = 1\n  c = 2\n}\n\nd {\n  e = 3\n}\n"
    chunks = StructuralChunker(max_chunk_size=16).chunk(config)  # 24 tokens in all, blocks of 15 and 9
    assert [c.text for c in chunks] == ["a {\n  b = 1\n  c = 2\n}", "d {\n  e = 3\n}"]
    unicode = 'a {\n  b = "ünïcödé ✓"\n  c = 2\n}\n\nd {\n  e = 3\n}\n'  # non-ASCII never counts as a brace
    assert [c.text for c in StructuralChunker(max_chunk_size=22).chunk(unicode)] == [unicode.split("\n\n")[0], "d {\n  e = 3\n}"]
    # an unclosed fence runs to the end: the heading-like line after it is still code
    open_fence = "Intro words.\n\n```sh\necho one\n# not a heading\necho two\n"
    assert all(c.metadata.get("chunk_kind") == "code" for c in StructuralChunker(max_chunk_size=8).chunk(open_fence)[1:])
    assert len(StructuralChunker(max_chunk_size=8).chunk(open_fence)) >= 2
    # a heading inside a fence is code, not a boundary
    fenced = "```bash\n# not a heading\necho hi\n```"
    assert [c.text for c in StructuralChunker(max_chunk_size=50).chunk(fenced)] == [fenced]


def test_html_table_sections_from_the_parser():
    rows = "".join(f"<tr><td>item {i}</td><td>{i * 7} units in stock today</td></tr>" for i in range(60))
    doc = parse(document("t.html", f"<h2>Stock</h2><table><tr><th>Item</th><th>Count</th></tr>{rows}</table>".encode()))
    chunks = StructuralChunker(max_chunk_size=80).chunk_document(doc)
    assert all(c.token_count <= 80 for c in chunks)
    assert all(c.text.split("\n")[:2] == ["| Item | Count |", "|---|---|"] for c in chunks if c.metadata.get("table_header_repeated"))
    assert chunks[0].metadata["heading"] == "Stock"


def test_validation_pickle_and_long_line():
    with pytest.raises(ConfigError, match="max_chunk_size"):
        StructuralChunker(max_chunk_size=2)
    check_pickle(StructuralChunker(), DOC)
    check_long_text(StructuralChunker(max_chunk_size=256), "word " * 1_000_000 + "end", 256, lambda c: c.token_count)


@given(adversarial_text, st.sampled_from([8, 32, 128]))
def test_bounded_exact_and_lossless(text, budget):
    check_properties(StructuralChunker(max_chunk_size=budget), text, budget, measure=tokens)


def test_real_html_chapter_stays_bounded():
    from beam_chunking.parsers import parse
    from tests.parsers.fixtures import document, realdocs_dir

    root = realdocs_dir()
    if root is None:
        pytest.skip("../shared/realdocs/debian-reference is absent (not part of a user checkout)")
    doc = parse(document("ch02.en.html", (root / "ch02.en.html").read_bytes()))
    chunks = StructuralChunker(max_chunk_size=256).chunk_document(doc)
    assert all(c.token_count == tokens(c.text) <= 256 for c in chunks)
    plain = [c for c in chunks if not c.metadata.get("table_header_repeated")]
    assert all(c.text == doc.text[c.start:c.end] for c in plain)
    repeated = [c for c in chunks if c.metadata.get("table_header_repeated")]
    assert repeated and all(c.text.endswith(doc.text[c.start:c.end]) for c in repeated)
    covered = bytearray(len(doc.text))
    for c in chunks:
        covered[c.start:c.end] = b"\x01" * (c.end - c.start)
    assert all(covered[k] or doc.text[k].isspace() for k in range(len(doc.text)))


def test_a_heading_line_in_text_without_blank_lines_stays_with_its_body():
    # Wiki-style text: one paragraph per line, headings on lines of their own, no blank lines.
    para = "The game takes place during the war , and follows a penal unit of the army . " * 4
    text = f" = Title = \n {para}\n {para}\n = = Plot = = \n {para}\n {para}\n"
    chunks = StructuralChunker(max_chunk_size=200).chunk_markdown(text)
    holder = next(c for c in chunks if "= = Plot = =" in c.text)
    assert holder.text.startswith("= = Plot = =") and para.strip() in holder.text
    assert all(c.token_count == tokens(c.text) <= 200 for c in chunks)


def test_a_paragraph_on_one_long_line_is_cut_between_sentences_into_even_parts():
    sentences = [f"Sentence number {k} tells a little more about the subject at hand." for k in range(17)]
    line = " ".join(sentences)
    assert 200 < tokens(line) < 400
    chunks = StructuralChunker(max_chunk_size=200).chunk(line)
    assert len(chunks) == 2 and all(c.text.endswith(".") for c in chunks)
    sizes = [c.token_count for c in chunks]
    assert max(sizes) - min(sizes) <= 20 and "".join(c.text for c in chunks).replace(" ", "") == line.replace(" ", "")
