"""Incremental re-runs against a full run of the same corpus, measured in one process.

    python bench/corpus.py && python bench/incremental.py [--embed-files 200] [--reps 3]

Corpus: ``bench/corpus/docs`` (20 MB, about 2,000 files), copied to a temporary folder so
that files can be edited. Runner: the in-process one (FnApiRunner), strategy ``recursive``
(512/50 characters), token counts with ``cl100k_base``, as ``beam-chunking run`` does by
default. Each time is the wall time of :func:`beam_chunking.pipelines.run.run` (options,
pipeline build, run, commit and summary), after one small warm-up run; the best of
``--reps`` (a full run: the best of 2).

Scenarios, each ratio = full run time / incremental run time, measured in this run:

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


def timed_run(argv, reps):
    from beam_chunking.pipelines.run import run

    best, summary = None, None
    for _ in range(reps):
        summary = None  # the previous run's summary is garbage before the collection
        gc.collect()  # each timing starts from a collected heap (see bench/interleave.py)
        start = time.perf_counter()
        summary = run(argv)
        took = time.perf_counter() - start
        best = took if best is None else min(best, took)
    return best, summary


def edit(src, names, every, tag):
    """Append a line to every ``every``-th file; return how many were edited."""
    edited = names[::every]
    for name in edited:
        with open(os.path.join(src, name), "a", encoding="utf-8") as f:
            f.write(f"\nedited by bench/incremental.py, pass {tag}\n")
    return len(edited)


def scenario(title, src, out, spec, reps, full_reps):
    """Full run, then nothing changed, then 5% changed; rows of the report."""
    names = sorted(os.listdir(src))
    base = ["--config", spec]
    full, summary = timed_run(base + ["--overwrite"], full_reps)
    rows = [(f"{title}: full run", full, summary, None)]
    same, summary = timed_run(base + ["--incremental"], reps)
    assert summary.changes["unchanged"] == summary.documents, summary.changes
    rows.append((f"{title}: nothing changed", same, summary, full / same))
    best, summary = None, None
    for k in range(reps):
        n = edit(src, names, 20, k)
        took, summary = timed_run(base + ["--incremental"], 1)
        assert summary.changes["changed"] == n, summary.changes
        best = took if best is None else min(best, took)
    rows.append((f"{title}: 5% changed ({n} files)", best, summary, full / best))
    return rows


def write_spec(folder, src, out, embed):
    path = os.path.join(folder, f"spec-{os.path.basename(out)}.yaml")
    with open(path, "w") as f:
        f.write(f"input: '{src}/*'\noutput: '{out}'\n" + ("embed: minilm\n" if embed else ""))
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3, help="repetitions of each incremental run (default 3)")
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
        rows = scenario(f"{mb:.0f} MB, {len(os.listdir(src))} files", src, os.path.join(work, "out"),
                        write_spec(work, src, os.path.join(work, "out"), False), args.reps, 2)
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
                out = os.path.join(work, "out-embed")
                rows += scenario(f"MiniLM, {args.embed_files} files", small, out,
                                 write_spec(work, small, out, True), args.reps, 1)
        print(f"{'scenario':44s} {'seconds':>8s} {'chunks':>7s} {'ratio':>7s}  changes")
        for title, seconds, summary, ratio in rows:
            counts = ", ".join(f"{summary.changes[c]} {c}" for c in ("new", "changed", "unchanged", "deleted"))
            print(f"{title:44s} {seconds:8.2f} {summary.chunks:7d} {'' if ratio is None else f'{ratio:6.1f}x':>7s}"
                  f"  {counts}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
