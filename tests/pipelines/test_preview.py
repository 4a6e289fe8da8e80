"""``beam-chunking preview FILE``: chunk boundaries in the terminal, without Beam."""
import gzip
import io
import os
import re
import subprocess
import sys

import pytest

from beam_chunking.parsers import parse
from beam_chunking.pipelines.inspection import percentiles
from beam_chunking.pipelines.preview import load_document, preview_command, segments
from beam_chunking.registry import get
from beam_chunking.types import Document

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PRESS = os.path.join(ROOT, "examples", "printing-press.txt")
MARKER = re.compile(r"^--- (?:chunk (\d+)/(\d+) \| (\d+) (.+?) \| id (\S+) \| span (\d+)\.\.(\d+) \| overlap (\d+) "
                    r"characters|not in any chunk \| (\d+) characters) ---$")


class Tty(io.StringIO):
    def isatty(self):
        return True


def preview(argv, stream=None):
    stream = stream if stream is not None else io.StringIO()
    return preview_command(argv, stdout=stream), stream.getvalue()


def parse_preview(out):
    """``(header, [(marker fields, segment)], footer)``; each segment loses the one newline
    preview adds after it."""
    lines = out.split("\n")
    assert lines[-1] == "" and lines[-2].startswith("=== ")
    header, footer, body = lines[0], lines[-2], lines[1:-2]
    blocks, current = [], None
    for line in body:
        m = MARKER.match(line)
        if m:
            current = [m.groups(), []]
            blocks.append(current)
        else:
            current[1].append(line)
    return header, [(fields, "\n".join(seg)) for fields, seg in blocks], footer


def test_recursive_200_shows_every_chunk_and_the_segments_rebuild_the_file():
    code, out = preview([PRESS, "--strategy", "recursive", "--max-chunk-size", "200"])
    assert code == 0
    doc = load_document(PRESS)
    with open(PRESS, encoding="utf-8") as f:
        assert doc.text == f.read()
    expected = get("recursive", max_chunk_size=200).chunk_document(doc)
    header, blocks, footer = parse_preview(out)
    assert header == (f"{PRESS} | text/plain | strategy recursive(max_chunk_size=200) | unit characters "
                      f"| {len(expected)} chunks")
    assert "".join(seg for _, seg in blocks) == doc.text
    shown = [f for f, _ in blocks if f[0] is not None]
    assert [f[4] for f in shown] == [c.id for c in expected]
    for f, c in zip(shown, expected):
        assert (int(f[5]), int(f[6])) == (c.start, c.end) and int(f[2]) == len(c.text) <= 200
        assert f[3] == "characters" and int(f[1]) == len(expected)
    assert any(int(f[7]) > 0 for f in shown)  # overlap is reported (default 50)
    stats = percentiles([len(c.text) for c in expected])
    assert footer == (f"=== {len(expected)} chunks | characters p5 {stats['p5']} p50 {stats['p50']} "
                      f"p95 {stats['p95']} max {stats['max']} ===")
    assert "\x1b" not in out  # not a terminal: no colour


def test_options_as_key_value_yaml_and_the_overlap_flag():
    argv = [PRESS, "--strategy", "recursive", "--option", "max_chunk_size=200", "--overlap", "0",
            "--option", "separators=['. ', ' ']"]
    code, out = preview(argv)
    assert code == 0
    strategy = get("recursive", max_chunk_size=200, overlap=0, separators=(". ", " "))
    expected = strategy.chunk_document(load_document(PRESS))
    _, blocks, _ = parse_preview(out)
    assert [f[4] for f, _ in blocks if f[0]] == [c.id for c in expected]
    assert all(f[7] == "0" for f, _ in blocks if f[0])


def test_with_no_strategy_the_file_gets_the_one_a_run_chooses_for_its_type(tmp_path):
    code, out = preview([PRESS])
    assert code == 0 and out.splitlines()[0].startswith(f"{PRESS} | text/plain | strategy structural (chosen for "
                                                        "text/plain) | unit cl100k_base tokens |")
    source = tmp_path / "tool.py"
    source.write_text("def one():\n    return 1\n\n\ndef two():\n    return 2\n")
    code, out = preview([str(source)])
    assert code == 0 and "| strategy code (chosen for text/x-python) | unit characters |" in out.splitlines()[0]


def test_token_strategy_sizes_are_in_its_unit():
    code, out = preview([PRESS, "--strategy", "token", "--max-chunk-size", "64", "--overlap", "8"])
    assert code == 0
    expected = get("token", max_chunk_size=64, overlap=8).chunk_document(load_document(PRESS))
    header, blocks, footer = parse_preview(out)
    assert "unit cl100k_base tokens" in header and "| cl100k_base tokens p5 " in footer
    shown = [f for f, _ in blocks if f[0]]
    assert [int(f[2]) for f in shown] == [c.token_count for c in expected]
    assert max(c.token_count for c in expected) <= 64
    assert {f[3] for f in shown} == {"cl100k_base tokens"}


