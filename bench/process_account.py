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

HERE = os.path.dirname(os.path.abspath(__file__))
if os.path.dirname(HERE) not in sys.path:
    sys.path.insert(0, os.path.dirname(HERE))

from bench.scale import RssSampler, mp_args  # noqa: E402

Trace = List[Tuple[float, float]]
#: Seconds between two samples of every process.
SAMPLE_S = 0.1


def role(cmdline: str, is_runner: bool) -> str:
    """``runner``, ``worker``, ``shell`` (what starts a worker), ``watchdog`` or the name."""
    if is_runner:
        return "runner"
    if "sdk_worker_main" in cmdline:
        return "worker" if cmdline.startswith("python") else "shell"
    if "_watchdog_child" in cmdline:
        return "watchdog"
    return cmdline.split(" ", 1)[0]


def account(pattern: str, workers: int, out: str) -> Tuple[float, RssSampler, int]:
    """Run the job once in its own process, sampled; its wall time, the sampler and the
    runner's pid. The runner is not this process, so the sampling costs it nothing."""
    command = [sys.executable, "-m", "beam_chunking.pipelines.cli", "run", "--input", pattern, "--output", out,
               "--overwrite", "--max-deletions", "100%", "--strategy", "sentence", *mp_args(workers)]
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    sampler = RssSampler(interval=SAMPLE_S, root=child.pid)
    sampler.start()
    _, err = child.communicate()
    wall = time.perf_counter() - start
    sampler.stop()
    if child.returncode:
        raise SystemExit(f"the job failed ({child.returncode}): {err.decode()[-2000:]}")
    return wall, sampler, child.pid


def when(trace: Trace, fraction: float) -> float:
    """When a process had used ``fraction`` of its CPU time."""
    return next(t for t, cpu in trace if cpu >= fraction * trace[-1][1])


def cpu_between(trace: Trace, a: float, b: float) -> float:
    """The CPU seconds a process used between ``a`` and ``b`` seconds into the run."""
    def at(t):
        return max([cpu for s, cpu in trace if s <= t] or [0.0])
    return at(b) - at(a)


def report(workers: int, wall: float, sampler: RssSampler, runner: int) -> None:
    """Print one run's account."""
    print(f"\n{workers} worker(s): {wall:.1f} s wall, {sum(sampler.cpu.values()):.1f} CPU-s in all processes")
    roles = {pid: role(sampler.cmdline.get(pid, "?"), pid == runner) for pid in sampler.trace}
    by_role: Dict[str, float] = {}
    for pid, trace in sorted(sampler.trace.items(), key=lambda item: (roles[item[0]], item[1][0][0])):
        by_role[roles[pid]] = by_role.get(roles[pid], 0.0) + trace[-1][1]
        if trace[-1][1] < 0.02:
            continue  # the shell that starts a worker, and other idle wrappers
        print(f"  {roles[pid]:9s} {trace[-1][1]:6.2f} CPU-s, alive {trace[0][0]:5.1f}-{trace[-1][0]:5.1f} s, "
              f"5% of its work by {when(trace, 0.05):5.1f} s, 95% by {when(trace, 0.95):5.1f} s")
    print("  by role: " + ", ".join(f"{r} {c:.1f} CPU-s" for r, c in sorted(by_role.items()) if c >= 0.02))
    trace = sampler.trace[runner]
    print(f"  runner: {cpu_between(trace, 0, 2):.2f} CPU-s in the first 2 s, "
          f"{cpu_between(trace, 2, wall - 4):.2f} until the last 4 s, {cpu_between(trace, wall - 4, wall):.2f} in them")


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
