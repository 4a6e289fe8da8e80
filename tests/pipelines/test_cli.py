"""The command line tells the truth: strict flags, exit codes, one-line errors."""
import os
import signal
import subprocess
import sys
import time

import pytest

from beam_chunking.errors import ConfigError
from beam_chunking.pipelines.cli import EXIT_INTERRUPTED, EXIT_OK, EXIT_TOO_MANY_FAILURES, EXIT_USAGE, main
from beam_chunking.pipelines.spec import parse_spec
from beam_chunking.transforms.manifest import read_manifest, read_table

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")


def one_line_error(capsys):
    err = [line for line in capsys.readouterr().err.splitlines() if not line.startswith(("WARNING", "INFO"))]
    assert len(err) == 1, err
    return err[0]


@pytest.mark.parametrize("typo, hint", [
    (["--max-chunk-sise", "300"], "did you mean --max-chunk-size?"),
    (["--stratgy", "token"], "did you mean --strategy?"),
    (["--window-tokens", "64"], "unknown flag"),
])
def test_misspelled_flags_are_refused_with_a_hint(typo, hint, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["run", "--input", f"{EXAMPLES}/*", "--output", str(out), *typo]) == EXIT_USAGE
    line = one_line_error(capsys)
    assert typo[0] in line and hint in line
    assert not out.exists()


def test_known_flags_are_checked_without_building_the_suggestions(tmp_path, monkeypatch):
    # The spellings for "did you mean" cost a third parse of every Beam option; a valid
    # command line (Beam flags whose dest differs from their name included) never needs them.
    from beam_chunking.pipelines import flags

    def refuse(*_):
        raise AssertionError("suggestions built for a valid command line")

    monkeypatch.setattr(flags, "_known_flags", refuse)
    flags.check_flags(["--input", f"{EXAMPLES}/*", "--output", str(tmp_path / "o"), "--max-chunk-size", "300",
                       "--experiment", "use_runner_v2", "--direct_num_workers", "2"])
    with pytest.raises(AssertionError, match="suggestions built"):
        flags.check_flags(["--input", f"{EXAMPLES}/*", "--max-chunk-sise", "300"])


def test_a_shell_expanded_glob_is_named(tmp_path, capsys):
    files = sorted(os.path.join(EXAMPLES, n) for n in os.listdir(EXAMPLES))
    assert main(["run", "--input", *files, "--output", str(tmp_path / "o")]) == EXIT_USAGE
    assert "quote it" in one_line_error(capsys)