def test_uncovered_text_and_drops_are_shown(tmp_path):
    book = tmp_path / "book.md"
    book.write_text("# Contents\n\nChapter one .... 1\n\n# Chapter one\n\nIt was a bright cold day.\n\n"
                    "# Index\n\ndays, 1\n")
    code, out = preview([str(book), "--strategy", "book"])
    assert code == 0
    header, blocks, footer = parse_preview(out)
    assert "".join(seg for _, seg in blocks) == book.read_text()
    assert blocks[0][0][0] is None and "# Contents" in blocks[0][1]  # not in any chunk
    assert "unit unbounded" in header and "dropped table of contents (" in footer and "index (" in footer


def test_gzip_is_inflated_and_typed_by_the_inner_name(tmp_path):
    gz = tmp_path / "press.txt.gz"
    gz.write_bytes(gzip.compress(open(PRESS, "rb").read()))
    code, out = preview([str(gz), "--strategy", "recursive", "--max-chunk-size", "300"])
    assert code == 0 and " | text/plain | " in out.split("\n")[0]
    assert "".join(seg for _, seg in parse_preview(out)[1]) == load_document(PRESS).text


def test_colour_alternates_on_a_terminal_and_is_off_on_request(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    code, out = preview([PRESS, "--strategy", "recursive", "--max-chunk-size", "200"], Tty())
    assert code == 0 and "\x1b[36m" in out and "\x1b[33m" in out and "\x1b[4m" in out  # overlap underlined
    assert re.sub(r"\x1b\[[0-9;]*m", "", out) == preview([PRESS, "--strategy", "recursive", "--max-chunk-size", "200"])[1]
    assert "\x1b" not in preview([PRESS, "--no-color"], Tty())[1]
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b" not in preview([PRESS], Tty())[1]


def test_control_characters_in_the_file_cannot_drive_the_terminal(tmp_path):
    f = tmp_path / "ctrl.txt"
    f.write_bytes(b"plain \x1b[31mred\x1b[0m text\r\nbell \x07 here\n")
    code, out = preview([str(f)])
    assert code == 0 and "\x1b" not in out and "\x07" not in out
    assert "\\x1b[31mred" in out and "\\x07" in out and "text\r\n" in out


@pytest.mark.parametrize("argv, says", [
    (["--strategy", "recursive", "--option", "nonsense=1"], "strategy.nonsense: unknown option"),
    (["--max-chunk-size", "100"], "need --strategy NAME"),
    (["--strategy", "recursive", "--max-chunk-size", "10", "--overlap", "20"],
     "overlap"),
    (["--strategy", "nope"], "'nope' is not a strategy"),
    (["--option", "novalue"], "expected KEY=VALUE"),
    (["--option", "overlap=[unclosed"], "not YAML"),
    (["--strategy", "book", "--max-chunk-size", "3"], "unknown option of strategy 'book'"),
    (["--max-chunk-size", "many"], "invalid int value"),
])
def test_a_bad_option_is_exit_2_with_one_line(argv, says, capsys):
    code, out = preview([PRESS, *argv])
    err = capsys.readouterr().err
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("beam-chunking preview: ") and says in err, err


def test_a_missing_file_is_exit_2_and_a_broken_one_exit_1(tmp_path, capsys):
    assert preview([str(tmp_path / "absent.txt")])[0] == 2
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4 junk")
    assert preview([str(broken)])[0] == 1
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2 and "absent.txt: No such file or directory" in lines[0] and "broken.pdf" in lines[1]


def test_segments_partition_the_text_whatever_the_spans():
    doc = parse(Document("d", "x.txt", b"  aaaa bbbb cccc dddd  ", "text/plain"))
    chunks = get("fixed", max_chunk_size=9, overlap=4).chunk_document(doc)
    parts = segments(doc.text, chunks)
    assert "".join(doc.text[s:e] for _, s, e in parts) == doc.text
    assert [i for i, _, _ in parts if i is not None] == list(range(len(chunks)))


def test_preview_does_not_import_beam():
    # Any import of apache_beam raises, so a failure's traceback names the module that imports it.
    code = ("import importlib.abc, io, sys\n"
            "class NoBeam(importlib.abc.MetaPathFinder):\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] == 'apache_beam':\n"
            "            raise ImportError('preview imported ' + name)\n"
            "sys.meta_path.insert(0, NoBeam())\n"
            "from beam_chunking.pipelines.preview import preview_command\n"
            f"assert preview_command([{PRESS!r}, '--strategy', 'recursive', '--max-chunk-size', '200'],\n"
            "                       stdout=io.StringIO()) == 0\n"
            "assert not [m for m in sys.modules if m.split('.')[0] == 'apache_beam']\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]


def test_preview_ids_match_a_run_of_the_same_file(tmp_path, monkeypatch):
    from beam_chunking.pipelines.run import run
    from beam_chunking.transforms.manifest import read_table

    monkeypatch.chdir(os.path.dirname(os.path.dirname(PRESS)))
    run(["--input", os.path.join(".", "examples", "..", "examples", os.path.basename(PRESS)),
         "--output", str(tmp_path / "out")])
    ran = sorted(read_table(str(tmp_path / "out")).column("chunk_id").to_pylist())
    previewed = sorted(c.id for c in get("structural").chunk_document(load_document(PRESS)))
    assert ran == previewed
