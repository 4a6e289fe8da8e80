"""The watchdog: documents whose library calls cannot be interrupted are parsed in a child
process that is killed at the time budget (issue 16)."""
from __future__ import annotations

import dataclasses
import io
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import warnings
import zipfile

import psutil
import pytest

from beam_chunking.errors import LimitExceeded, MissingExtra, ParseError
from beam_chunking.parsers import parse, parse_in_process, watchdog
from beam_chunking.parsers.limits import ParseLimits
from tests.parsers.fixtures import (big_table_docx, document, docx_bytes, eml_bytes, pdf_bytes, pptx_bytes,
                                    realdocs_dir, rezip, shared_string_xlsx, xlsx_bytes)
from tests.parsers.msgfile import msg_bytes

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORDS = "The quick brown fox jumps over the lazy dog. " * 20
REPORT = docx_bytes([("heading", 1, "Report"), ("p", WORDS), ("li", "one"), ("table", [["a", "b"], ["1", "2"]])])


def _gone(pid: int) -> bool:
    """Whether ``pid`` has exited (a zombie waiting for a reaper has)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@pytest.fixture(scope="module")
def slow():
    """One table of 3,000 rows: python-docx reads it in one call of about 1.7 s."""
    return document("slow.docx", big_table_docx(3_000))


FORMATS = {
    "report.docx": lambda: REPORT,
    "deck.pptx": lambda: pptx_bytes([{"title": "Plan", "body": WORDS, "notes": "say this"},
                                     {"title": "Numbers", "table": [["q", "n"], ["1", "2"]]}]),
    "sheet.xlsx": lambda: xlsx_bytes({"data": [["name", "n"], ["ada", 36], ["alan", 41]], "more": [["x"], ["y"]]}),
    "paper.pdf": lambda: pdf_bytes([WORDS, WORDS], sections=[(0, 1, "Intro"), (1, 1, "More")]),
    "message.eml": lambda: eml_bytes(attachments=[("report.docx", REPORT, "application/vnd.openxmlformats-"
                                                   "officedocument.wordprocessingml.document")]),
    "message.msg": lambda: msg_bytes(body="Hello,\r\nthe plan.\r\n", attachments=[("notes.txt", b"notes", "text/plain")]),
}


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_the_child_parses_each_isolated_format_as_this_process_does(name):
    doc = document(name, FORMATS[name]())
    assert watchdog.isolates(doc.content_type)
    assert parse(doc) == parse_in_process(doc)
    assert watchdog.child_pids()


@pytest.mark.skipif(realdocs_dir() is None, reason="../shared/realdocs is absent (not part of a user checkout)")
def test_the_child_parses_a_real_book_as_this_process_does():
    doc = document("debian-reference.en.pdf", (realdocs_dir() / "debian-reference.en.pdf").read_bytes())
    assert parse(doc, ocr="never") == parse_in_process(doc, ocr="never")  # OCR of the cover: 20 s each


def test_keep_decode_errors_and_limits_reach_the_child():
    header = pdf_bytes([WORDS] * 4, header="Annual report {n}")
    doc = document("paper.pdf", header)
    kept = parse(doc, keep={"page_furniture"})
    assert kept == parse_in_process(doc, keep={"page_furniture"}) and kept != parse(doc)
    deck = document("deck.pptx", pptx_bytes([{"title": "Long", "body": "word " * 400}]))
    errors = []
    for run in (parse, parse_in_process):
        with pytest.raises(LimitExceeded) as info:
            run(deck, limits=ParseLimits(max_page_chars=1000))
        errors.append(info.value)
    assert type(errors[0]) is type(errors[1]) and str(errors[0]) == str(errors[1])
    assert vars(errors[0]) == vars(errors[1]) == {"limit": "max_page_chars", "document_id": "doc", "uri": "deck.pptx"}


def test_a_parse_error_in_the_child_comes_back_whole():
    doc = document("broken.docx", b"PK\x03\x04 not really a zip")
    errors = []
    for run in (parse, parse_in_process):
        with pytest.raises(ParseError) as info:
            run(doc)
        errors.append(info.value)
    assert type(errors[0]) is type(errors[1]) is ParseError
    assert (str(errors[0]), vars(errors[0])) == (str(errors[1]), vars(errors[1]))


def test_the_child_imports_from_this_process_s_path(tmp_path, monkeypatch):
    """A module on this process's sys.path shadows python-docx in the child: its error names the extra."""
    (tmp_path / "docx.py").write_text("raise ImportError('hidden by the test')\n")
    watchdog.shutdown()  # a new child: the running one has python-docx imported
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        with pytest.raises(MissingExtra, match=r'^python-docx is not installed; .*beam-chunking\[parsers\]'):
            parse(document("report.docx", REPORT))
    finally:
        watchdog.shutdown()


def test_warnings_in_the_child_are_warned_here():
    data = shared_string_xlsx(rows=3, string_chars=10)
    book = zipfile.ZipFile(io.BytesIO(data)).read("xl/workbook.xml").decode()
    lost = '<definedNames><definedName name="lost" localSheetId="5">data!$A$1</definedName></definedNames>'
    doc = document("names.xlsx", rezip(data, {"xl/workbook.xml": book.replace("</sheets>", "</sheets>" + lost).encode()}))
    seen = []
    for run in (parse, parse_in_process):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            run(doc)
        seen.append([(str(w.message), w.category, w.filename, w.lineno) for w in caught])
    assert seen[0] == seen[1] and "Defined names for sheet index 5 cannot be located" in seen[0][0][0]


