"""Recursive chunking of small files, and what the garbage collector costs it.

    python bench/small_files_gc.py [--passes 20]

Runs ``RecursiveChunker(512, 50).chunk`` and semantic-text-splitter's
``TextSplitter(512, overlap=50).chunks`` over the ``small`` group of
``bench/corpus/mixed-sizes`` (``python bench/mixed_corpus.py`` makes it), each output kept until
the next pass as ``bench/throughput.py`` keeps it, interleaved, best of 5 rounds with the
per-round spread, three ways in fresh processes:

- ``light``: only the two chunkers imported;
- ``heavy``: Beam, the pipeline modules, pandas and pyarrow imported first, as in a pipeline
  worker or in ``bench/throughput.py``'s process;
- ``no-gc``: the heavy process with the collector switched off.

Our chunks are Python objects the collector tracks; semantic-text-splitter returns strings,
which it does not. Each full collection walks every tracked object of the process, so the
same chunking runs slower in a larger process.
"""
from __future__ import annotations

import argparse
import gc
import glob
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROUNDS = 5
SMALL = os.path.join(HERE, "corpus", "mixed-sizes", "small")


def child(mode: str, passes: int) -> dict:
    if mode != "light":
        import apache_beam  # noqa: F401
        import pandas  # noqa: F401
        import pyarrow  # noqa: F401

        import beam_chunking.pipelines.run  # noqa: F401
    from semantic_text_splitter import TextSplitter

    from beam_chunking.strategies import RecursiveChunker

    texts = [open(f, encoding="utf-8").read() for f in sorted(glob.glob(os.path.join(SMALL, "*")))]
    mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    if mode == "no-gc":
        gc.disable()
    out = {"tracked objects": len(gc.get_objects()), "MB": round(mb, 2)}
    impls = (("ours", RecursiveChunker(max_chunk_size=512, overlap=50).chunk),
             ("semantic-text-splitter", TextSplitter(512, overlap=50).chunks))
    times = {name: [] for name, _ in impls}
    for _ in range(ROUNDS):  # interleaved rounds
        for name, fn in impls:
            kept = [fn(t) for t in texts]
            gc.collect()  # untimed: the other implementation's garbage is not this one's to collect
            t0 = time.perf_counter()
            for _ in range(passes):
                kept = [fn(t) for t in texts]
            times[name].append((time.perf_counter() - t0) / passes)
            del kept
    for name, secs in times.items():
        out[f"{name} MB/s"] = round(mb / min(secs), 1)
    out["ratio"] = round(min(times["semantic-text-splitter"]) / min(times["ours"]), 2)
    rounds = sorted(t / o for t, o in zip(times["semantic-text-splitter"], times["ours"]))
    out["range"] = f"{rounds[0]:.2f}-{rounds[-1]:.2f}, median {rounds[len(rounds) // 2]:.2f}"
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--passes", type=int, default=20)
    ap.add_argument("--child", choices=("light", "heavy", "no-gc"))
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.passes)))
        return
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(HERE), os.environ.get("PYTHONPATH", "")]))
    print(f"Best of {ROUNDS} interleaved rounds; the ratio of the bests [per-round range, median].\n")
    print("| process | tracked objects | ours MB/s | semantic-text-splitter MB/s | ours / theirs |")
    print("|---|---:|---:|---:|---:|")
    for mode in ("light", "heavy", "no-gc"):
        got = json.loads(subprocess.run([sys.executable, __file__, "--child", mode, "--passes", str(args.passes)],
                                        env=env, capture_output=True, text=True, check=True).stdout)
        print(f"| {mode} | {got['tracked objects']:,} | {got['ours MB/s']} | {got['semantic-text-splitter MB/s']} | "
              f"{got['ratio']:.2f}x [{got['range']}] |")


if __name__ == "__main__":
    main()
