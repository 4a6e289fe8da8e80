"""Where a local-processes run spends its time: each process's CPU and when it worked.

Runs the CLI's job (``--strategy sentence``) with 1 and then 2 local worker processes
(``--direct_running_mode multi_processing``) and samples every process of the run every
100 ms: the runner (the CLI's own process), each SDK worker, and the parser's watchdog
children. For each it prints its CPU time (user + system), when it first and last ran, and
when it had done 5% and 95% of its work; for the runner, its CPU in the first 2 s (imports
and the pipeline's construction, before any worker works), in the middle and in the last
4 s (the commit). This is the account behind the local-processes rows of the Scale table
in ``bench/README.md``: what two workers do beyond one, and what runs on one core only.

Usage::

    python bench/process_account.py --input '/tmp/bench-200mb/docs/*'
    python bench/process_account.py --input '/tmp/bench-200mb/docs/*' --workers 2 --rounds 3

``bench/scale.py --only scaling`` builds ``/tmp/bench-200mb`` on its first run.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Tuple

import psutil

SAMPLE_S = 0.1


def role(proc: psutil.Process, runner_pid: int) -> str:
    """``runner``, ``worker``, ``watchdog`` or the process's name."""
    if proc.pid == runner_pid:
        return "runner"
    line = " ".join(proc.cmdline())
    if "sdk_worker_main" in line:
        return "worker" if not line.startswith("/bin/sh") else "shell"
    if "_watchdog_child" in line:
        return "watchdog"
    return proc.name()


def account(pattern: str, workers: int, out: str) -> Tuple[float, Dict[int, dict], List[Tuple[float, float]]]:
    """Run the job once; its wall time, per process ``{role, first, last, cpu, trace}``
    and the runner's ``(time, cpu)`` trace."""
    command = [sys.executable, "-m", "beam_chunking.pipelines.cli", "run", "--input", pattern, "--output", out,
               "--overwrite", "--max-deletions", "100%", "--strategy", "sentence",
               "--direct_running_mode", "multi_processing", "--direct_num_workers", str(workers)]
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    runner = psutil.Process(child.pid)
    seen: Dict[int, dict] = {}
    while child.poll() is None:
        now = time.perf_counter() - start
        try:
            procs = [runner, *runner.children(recursive=True)]
        except psutil.Error:
            procs = []
        for proc in procs:
            try:
                times = proc.cpu_times()
                entry = seen.setdefault(proc.pid, {"role": role(proc, child.pid), "first": now, "trace": []})
            except psutil.Error:
                continue
            entry["last"] = now
            entry["cpu"] = times.user + times.system
            entry["trace"].append((now, entry["cpu"]))
        time.sleep(SAMPLE_S)
    wall = time.perf_counter() - start
    if child.returncode:
        raise SystemExit(f"the job failed ({child.returncode}): {child.stderr.read().decode()[-2000:]}")
    return wall, seen, seen[child.pid]["trace"]


def when(trace: List[Tuple[float, float]], fraction: float) -> float:
    """When a process had used ``fraction`` of its CPU time."""
    total = trace[-1][1]
    return next(t for t, cpu in trace if cpu >= fraction * total)


def cpu_between(trace: List[Tuple[float, float]], a: float, b: float) -> float:
    """The CPU seconds a process used between ``a`` and ``b`` seconds into the run."""
    def at(t):
        return max([cpu for s, cpu in trace if s <= t] or [0.0])
    return at(b) - at(a)


def report(workers: int, wall: float, seen: Dict[int, dict], runner: List[Tuple[float, float]]) -> None:
    """Print one run's account."""
    total = sum(e.get("cpu", 0.0) for e in seen.values())
    print(f"\n{workers} worker(s): {wall:.1f} s wall, {total:.1f} CPU-s in all processes")
    for entry in sorted(seen.values(), key=lambda e: (e["role"], e["first"])):
        if entry.get("cpu", 0.0) < 0.02:
            continue  # the shell that starts a worker, and other idle wrappers
        trace = entry["trace"]
        print(f"  {entry['role']:9s} {entry['cpu']:6.2f} CPU-s, alive {entry['first']:5.1f}-{entry['last']:5.1f} s, "
              f"5% of its work by {when(trace, 0.05):5.1f} s, 95% by {when(trace, 0.95):5.1f} s")
    by_role: Dict[str, float] = {}
    for entry in seen.values():
        by_role[entry["role"]] = by_role.get(entry["role"], 0.0) + entry.get("cpu", 0.0)
    print("  by role: " + ", ".join(f"{r} {c:.1f} CPU-s" for r, c in sorted(by_role.items()) if c >= 0.02))
    print(f"  runner: {cpu_between(runner, 0, 2):.2f} CPU-s in the first 2 s, "
          f"{cpu_between(runner, 2, wall - 4):.2f} until the last 4 s, {cpu_between(runner, wall - 4, wall):.2f} in them")


def main(argv=None) -> int:
    """Entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", required=True, help="a glob of text files")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="worker counts (default 1 2)")
    parser.add_argument("--rounds", type=int, default=1, help="runs of each worker count, interleaved (default 1)")
    args = parser.parse_args(argv)
    out = tempfile.mkdtemp(prefix="process-account-")
    try:
        for _ in range(args.rounds):
            for workers in args.workers:
                report(workers, *account(args.input, workers, os.path.join(out, "out")))
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