def test_a_library_call_over_the_budget_is_stopped_and_the_next_document_parses(slow):
    good = document("report.docx", REPORT)
    parse(good)
    before = watchdog.child_pids()
    limits = ParseLimits(max_parse_seconds=0.2)  # the table is reached in 0.1 s, read in 1.7
    started = time.monotonic()
    with pytest.raises(LimitExceeded) as info:
        parse(slow, limits=limits)
    stopped = time.monotonic() - started
    assert info.value.limit == "max_parse_seconds" and info.value.uri == "slow.docx"
    assert str(info.value).startswith("slow.docx: parsing was stopped after 0.")
    assert "over limits.max_parse_seconds=0.2;" in str(info.value)
    assert 0.2 + watchdog.GRACE_SECONDS <= stopped < 0.2 + watchdog.GRACE_SECONDS + 0.4
    assert not set(before) & set(watchdog.child_pids())  # that child was killed
    assert parse(good) == parse_in_process(good)


def test_a_child_killed_in_mid_parse_fails_only_its_document(slow):
    good = document("report.docx", REPORT)
    parse(good)
    [pid] = watchdog.child_pids()
    killer = threading.Timer(0.2, os.kill, (pid, signal.SIGKILL))
    killer.start()
    with pytest.raises(ParseError) as info:
        parse(slow)
    killer.join()
    assert type(info.value) is ParseError and info.value.uri == "slow.docx"
    assert "the parser's process died while parsing it (killed by signal 9, SIGKILL" in str(info.value)
    assert parse(good) == parse_in_process(good)
    assert pid not in watchdog.child_pids()


def test_threads_that_parse_at_once_each_get_a_child():
    docs = [document(f"part{k}.docx", big_table_docx(100, seed=k)) for k in range(2)]
    barrier = threading.Barrier(2)
    results = {}

    def work(doc):
        barrier.wait()
        results[doc.uri] = parse(doc)

    threads = [threading.Thread(target=work, args=(doc,)) for doc in docs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(results[doc.uri] == parse_in_process(doc) for doc in docs)
    assert len(watchdog.child_pids()) >= 2


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_a_fork_starts_its_own_child_and_leaves_the_parent_s_alone():
    doc = document("report.docx", REPORT)
    parse(doc)
    before = watchdog.child_pids()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the fork: report, then leave without running pytest's exit handlers
        try:
            ok = parse(doc) == parse_in_process(doc) and not set(watchdog.child_pids()) & set(before)
            os.write(write, b"ok" if ok else b"no")
        finally:
            os._exit(0)
    os.close(write)
    answer = os.read(read, 2)
    os.close(read)
    os.waitpid(pid, 0)
    assert answer == b"ok"
    assert parse(doc) == parse_in_process(doc) and watchdog.child_pids() == before


def test_a_document_pickle_refuses_is_parsed_here():
    doc = dataclasses.replace(document("report.docx", REPORT), metadata={"lock": threading.Lock()})
    assert parse(doc) == parse_in_process(doc)


def test_without_the_watchdog_no_child_is_started():
    watchdog.shutdown()
    doc = document("report.docx", REPORT)
    assert parse(doc, limits=ParseLimits(watchdog=False)) == parse_in_process(doc)
    assert watchdog.child_pids() == []
    assert not watchdog.isolates("text/html") and not watchdog.isolates("text/plain")


def _script(tmp_path, body: str) -> subprocess.Popen:
    """Run a script that starts a child, prints its pid, then runs ``body``; the script's
    top level notes each run in ``runs.txt`` (the child must never import it)."""
    code = textwrap.dedent(f"""\
        import sys
        sys.path.insert(0, {ROOT!r})
        with open({str(tmp_path / "runs.txt")!r}, "a") as runs:
            runs.write("ran\\n")
        from beam_chunking.parsers import parse, watchdog
        from tests.parsers.fixtures import big_table_docx, document, docx_bytes
        parse(document("a.docx", docx_bytes([("p", "words")])))
        print(watchdog.child_pids()[0], flush=True)
    """) + textwrap.dedent(body)
    script = tmp_path / "job.py"
    script.write_text(code)
    return subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, cwd=ROOT)


def test_the_child_ends_with_its_parent_and_never_runs_its_main(tmp_path):
    process = _script(tmp_path, "")  # parses one document and exits
    pid = int(process.stdout.readline())
    assert process.wait(timeout=30) == 0
    assert _gone(pid)
    assert (tmp_path / "runs.txt").read_text() == "ran\n"


def test_a_child_in_mid_parse_ends_when_its_parent_is_killed(tmp_path):
    """No exit handler runs: the child sees its request pipe close, even inside a 3 s call."""
    process = _script(tmp_path, """
        slow = document("slow.docx", big_table_docx(6_000))
        print("parsing", flush=True)
        parse(slow)
    """)
    pid = int(process.stdout.readline())
    assert process.stdout.readline() == "parsing\n"
    time.sleep(0.3)
    process.kill()
    process.wait()
    deadline = time.monotonic() + 1.5
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _gone(pid)
