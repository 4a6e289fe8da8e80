"""Incremental re-runs against a full run of the same corpus, measured in one process.

    python bench/corpus.py && python bench/incremental.py [--embed-files 200] [--reps 5] [--embed-reps 1]

Corpus: ``bench/corpus/docs`` (20 MB, about 2,000 files), copied to a temporary folder so
that files can be edited. Runner: the in-process one (FnApiRunner), strategy ``recursive``
(512/50 characters), token counts with ``cl100k_base``, as ``beam-chunking run`` does by
default. Each time is the wall time of :func:`beam_chunking.pipelines.run.run` (options,
pipeline build, run, commit and summary), from a collected heap, after one small warm-up
run. The runs are interleaved: each of ``--reps`` rounds makes a full run (into an output of
its own), then an incremental run with nothing changed, then one with 5% changed. Each
ratio = full run time / incremental run time: the ratio of the bests, with the per-round
range and median.

Scenarios:

1. nothing changed (target >= 10x);
2. 5% of the files changed: one line appended to every 20th file (target >= 5x); each
   repetition edits them again, so every repetition re-chunks them;
3. with embeddings on (target >= 50x): the same two on the first ``--embed-files`` files
   (default 100, about 1 MB), embedded with the packaged all-MiniLM-L6-v2 int8 (the
   ``minilm`` extra) so the full run stays short; skipped when the extra is missing.
"""
from __future__ import annotations

import argparse
import gc
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

CORPUS = os.path.join(HERE, "corpus", "docs")


def timed_run(argv):
    """``(seconds, summary)`` of one run, started from a collected heap (see bench/interleave.py)."""
    from beam_chunking.pipelines.run import run

    gc.collect()
    start = time.perf_counter()
    summary = run(argv)
    return time.perf_counter() - start, summary


def edit(src, names, every, tag):
    """Append a line to every ``every``-th file; return how many were edited."""
    edited = names[::every]
    for name in edited:
        with open(os.path.join(src, name), "a", encoding="utf-8") as f:
            f.write(f"\nedited by bench/incremental.py, pass {tag}\n")
    return len(edited)


def spread(full, other):
    """``best ratio [per-round low-high, median]`` of full-run times over ``other``'s."""
    rounds = sorted(f / o for f, o in zip(full, other))
    return f"{min(full) / min(other):5.1f}x [{rounds[0]:.1f}-{rounds[-1]:.1f}, median {rounds[len(rounds) // 2]:.1f}]"


def scenario(title, src, folder, reps):
    """``reps`` rounds, each a full run (into an output of its own), a run with nothing
    changed and one with 5% of the files changed; rows of the report."""
    names = sorted(os.listdir(src))
    embed = title.startswith("MiniLM")
    full_spec = write_spec(folder, src, os.path.join(folder, f"full-{len(names)}"), embed)
    spec = write_spec(folder, src, os.path.join(folder, f"incremental-{len(names)}"), embed)
    timed_run(["--config", spec, "--overwrite", "--max-deletions", "100%"])  # the output the incremental runs compare with
    full, same, changed, last = [], [], [], {}
    for k in range(reps):
        took, last["full"] = timed_run(["--config", full_spec, "--overwrite", "--max-deletions", "100%"])
        full.append(took)
        took, last["same"] = timed_run(["--config", spec, "--incremental"])
        assert last["same"].changes["unchanged"] == last["same"].documents, last["same"].changes
        same.append(took)
        n = edit(src, names, 20, k)  # every round edits them again, so every round re-chunks them
        took, last["changed"] = timed_run(["--config", spec, "--incremental"])
        assert last["changed"].changes["changed"] == n, last["changed"].changes
        changed.append(took)
    return [(f"{title}: full run", full, last["full"], ""),
            (f"{title}: nothing changed", same, last["same"], spread(full, same)),
            (f"{title}: 5% changed ({n} files)", changed, last["changed"], spread(full, changed))]


def write_spec(folder, src, out, embed):
    path = os.path.join(folder, f"spec-{os.path.basename(out)}.yaml")
    with open(path, "w") as f:
        f.write(f"input: '{src}/*'\noutput: '{out}'\n" + ("embed: minilm\n" if embed else ""))
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=5, help="rounds of the 20 MB scenario (default 5)")
    ap.add_argument("--embed-reps", type=int, default=1,
                    help="rounds of the embedding scenario (default 1: its full run takes minutes)")
    ap.add_argument("--embed-files", type=int, default=100,
                    help="files of the embedding scenario (default 100); 0 skips it")
    args = ap.parse_args()
    if not os.path.isdir(CORPUS):
        sys.exit("bench/corpus/docs is missing: run python bench/corpus.py first")
    from beam_chunking.pipelines.run import run

    work = tempfile.mkdtemp(prefix="bench-incremental-")
    try:
        src = os.path.join(work, "docs")
        shutil.copytree(CORPUS, src)
        warm = os.path.join(work, "warm")
        os.makedirs(warm)
        for name in sorted(os.listdir(src))[:3]:
            shutil.copy(os.path.join(src, name), warm)
        run(["--input", f"{warm}/*", "--output", os.path.join(work, "warm-out")])
        mb = sum(os.path.getsize(os.path.join(src, n)) for n in os.listdir(src)) / 1e6
        rows = scenario(f"{mb:.0f} MB, {len(os.listdir(src))} files", src, work, args.reps)
        if args.embed_files:
            try:
                from beam_chunking.embeddings.minilm import minilm_paths

                minilm_paths()
            except Exception as exc:  # the extra is missing
                print(f"embedding scenario skipped: {exc}")
            else:
                small = os.path.join(work, "small")
                os.makedirs(small)
                for name in sorted(os.listdir(CORPUS))[:args.embed_files]:
                    shutil.copy(os.path.join(CORPUS, name), small)
                rows += scenario(f"MiniLM, {args.embed_files} files", small, work, args.embed_reps)
        print(f"{'scenario':40s} {'best s [range]':>18s} {'chunks':>7s} {'ratio of bests [per round]':>32s}  changes")
        for title, times, summary, ratio in rows:
            counts = ", ".join(f"{summary.changes[c]} {c}" for c in ("new", "changed", "unchanged", "deleted"))
            took = f"{min(times):.2f} [{min(times):.2f}-{max(times):.2f}]"
            print(f"{title:40s} {took:>18s} {summary.chunks:7d} {ratio:>32s}  {counts}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
