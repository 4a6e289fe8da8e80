"""Hostile documents under a memory limit: each must finish, fail only itself, stay under it.

    python bench/hostile.py                      # every fixture, 2 GiB, texts of 50 and 200 MB
    python bench/hostile.py --text-mb 20         # one smaller text without whitespace
    python bench/hostile.py --tree ../other      # run another checkout's code (a before/after)
    python bench/hostile.py --only deep.html     # one fixture

The fixtures of issue 16's medium section, generated here (``tests/parsers/fixtures.py``):

- ``shared.pdf``: 400 pages that draw one content stream (65 KB, 176,000 characters a page);
- ``shared.xlsx``: 40,000 rows that reference one 32,000-character shared string (207 KB);
- ``wide.csv``: 1,000,000 columns, a header and one row (8.9 MB);
- ``styles.docx``: 5,000 paragraph styles, 5,000 paragraphs (95 KB);
- ``deep.html``: 100,000 nested ``<ul><li>`` (2.2 MB);
- ``genome-<N>mb.txt``: ``--text-mb`` MB of A, C, G, T without a space or newline (one
  fixture per size given).

Each one is put in its own input folder beside five good documents (text, Markdown, HTML,
PDF, DOCX) and ``beam-chunking run`` (default strategy and runner, ``--max-failures 1``) runs
on the folder in a child process held to ``--limit-gib`` of resident memory the way a
container's memory limit holds it: its RSS is sampled every 20 ms and the child is killed as
soon as it passes the limit. (An address-space limit, ``RLIMIT_AS``, measures something else:
the CLI reserves about 2 GiB of virtual memory on a 5-document run whose RSS peaks at 0.3 GiB,
so a 2 GiB ``prlimit --as`` fails good documents with ``MemoryError``.) Wall time is capped by
``--timeout``. The table gives the child's peak RSS (``wait4`` rusage), its wall time, what
became of the fixture, and whether the run passed:
it exited by itself, under the limit, with every good document ``ok`` and the fixture
either ``ok`` or failed with its own row naming the cap that stopped it (``limits.<name>``).
A fixture that failed alone but not on a cap is reported as ``alone, no cap``.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

GIB = 1024 ** 3


def fixtures(text_mb):
    """Name -> a function that makes the fixture's bytes (called on demand: some are large)."""
    from tests.parsers import fixtures as f

    texts = {f"genome-{mb}mb.txt": (lambda mb=mb: f.no_whitespace_text(mb * 1_000_000)) for mb in text_mb}
    return {
        "shared.pdf": lambda: f.shared_stream_pdf(pages=400, lines=4_000),
        "shared.xlsx": lambda: f.shared_string_xlsx(rows=40_000),
        "wide.csv": lambda: f.wide_csv(1_000_000, rows=1),
        "styles.docx": lambda: f.many_styles_docx(5_000, 5_000),
        "deep.html": lambda: f.nested_lists_html(100_000),
        **texts,
    }


def good_documents():
    """Five ordinary documents that every run must chunk."""
    from tests.parsers.fixtures import docx_bytes, pdf_bytes

    words = "The quick brown fox jumps over the lazy dog. " * 40
    return {
        "notes.txt": words.encode(),
        "guide.md": f"# Guide\n\n{words}\n\n## More\n\n{words}".encode(),
        "page.html": f"<html><body><h1>Title</h1><p>{words}</p><ul><li>one</li></ul></body></html>".encode(),
        "paper.pdf": pdf_bytes([words, words]),
        "report.docx": docx_bytes([("heading", 1, "Report"), ("p", words)]),
    }


def _rss(process) -> int:
    """Resident bytes of ``process`` and its children (0 once it is gone)."""
    import psutil

    total = 0
    try:
        for p in [process, *process.children(recursive=True)]:
            total += p.memory_info().rss
    except psutil.Error:
        pass
    return total