def test_repeated_input_and_exclude(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # wildcard excludes match full paths from any folder
    out = str(tmp_path / "out")
    assert main(["run", "--input", f"{EXAMPLES}/*.md", "--input", f"{EXAMPLES}/*.txt", "--input", f"{EXAMPLES}/*",
                 "--exclude", "*/release-notes.txt", "--exclude", "*.html", "--output", out]) == EXIT_OK
    uris = sorted(os.path.basename(u) for u in read_table(out, "documents").column("uri").to_pylist())
    assert uris == ["chunking-basics.md", "field-guide.md", "printing-press.txt"]  # each file once


def test_all_failed_exits_non_zero_and_still_writes_the_tables(tmp_path, capsys):
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.pdf").write_bytes(b"%PDF-1.4 junk")
    (src / "b.txt").write_bytes(b"ca\x81\x02")  # neither UTF-8 nor any legacy encoding
    out = str(tmp_path / "out")
    assert main(["run", "--input", f"{src}/*", "--output", out]) == EXIT_TOO_MANY_FAILURES
    captured = capsys.readouterr()
    assert "2 of 2 documents failed" in captured.err and "ParseError" in captured.out
    assert read_table(out, "documents").num_rows == 2
    assert main(["run", "--input", f"{src}/*", "--output", out, "--overwrite", "--max-failures", "2"]) == EXIT_OK
    assert main(["run", "--input", f"{src}/*", "--output", out, "--overwrite", "--max-failures", "50%"]) == \
        EXIT_TOO_MANY_FAILURES
    for bad in ("lots", "150%", "-1", "1.5", True):
        with pytest.raises(ConfigError, match="max_failures"):
            parse_spec({"max_failures": bad})
    assert parse_spec({"max_failures": "100%"}).max_failures == "100%"


@pytest.mark.parametrize("args, expected", [
    (["--input", EXAMPLES], "is a folder"),
    (["--input", f"{EXAMPLES}/nothing-*"], "matches no file"),
])
def test_bad_inputs_fail_in_one_line_before_any_work(args, expected, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["run", *args, "--output", str(out)]) == EXIT_USAGE
    assert expected in one_line_error(capsys) and not out.exists()


def test_output_that_is_a_file_fails_before_any_work(tmp_path, capsys):
    path = tmp_path / "out.parquet"
    path.write_text("mine")
    assert main(["run", "--input", f"{EXAMPLES}/*", "--output", str(path)]) == EXIT_USAGE
    assert "is a file" in one_line_error(capsys) and path.read_text() == "mine"


def test_output_inside_the_input_is_refused(tmp_path, capsys):
    src = tmp_path / "docs"
    src.mkdir()
    (src / "a.md").write_text("# A\n\ntext\n")
    assert main(["run", "--input", f"{src}/**", "--output", str(src / "out")]) == EXIT_USAGE
    assert "inside the input" in one_line_error(capsys)
    assert main(["run", "--input", f"{src}/*", "--output", str(src / "out")]) == EXIT_OK  # cannot match it


def test_route_keys_must_be_content_types_that_exist():
    with pytest.raises(ConfigError, match=r"routes\.text/htm: .*did you mean 'text/html'"):
        parse_spec({"routes": {"text/htm": "sentence"}})
    assert parse_spec({"routes": {"text/*": "sentence", "application/pdf": "recursive"}})


def test_document_ids_do_not_depend_on_how_the_path_is_written(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    assert main(["run", "--input", "examples/printing-press.txt", "--output", a]) == EXIT_OK
    assert main(["run", "--input", "./examples/../examples/printing-press.txt", "--output", b]) == EXIT_OK
    ids = [read_table(o, "documents").column("document_id").to_pylist() for o in (a, b)]
    assert ids[0] == ids[1] and len(ids[0]) == 1


def test_num_shards_means_exactly_n_files(tmp_path):
    out = str(tmp_path / "out")
    assert main(["run", "--input", f"{EXAMPLES}/*", "--output", out, "--num-shards", "8"]) == EXIT_OK
    assert {t: len(files) for t, files in read_manifest(out)["tables"].items()} == {"chunks": 8, "documents": 8,
                                                                                   "parents": 8, "changes": 8}


def test_help_version_and_listing(capsys):
    assert main(["run", "--help"]) == EXIT_OK
    text = capsys.readouterr().out
    assert "examples:" in text and "exit codes:" in text and "``" not in text
    assert main(["--version"]) == EXIT_OK and capsys.readouterr().out.startswith("beam-chunking ")
    assert main(["strategies"]) == EXIT_OK
    listing = capsys.readouterr().out
    assert "--max-chunk-size 512:" in listing and "seed" not in listing.lower()


def _interruptible() -> None:
    # A test run started in the background by a non-interactive shell inherits SIGINT
    # ignored, and Python then never raises KeyboardInterrupt: give the CLI the default.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _cli(*args, **kwargs):
    return subprocess.Popen([sys.executable, "-m", "beam_chunking.pipelines.cli", *args], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_interruptible,
                            **kwargs)


@pytest.mark.integration
def test_broken_pipe_is_quiet():
    proc = subprocess.run(f"{sys.executable} -m beam_chunking.pipelines.cli strategies | head -1", shell=True,
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.stdout.count("\n") == 1 and "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr


@pytest.mark.integration
def test_ctrl_c_exits_130_in_one_line(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for i in range(200):  # 60 MB: far more than 4 s of work
        (src / f"d{i:03d}.txt").write_text("A sentence of plain words goes here. " * 8000)
    proc = _cli("run", "--input", f"{src}/*", "--output", str(tmp_path / "out"), "--strategy", "sentence")
    time.sleep(4)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    lines = [line for line in err.splitlines() if not line.startswith(("WARNING", "INFO"))]
    assert proc.returncode == EXIT_INTERRUPTED, err[-2000:]
    assert lines == ["beam-chunking: interrupted; nothing was committed, the previous output is intact"], err[-2000:]
    assert not (tmp_path / "out" / "_manifest.json").exists()


def test_progress_lines_when_not_a_terminal(tmp_path, monkeypatch, caplog):
    import logging

    from beam_chunking.pipelines import progress

    src = tmp_path / "src"
    src.mkdir()
    for i in range(40):
        (src / f"d{i:02d}.txt").write_text("A sentence of plain words goes here. " * 3000)
    monkeypatch.setattr(progress, "LOG_EVERY_SECONDS", 0.2)
    with caplog.at_level(logging.INFO, logger="beam_chunking.progress"):
        assert main(["run", "--input", f"{src}/*", "--output", str(tmp_path / "out"), "--strategy", "sentence"]) == 0
    lines = [r.getMessage() for r in caplog.records if r.name == "beam_chunking.progress"]
    assert lines and all(line.startswith("progress: ") and "/40 documents" in line for line in lines), lines


@pytest.mark.parametrize("args, expected", [
    (["--compression", "lz4"], "compression: 'lz4' must be one of"),
    (["--num-shards", "x"], "num_shards: expected an integer >= 0, got 'x'"),
    (["--decode-errors", "ignore"], "decode_errors: 'ignore' must be one of"),
    (["--strategy", "sentence", "--max-chunk-size", "64"], "(the default overlap; set a smaller one: --overlap N"),
])
def test_bad_values_are_one_line(args, expected, tmp_path, capsys):
    assert main(["run", "--input", f"{EXAMPLES}/*", "--output", str(tmp_path / "o"), *args]) == EXIT_USAGE
    assert expected in one_line_error(capsys)


def test_strategies_name_lists_that_strategy_and_a_wrong_name_gets_a_hint(capsys):
    assert main(["strategies", "structural", "code"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("code  (CodeChunker;") and "\n\nstructural  (StructuralChunker;" in out
    assert "recursive  (" not in out
    assert main(["strategies", "structurl"]) == 2
    assert "strategy 'structurl' is not registered; did you mean 'structural'?" in capsys.readouterr().err


def test_two_pattern_mistakes_get_a_hint(tmp_path, capsys):
    (tmp_path / "docs" / "guide").mkdir(parents=True)
    (tmp_path / "docs" / "guide" / "a.md").write_text("# A\n\ntext\n")
    assert main(["run", "--input", f"{tmp_path}/docs/*", "--output", str(tmp_path / "out")]) == 2
    assert f"it matches only folders; did you mean '{tmp_path}/docs/**'" in capsys.readouterr().err
    assert main(["run", "--input", "~/no-such-docs-here/*", "--output", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "a shell does not expand ~ inside quotes: write " + os.path.expanduser("~/no-such-docs-here/*") in err


def test_a_bad_value_of_a_beam_option_is_one_line(tmp_path, capsys):
    assert main(["run", "--input", f"{EXAMPLES}/*", "--output", str(tmp_path / "o"), "--direct_num_workers", "abc"]) == 2
    err = capsys.readouterr().err
    assert err == "beam-chunking: argument --direct_num_workers: invalid int value: 'abc'\n"
