"""Parse time of the same files in this tree and in a baseline tree, interleaved, best of N.

    python bench/tree_parse.py --baseline-tree /tmp/main-before --input '/usr/share/doc/**/*.html' [--rounds 7]

What a parser change costs, on files it was not written against: every file the ``--input``
patterns match (local globs, ``**`` included) is read once (a ``.gz`` unpacked, as the
pipeline's read step does), its content type detected by this tree, and grouped by type and
by size (under 16 KB, 16-256 KB, 256 KB and over, unpacked); each tree detects the type
again with its own code, so a file whose type changed is parsed as each tree would. Each tree runs in a
process of its own (``PYTHONPATH`` set to the tree; the same interpreter), which parses the
group's files in-process (``parse_in_process``: no watchdog child) once to warm up, then once
per round when asked. The rounds alternate the trees (this tree, baseline, this tree ...), so
a slow spell of the machine hits both. Reported per group: each tree's best seconds, the ratio
of the bests (baseline / this tree: below 1 means this tree is slower) and the min-max of the
per-round ratios. Files that either tree fails to parse are left out of both (a failure
costs no parsing), and counted.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

SIZE_BINS = ((16 * 1024, "< 16 KB"), (256 * 1024, "16-256 KB"), (float("inf"), ">= 256 KB"))

# The worker: given the groups (JSON, first line), reads "GROUP" lines, parses that group's
# files once and prints the seconds.
_WORKER = r"""
import json, sys, time
from beam_chunking.parsers.compressed import gunzip, is_gzip
from beam_chunking.parsers.detect import detect_content_type
from beam_chunking.parsers.dispatch import parse_in_process
from beam_chunking.types import Document
def load(path):
    # As the pipeline's read step does, with this tree's own code: .gz unpacked, type detected.
    uri, data = path, open(path, "rb").read()
    if is_gzip(data):
        uri, data = gunzip(uri, data, 1 << 30)
    return Document(path, uri, data, detect_content_type(uri, data))
groups = json.loads(sys.stdin.readline())
docs = {g: [load(f[0]) for f in files] for g, files in groups.items()}
failed = []
for g in docs:  # warm-up (imports, lazy tables), and the files this tree fails on
    for d in docs[g]:
        try:
            parse_in_process(d)
        except Exception:
            failed.append(d.id)
print(json.dumps(failed), flush=True)
left_out = set(json.loads(sys.stdin.readline()))  # what either tree fails on
docs = {g: [d for d in ds if d.id not in left_out] for g, ds in docs.items()}
def one(g):
    started = time.perf_counter()
    for d in docs[g]:
        parse_in_process(d)
    return time.perf_counter() - started
for line in sys.stdin:
    print(one(line.strip()), flush=True)
"""


def groups_of(patterns):
    """``{group: [[path, content type, unpacked bytes], ...]}`` for the files the patterns match."""
    sys.path.insert(0, ROOT)
    from beam_chunking.parsers.compressed import gunzip, is_gzip
    from beam_chunking.parsers.detect import detect_content_type

    paths = sorted({p for pat in patterns for p in glob.glob(pat, recursive=True) if os.path.isfile(p)})
    out = {}
    for path in paths:
        with open(path, "rb") as f:
            uri, data = path, f.read()
        if is_gzip(data):
            uri, data = gunzip(uri, data, 1 << 30)
        ctype = detect_content_type(uri, data)
        size = next(label for limit, label in SIZE_BINS if len(data) < limit)
        out.setdefault(f"{ctype}, {size}", []).append([path, ctype, len(data)])
    return dict(sorted(out.items()))


def worker(tree, groups):
    proc = subprocess.Popen([sys.executable, "-c", _WORKER], cwd="/", env=dict(os.environ, PYTHONPATH=tree),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    proc.stdin.write(json.dumps(groups) + "\n")
    proc.stdin.flush()
    return proc


def failed(proc) -> set:
    """The paths the worker's tree failed to parse (its warm-up's answer)."""
    line = proc.stdout.readline()
    if not line:
        raise RuntimeError("a worker did not start")
    return set(json.loads(line))


def timed(proc, group):
    proc.stdin.write(group + "\n")
    proc.stdin.flush()
    return float(proc.stdout.readline())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline-tree", required=True, help="a checkout to compare against (git worktree add ...)")
    ap.add_argument("--input", action="append", required=True, help="files to parse (glob, ** allowed); repeatable")
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    groups = groups_of(args.input)
    trees = {"this tree": ROOT, "baseline": os.path.abspath(args.baseline_tree)}
    procs = {label: worker(tree, groups) for label, tree in trees.items()}
    left_out = set().union(*(failed(proc) for proc in procs.values()))
    for proc in procs.values():
        proc.stdin.write(json.dumps(sorted(left_out)) + "\n")
        proc.stdin.flush()
    groups = {g: [f for f in files if f[0] not in left_out] for g, files in groups.items()}
    groups = {g: files for g, files in groups.items() if files}
    times = {(label, g): [] for label in trees for g in groups}
    for _ in range(args.rounds):
        for g in groups:
            for label, proc in procs.items():
                times[(label, g)].append(timed(proc, g))
    for proc in procs.values():
        proc.stdin.close()
        proc.wait()
    print(f"`python bench/tree_parse.py --baseline-tree {args.baseline_tree} "
          + " ".join(f"--input '{p}'" for p in args.input) + f" --rounds {args.rounds}`\n")
    if left_out:
        print(f"Left out, failing in one tree or both: {len(left_out)} files, e.g. {sorted(left_out)[0]}\n")
    print("| group | files | MB | this tree: best s | baseline: best s | baseline / this tree [per-round range] |")
    print("|---|---:|---:|---:|---:|---:|")
    for g, files in groups.items():
        mine, base = times[("this tree", g)], times[("baseline", g)]
        per_round = sorted(b / m for m, b in zip(mine, base))
        mb = sum(f[2] for f in files) / 1e6
        print(f"| {g} | {len(files)} | {mb:.2f} | {min(mine):.3f} | {min(base):.3f} | "
              f"{min(base) / min(mine):.2f}x [{per_round[0]:.2f}-{per_round[-1]:.2f}] |")


if __name__ == "__main__":
    main()
