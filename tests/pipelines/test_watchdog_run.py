"""A DOCX whose one library call outlasts the time budget fails alone, on each local runner."""
from __future__ import annotations

import re

import pytest

from beam_chunking.pipelines.cli import main
from beam_chunking.transforms.manifest import read_table

RUNNERS = {"in_process": [], "multi_processing": ["--direct_running_mode", "multi_processing",
                                                  "--direct_num_workers", "2"]}


@pytest.mark.parametrize("mode", sorted(RUNNERS))
def test_a_slow_library_call_fails_its_document_on_max_parse_seconds(tmp_path, mode):
    from tests.parsers.fixtures import big_table_docx, docx_bytes, pdf_bytes, pptx_bytes, xlsx_bytes

    words = "The quick brown fox jumps over the lazy dog. " * 30
    good = {
        "report.docx": docx_bytes([("heading", 1, "Report"), ("p", words), ("table", [["a", "b"], ["1", "2"]])]),
        "memo.docx": docx_bytes([("p", words)]),
        "deck.pptx": pptx_bytes([{"title": "Plan", "body": words}]),
        "sheet.xlsx": xlsx_bytes({"data": [["name", "n"], ["ada", 36]]}),
        "paper.pdf": pdf_bytes([words]),
        "notes.txt": words.encode(),
    }
    src = tmp_path / "in"
    src.mkdir()
    for name, data in good.items():
        (src / name).write_bytes(data)
    (src / "slow.docx").write_bytes(big_table_docx(6_000))  # one call of about 3.5 s
    spec = tmp_path / "spec.yaml"
    spec.write_text("limits: {max_parse_seconds: 1.5}\n")
    out = str(tmp_path / "out")
    main(["run", "--config", str(spec), "--input", f"{src}/*", "--output", out, "--max-failures", "1",
          *RUNNERS[mode]])
    docs = {row["uri"].rsplit("/", 1)[-1]: row for row in read_table(out, "documents").to_pylist()}
    slow = docs.pop("slow.docx")
    assert (slow["status"], slow["stage"], slow["error_type"]) == ("failed", "parse", "LimitExceeded")
    assert re.search(r"slow.docx: parsing was stopped after 2\.\d s", slow["error_message"])
    assert "limits.max_parse_seconds=1.5" in slow["error_message"]
    assert {name: row["status"] for name, row in docs.items()} == {name: "ok" for name in good}
    chunked = {u.rsplit("/", 1)[-1] for u in read_table(out, "chunks").column("uri").to_pylist()}
    assert chunked == set(good)
