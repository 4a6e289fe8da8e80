"""The ``ocr`` option (auto, always, never): declared once, given by flag or spec, carried to
the parsers that OCR, and part of what an incremental run compares."""
from __future__ import annotations

import io
import os

import pytest

from beam_chunking.config import JobConfig
from beam_chunking.errors import ConfigError
from beam_chunking.parsers import parse_in_process
from beam_chunking.parsers.dispatch import PARSERS, takes_ocr
from beam_chunking.pipelines.cli import EXIT_USAGE, EXIT_TOO_MANY_FAILURES, main
from beam_chunking.pipelines.run import pipeline_options
from beam_chunking.pipelines.spec import parse_spec
from beam_chunking.transforms.incremental import options_fingerprint
from beam_chunking.transforms.manifest import read_table
from beam_chunking.transforms.parse import ParseDocuments
from beam_chunking.types import Document

JOB = ["--input", "in/*", "--output", "out"]


def png() -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("L", (16, 16), "white").save(buffer, "PNG")
    return buffer.getvalue()


def test_the_mode_defaults_to_auto_and_comes_from_the_flag_or_the_spec(tmp_path):
    assert JobConfig().ocr == "auto" and pipeline_options(JOB)[1].ocr == "auto"
    assert pipeline_options(JOB + ["--ocr", "never"])[1].ocr == "never"
    spec = tmp_path / "spec.yaml"
    spec.write_text("ocr: always\n")
    assert pipeline_options(JOB + ["--config", str(spec)])[1].ocr == "always"
    assert pipeline_options(JOB + ["--config", str(spec), "--ocr", "never"])[1].ocr == "never"  # the flag wins
    assert parse_spec({"ocr": "never"}).ocr == "never"


def test_a_bad_mode_is_one_line_naming_the_modes(tmp_path, capsys):
    assert main(["run", *JOB[:1], str(tmp_path / "*"), "--output", str(tmp_path / "o"), "--ocr", "sometimes"]) \
        == EXIT_USAGE
    err = [line for line in capsys.readouterr().err.splitlines() if not line.startswith(("WARNING", "INFO"))]
    assert len(err) == 1 and "ocr: 'sometimes' must be one of ('auto', 'always', 'never')" in err[0], err
    with pytest.raises(ConfigError, match="ocr: 'yes'"):
        parse_spec({"ocr": "yes"})
    with pytest.raises(ConfigError, match="ParseDocuments.ocr: 'off'"):
        ParseDocuments(ocr="off")
    with pytest.raises(ConfigError, match="ocr: 'x'"):
        JobConfig(ocr="x")


def test_only_parsers_that_ocr_are_given_the_mode():
    assert takes_ocr(PARSERS["image/png"]) and not takes_ocr(PARSERS["text/plain"])
    text = parse_in_process(Document("d", "a.txt", b"Plain words.", "text/plain"), ocr="never")
    assert text.text == "Plain words."
    assert ParseDocuments(ocr="always").display_data()["ocr"] == "always"


def test_changing_the_mode_changes_the_options_fingerprint():
    prints = {mode: options_fingerprint(JobConfig(ocr=mode)) for mode in ("auto", "always", "never")}
    assert len(set(prints.values())) == 3
    assert options_fingerprint(JobConfig()) == prints["auto"]


def test_the_command_line_mode_reaches_the_image_parser(tmp_path, capsys):
    source = tmp_path / "in"
    source.mkdir()
    (source / "scan.png").write_bytes(png())
    (source / "note.txt").write_text("A note in plain text.")
    spec = tmp_path / "spec.yaml"
    spec.write_text("ocr: always\n")
    out = tmp_path / "out"
    code = main(["run", "--input", f"{source}/*", "--output", str(out), "--config", str(spec), "--ocr", "never"])
    assert code == EXIT_TOO_MANY_FAILURES
    rows = {os.path.basename(r["uri"]): r for r in read_table(str(out), "documents").to_pylist()}
    assert rows["note.txt"]["status"] == "ok"
    assert rows["scan.png"]["status"] == "failed" and "OCR is off (ocr: never)" in rows["scan.png"]["error_message"]