def run_one(tree: str, folder: str, out: str, limit: int, timeout: float):
    """Run the CLI on ``folder`` with ``tree``'s code, killed past ``limit`` resident bytes or
    ``timeout`` seconds; return (exit status or why it was killed, peak RSS bytes, seconds, stderr)."""
    import psutil

    env = dict(os.environ, PYTHONPATH=tree)
    command = [sys.executable, "-m", "beam_chunking.pipelines.cli", "run", "--input", f"{folder}/*",
               "--output", out, "--max-failures", "1"]
    started = time.monotonic()
    with tempfile.TemporaryFile() as err:
        child = subprocess.Popen(command, cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=err)
        watched = psutil.Process(child.pid)
        killed = None
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            if killed is None and _rss(watched) > limit:
                killed = "killed at the memory limit"
            elif killed is None and time.monotonic() - started > timeout:
                killed = "killed at the timeout"
            if killed is not None:
                for p in [*watched.children(recursive=True), watched]:
                    p.kill()
                pid, status, usage = os.wait4(child.pid, 0)
                break
            time.sleep(0.02)
        seconds = time.monotonic() - started
        err.seek(0)
        text = err.read().decode(errors="replace")
    return killed or os.waitstatus_to_exitcode(status), usage.ru_maxrss * 1024, seconds, text


def outcome(out: str, name: str, good) -> tuple:
    """(what became of the fixture, whether every good one is ok, whether the fixture is ok
    or failed on a named cap)."""
    from beam_chunking.transforms.manifest import read_table

    try:
        rows = {r["uri"].rsplit("/", 1)[-1]: r for r in read_table(out, "documents").to_pylist()}
    except Exception as exc:  # no committed output
        return f"no output ({type(exc).__name__})", False, False
    row = rows.get(name)
    if row is None:
        return "no row", False, False
    if row["status"] == "failed":
        message = row["error_message"] or ""
        cap = message[message.find("limits."):].split(";")[0] if "limits." in message else message[-80:]
        what = f"failed: {row['error_type']}, {cap}"
    else:
        what = f"{row['status']}, {row['chunk_count']} chunks"
    others = len(rows) == len(good) + 1 and all(rows.get(g, {}).get("status") == "ok" for g in good)
    named = row["status"] != "failed" or "limits." in (row["error_message"] or "")
    return what, others, named


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--text-mb", type=int, action="append",
                        help="size of a text without whitespace (MB; repeat for several; default 50 and 200)")
    parser.add_argument("--limit-gib", type=float, default=2.0, help="resident-memory limit of each run (GiB)")
    parser.add_argument("--timeout", type=float, default=900.0, help="wall-time limit of each run (s)")
    parser.add_argument("--tree", default=ROOT, help="checkout whose code runs (default: this one)")
    parser.add_argument("--only", action="append", help="fixture name(s) to run")
    args = parser.parse_args(argv)
    args.text_mb = args.text_mb or [50, 200]
    limit = int(args.limit_gib * GIB)
    good = good_documents()
    work = tempfile.mkdtemp(prefix="hostile-")
    print(f"code: {os.path.abspath(args.tree)}   limits: {args.limit_gib:g} GiB resident, {args.timeout:g} s")
    print(f"| fixture | size | peak RSS | wall | fixture's row | passed |")
    print("|---|---:|---:|---:|---|---|")
    failures = 0
    try:
        for name, make in fixtures(args.text_mb).items():
            if args.only and name not in args.only:
                continue
            folder = os.path.join(work, name.replace(".", "_"))
            os.makedirs(folder)
            data = make()
            with open(os.path.join(folder, name), "wb") as f:
                f.write(data)
            del data
            for good_name, good_data in good.items():
                with open(os.path.join(folder, good_name), "wb") as f:
                    f.write(good_data)
            out = os.path.join(work, "out-" + name.replace(".", "_"))
            status, peak, seconds, err = run_one(os.path.abspath(args.tree), folder, out, limit, args.timeout)
            what, others_ok, named = outcome(out, name, good)
            alone = status == 0 and peak < limit and others_ok
            passed = "yes" if alone and named else "alone, no cap" if alone else "NO"
            failures += passed != "yes"
            if status != 0:
                what += f" (exit {status}: {err.strip().splitlines()[-1][:100] if err.strip() else ''})"
            size = os.path.getsize(os.path.join(folder, name))
            print(f"| {name} | {size / 1e6:.2f} MB | {peak / 2**20:.0f} MiB | {seconds:.1f} s | {what} | "
                  f"{passed} |", flush=True)
            shutil.rmtree(folder)
            shutil.rmtree(out, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
