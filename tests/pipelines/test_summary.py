"""The end-of-run summary: failure reasons counted by cause, each said once and briefly."""
from beam_chunking.pipelines.cli import EXIT_TOO_MANY_FAILURES, main
from beam_chunking.pipelines.summary import REASON_WIDTH, failure_cause, reason

GIF = b"GIF89a" + bytes(64)
SEVEN_Z = b"7z\xbc\xaf\x27\x1c" + bytes(64)


def test_a_reason_drops_the_documents_own_name_and_is_cut_at_a_word():
    uri = "/data/in/a.txt"
    assert reason(f"{uri}: not a regular file (a FIFO);\n it was not opened", uri) == \
        "not a regular file (a FIFO); it was not opened"
    assert reason("other/b.txt: kept as it is", uri) == "other/b.txt: kept as it is"
    long = reason(f"{uri}: " + "word " * 60, uri)
    assert len(long) <= REASON_WIDTH and long.endswith("word…")
    assert reason(None, uri) == ""


def test_failures_are_counted_by_cause_not_only_by_type(tmp_path, capsys):
    src = tmp_path / "src"
    src.mkdir()
    for name, data in (("a.gif", GIF), ("b.gif", GIF), ("c.7z", SEVEN_Z)):
        (src / name).write_bytes(data)
    (src / "ok.txt").write_text("A document that parses.")
    assert main(["run", "--input", f"{src}/*", "--output", str(tmp_path / "out")]) == EXIT_TOO_MANY_FAILURES
    lines = capsys.readouterr().out.split("top failure reasons:\n", 1)[1].splitlines()
    assert lines[0].startswith("  2 x UnsupportedContentType at parse: content type 'image/gif' has no parser")
    assert lines[0].endswith((f"(e.g. {src}/a.gif)", f"(e.g. {src}/b.gif)")) and lines[0].count(str(src)) == 1
    assert lines[1].startswith("  1 x UnsupportedContentType at parse: content type 'application/x-7z-compressed' "
                               "has no parser")


def test_causes_differ_by_kind_not_by_their_numbers():
    def row(message, etype="LimitExceeded", uri="/in/a.pdf"):
        return {"error_message": f"{uri}: {message}", "uri": uri, "error_type": etype, "stage": "parse"}
    assert failure_cause(row("parsing was stopped after 31.2 s (over limits.max_parse_seconds=30)")) == \
        failure_cause(row("parsing was stopped after 45.9 s (over limits.max_parse_seconds=30)", uri="/in/b.pdf"))
    assert failure_cause(row("symbolic link to a folder (to /x); not followed", "SkippedInput")) != \
        failure_cause(row("symbolic link points outside the input root (to /y); not followed", "SkippedInput"))


def test_a_long_reason_keeps_its_advice_whole():
    uri = "docs/a.txt"
    message = (f"{uri}: not UTF-8 (byte offset 10: b'\\xff', invalid start byte) and not text in any legacy "
               "encoding charset-normalizer knows; convert it to UTF-8 or run with --decode-errors replace to "
               "keep it, bad bytes as U+FFFD")
    got = reason(message, uri)
    assert len(got) <= REASON_WIDTH and got.startswith("not UTF-8 (byte offset 10")
    assert got.endswith("… or run with --decode-errors replace to keep it, bad bytes as U+FFFD")
