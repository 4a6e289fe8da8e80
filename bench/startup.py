"""Start-up of ``beam-chunking run`` on one small file, in fresh processes (issue 15's row).

Used by ``python bench/throughput.py --only startup [--baseline-tree DIR]``. Each round starts
fresh interpreters (``PYTHONPATH`` and the working directory set to the tree measured) for:

- ``python -c pass``: the interpreter alone;
- ``import apache_beam`` (a floor for any job that runs on Beam), ``import beam_chunking``
  and ``import beam_chunking.pipelines.cli``: seconds inside the process, around the import
  statement;
- the CLI's one-file job, as the ``beam-chunking`` console script runs it
  (``console_main()``): the wall time from just before the process is started to its exit;
  the time to the moment it first opens the input file; and the time to the first document,
  the moment it first opens a file of the chunks table for writing, which no job can do before
  it has chunked a document (an audit hook on ``open`` reports both; nothing in the package
  is patched).

Each tree's package is byte-compiled first, as a user's first run would leave it (this
matters where ``PYTHONDONTWRITEBYTECODE`` is set: every module would be compiled again in
every process).

With ``--baseline-tree`` (a checkout of the code to compare against, e.g. ``git worktree add
/tmp/main-before <commit>``) the same measurements run on it, interleaved with this tree's;
``--baseline-python`` runs them with the baseline's own install (its README command in a
virtual environment of its own), for a baseline whose dependencies differ from this tree's.
One extra run with ``-X importtime`` breaks the CLI job's imports down by top-level package.
"""
from __future__ import annotations

import collections
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

from bench.interleave import Ratio

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_TIMED_IMPORT = "import time; t = time.perf_counter(); import {0}; print(time.perf_counter() - t)"
# Runs the console script's entry point with an audit hook that reports, once each, when the
# input file is first opened, and when a file of the chunks table is first opened for writing
# (the document has been chunked by then, whatever the code before it does).
_CLI = r"""
import os, sys, time
_input, _chunks, _seen = sys.argv[1], os.path.join(sys.argv[2], "chunks", ""), set()
def _hook(event, args):
    if event != "open" or not args or not isinstance(args[0], str):
        return
    if "read" not in _seen and args[0] == _input:
        _seen.add("read")
        os.write(2, b"@@read %.6f\n" % time.time())
    elif "write" not in _seen and args[0].startswith(_chunks) and (
            set(args[1] or "") & set("wax") or (args[2] or 0) & (os.O_WRONLY | os.O_RDWR)):
        _seen.add("write")
        os.write(2, b"@@write %.6f\n" % time.time())
sys.addaudithook(_hook)
sys.argv = ["beam-chunking", "run", "--input", _input, "--output", sys.argv[2], "--overwrite", "--max-deletions", "100%"]
from beam_chunking.pipelines.cli import console_main
console_main()
"""
MEASURES = ("python -c pass", "import apache_beam", "import beam_chunking", "import beam_chunking.pipelines.cli",
            "CLI one-file run: to the input file's first open", "CLI one-file run: to the first chunks written",
            "CLI one-file run: whole process")
READ, FIRST, WHOLE = MEASURES[4:]
_MODULES = ("apache_beam", "beam_chunking", "beam_chunking.pipelines.cli")


def _env(tree):
    return dict(os.environ, PYTHONPATH=tree)


def _python(tree, *args, python=None):
    done = subprocess.run([python or sys.executable, *args], cwd=tree, env=_env(tree), capture_output=True, text=True,
                          timeout=300)
    if done.returncode:
        raise RuntimeError(f"{' '.join(args)[:80]} in {tree} exited {done.returncode}: {done.stderr[-600:]}")
    return done


def one_round(tree, path, out, python=None):
    """``{measure: seconds}`` for one fresh start of each measure in ``tree``, run by the
    interpreter ``python`` (default: this one)."""
    got = {}
    started = time.perf_counter()
    _python(tree, "-c", "pass", python=python)
    got[MEASURES[0]] = time.perf_counter() - started
    for name, module in zip(MEASURES[1:4], _MODULES):
        got[name] = float(_python(tree, "-c", _TIMED_IMPORT.format(module), python=python).stdout.split()[-1])
    wall0 = time.time()
    started = time.perf_counter()
    done = _python(tree, "-c", _CLI, path, out, python=python)
    got[WHOLE] = time.perf_counter() - started
    for name, marker in ((READ, "read"), (FIRST, "write")):
        seen = re.search(rf"@@{marker} ([0-9.]+)", done.stderr)
        if seen:
            got[name] = float(seen.group(1)) - wall0
    return got


