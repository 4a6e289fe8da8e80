"""Structure strategies and templates reached by name from a YAML spec, routed by content type.

Checks in the Parquet output: code chunks carry language and scope, templates stamp
``template`` and their keys, repeated table headers are flagged, and what a template drops
is counted in the documents table.
"""
from __future__ import annotations

import os

import pyarrow.parquet as pq

from beam_chunking.pipelines.cli import main
from beam_chunking.schema import decode_metadata

BOOK = "Contents\n\nChapter 1 Start 3\n\nChapter 1 Start\n\nIt begins here.\n\nIndex\n\napple, 3\n"
ROWS = "".join(f"| r{i} | value {i} with words |\n" for i in range(60))
SPEC = """input: '{src}/*'
output: '{out}'
strategy: {{name: structural, max_chunk_size: 64}}
routes:
  text/x-python: {{name: code, max_chunk_size: 400}}
  text/plain: book
  text/csv: {{name: qa_pairs, question_column: q, answer_column: 2}}
  text/markdown: {{name: hierarchical, max_depth: 1, heading_patterns: [["^Step (?P<num>\\\\d+)", 0]]}}
"""


def test_spec_routes_every_structure_strategy(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "tool.py").write_text("class Tool:\n    def run(self):\n        return 1\n\n\ndef main():\n    Tool().run()\n")
    (src / "novel.txt").write_text(BOOK)
    (src / "faq.csv").write_text("q,a\nWhy?,Because.\n")
    (src / "notes.md").write_text("# Notes\n\nStep 1 mix\n\nflour\n")
    (src / "data.html").write_text(f"<h1>Data</h1><table><tr><th>k</th><th>v</th></tr>{''.join(f'<tr><td>r{i}</td><td>value {i} with words</td></tr>' for i in range(60))}</table>")
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.format(src=src, out=out))
    assert main(["run", "--config", str(spec)]) == 0
    docs = {os.path.basename(d["uri"]): d for d in pq.read_table(out / "documents").to_pylist()}
    assert {k: (d["status"], d["strategy"]) for k, d in docs.items()} == {
        "tool.py": ("ok", "code"), "novel.txt": ("ok", "book"), "faq.csv": ("ok", "qa_pairs"),
        "notes.md": ("ok", "hierarchical"), "data.html": ("ok", "structural")}
    assert docs["novel.txt"]["dropped"] == ["table of contents", "index"]
    assert docs["novel.txt"]["dropped_characters"] == len("Contents\n\nChapter 1 Start 3") + len("Index\n\napple, 3")
    assert docs["tool.py"]["dropped"] is None and docs["tool.py"]["dropped_characters"] is None
    chunks = {}
    for row in pq.read_table(out / "chunks").to_pylist():
        row["metadata"] = decode_metadata(row["metadata"])
        chunks.setdefault(os.path.basename(row["uri"]), []).append(row)
    [code] = chunks["tool.py"]
    assert (code["language"], code["chunk_kind"], code["metadata"]["symbols"]) == ("python", "code", ["Tool", "Tool.run", "main"])
    [chapter] = chunks["novel.txt"]
    assert (chapter["template"], chapter["metadata"]["chapter"], chapter["text"]) == ("book", "Chapter 1 Start", "Chapter 1 Start\n\nIt begins here.")
    [qa] = chunks["faq.csv"]
    assert (qa["template"], qa["metadata"]["question"], qa["metadata"]["answer"], qa["chunk_kind"]) == ("qa_pairs", "Why?", "Because.", "qa")
    # the parser's heading structures the file, so the spec's pattern only applies to unstructured text
    assert [c["section_path"] for c in chunks["notes.md"]] == [["Notes"]]
    tables = chunks["data.html"]
    assert len(tables) > 2 and all(c["token_count"] <= 64 for c in tables)
    repeated = [c for c in tables if c["metadata"].get("table_header_repeated")]
    assert repeated and all(c["text"].startswith("| k | v |\n|---|---|\n| r") for c in repeated)