def import_breakdown(tree, path, out, top: int = 10):
    """Markdown lines: the CLI job's import time by top-level package (``-X importtime``, self time)."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", _CLI, path, out], cwd=tree, env=_env(tree),
                          capture_output=True, text=True, timeout=300)
    per = collections.Counter()
    for line in done.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+\d+ \|\s*(\S+)", line)
        if m:
            per[m.group(2).split(".")[0]] += int(m.group(1))
    total = sum(per.values())
    lines = [f"CLI job's imports by top-level package (`-X importtime`, self time summed; {total / 1e6:.2f} s "
             "in all, inflated by the tracing):", "", "| package | s | share |", "|---|---:|---:|"]
    for name, us in per.most_common(top):
        lines.append(f"| {name} | {us / 1e6:.3f} | {100 * us / max(total, 1):.0f}% |")
    return "\n".join(lines) + "\n"


def _plain_prose(path: str) -> bool:
    """A 2-4 KiB ``.txt`` that does not open like a mail (a mail would add the mail parser's imports)."""
    name = os.path.basename(path)
    with open(path, encoding="utf-8") as f:
        head = f.readline()
    return name.startswith("01-prose") and name.endswith(".txt") and not re.match(r"[\w-]+: ", head)


def startup_row(corpus, rounds: int, baseline=None, baseline_python=None):
    """The table and the target result of the start-up row.

    ``baseline_python``: the interpreter of the baseline's own install (a virtual environment
    made by that tree's README command), for a baseline whose dependencies differ; default
    this interpreter.
    """
    path = next(p for p in corpus.paths("small") if _plain_prose(p))
    trees = {"this tree": ROOT}
    pythons = {"this tree": None, "baseline": baseline_python}
    if baseline:
        trees["baseline"] = os.path.abspath(baseline)
    for label, tree in trees.items():
        where = _python(tree, "-c", "import beam_chunking; print(beam_chunking.__file__)",
                        python=pythons[label]).stdout.strip()
        if not where.startswith(tree):
            raise RuntimeError(f"{label}: beam_chunking is imported from {where}, not from {tree}")
        # A user's first run writes the package's bytecode; where PYTHONDONTWRITEBYTECODE is set
        # (as on some CI machines) a tree without it would compile every module in every round.
        _python(tree, "-m", "compileall", "-q", os.path.join(tree, "beam_chunking"), python=pythons[label])
    times = {(t, m): [] for t in trees for m in MEASURES}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(rounds + 1):  # the first round warms the page cache and is not counted
            for label, tree in trees.items():
                out = os.path.join(tmp, label.replace(" ", "-"))
                for name, seconds in one_round(tree, path, out, python=pythons[label]).items():
                    times[(label, name)].append(seconds)
        breakdown = import_breakdown(ROOT, path, os.path.join(tmp, "importtime"))
    size = os.path.getsize(path)
    head = "| measure | this tree: best s [range] |" + (" baseline: best s [range] | this / baseline |"
                                                       if baseline else "")
    lines = [f"#### Start-up: fresh processes, one {size / 1000:.1f} KB file ({os.path.basename(path)})", "",
             f"best of {rounds} rounds after one uncounted round" + (", interleaved with the baseline" if baseline
                                                                   else ""), "", head,
             "|---|---:|" + ("---:|---:|" if baseline else "")]
    for name in MEASURES:
        cells = []
        for label in trees:
            ts = times[(label, name)][1:]
            cells.append(f"{min(ts):.3f} [{min(ts):.2f}-{max(ts):.2f}]" if ts else "not observed")
        if baseline and times[("this tree", name)][1:] and times[("baseline", name)][1:]:
            mine, base = times[("this tree", name)][1:], times[("baseline", name)][1:]
            cells.append(f"{100 * min(mine) / min(base):.0f}%")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n\n" + breakdown
    first = times[("this tree", FIRST)][1:]
    if baseline and first and times[("baseline", FIRST)][1:]:
        base = times[("baseline", FIRST)][1:]
        per_round = [b / m for b, m in zip(base, first)]
        measured = Ratio(min(base) / min(first), min(per_round), max(per_round), statistics.median(per_round))
        return [text], [("CLI start-up to the first document (baseline / this tree)", "<= 50% of today's: >= 2x",
                         measured, measured.best >= 2.0)]
    note = f"{min(first):.2f} s, no --baseline-tree given" if first else "not observed"
    return [text], [("CLI start-up to the first document", "<= 50% of today's", note, None)]
