"""Interleaved timing for ``bench/throughput.py``: A, B, A, B ..., best of N, per-round spread.

Every implementation is warmed up once (lazy tables, tokenizers and models load there), then
called once per round, in turn, for ``rounds`` rounds. A comparison reports each
implementation's best time, the ratio of the bests against the reference, and the min-max of
the per-round ratios (the reference's time in that round over the implementation's), so a
ratio that one lucky round produced shows as a wide spread.

Each timing starts from a collected heap: the implementation's previous output is released
and ``gc.collect()`` runs, untimed. Otherwise one implementation's garbage is collected on
another's clock: the token rows' reference returns lists of millions of ints, which the
collections that the next implementation's own objects trigger walked again and again (20 ms
of a 500 ms call). The collector stays on, so every implementation still pays for
collecting its own objects, as it does in a pipeline.
"""
from __future__ import annotations

import gc
import math
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

#: A timed call shorter than this is repeated (the same number of times for every
#: implementation of the comparison), so timer and scheduler noise stay small against it.
MIN_CALL_SECONDS = 0.5


@dataclass
class Impl:
    """One implementation in a comparison.

    Args:
        name: Row label.
        call: One timed call, no arguments; its return value is kept from the last round
            for the correctness check. ``None`` when the implementation is unavailable.
        missing: Why it is unavailable (a peer that is not installed), shown in its row.
        warm: The warm-up call; default ``call`` itself.
    """

    name: str
    call: Optional[Callable[[], Any]]
    missing: str = ""
    warm: Optional[Callable[[], Any]] = None
    times: List[float] = field(default_factory=list)
    cpu: List[float] = field(default_factory=list)
    output: Any = None


def run_interleaved(impls: List[Impl], rounds: int, calibrate: bool = True) -> int:
    """Warm up, then time every available implementation once per round, in turn.

    Args:
        impls: The implementations; the first available one is the reference.
        rounds: Timed rounds (best of ``rounds`` counts).
        calibrate: Repeat each call ``k`` times per timing, ``k`` chosen (from one more
            untimed call of each, when a warm-up took under :data:`MIN_CALL_SECONDS`) so
            that the fastest timing lasts at least that long.

    Returns:
        ``k``, the calls per timing (times are per call: divided by ``k``).
    """
    live = [i for i in impls if i.call is not None]
    warm = [_timed(impl.warm or impl.call)[0] for impl in live]
    repeat = 1
    if calibrate and live and min(warm) < MIN_CALL_SECONDS:
        # The warm-up also paid for lazy loads; time short calls once more to size the repeat.
        fastest = min(_timed(impl.call)[0] for impl in live)
        repeat = max(1, math.ceil(MIN_CALL_SECONDS / max(fastest, 1e-6)))
    for _ in range(rounds):
        for impl in live:
            impl.output = None
            gc.collect()
            cpu, started = time.process_time(), time.perf_counter()
            for _ in range(repeat):
                impl.output = impl.call()
            impl.times.append((time.perf_counter() - started) / repeat)
            impl.cpu.append((time.process_time() - cpu) / repeat)
    return repeat


def _timed(fn: Callable[[], Any]):
    started = time.perf_counter()
    out = fn()
    return time.perf_counter() - started, out


@dataclass
class Ratio:
    """The ratio of the bests (reference best / implementation best), the range of the
    per-round ratios and their median (robust to one quiet or one busy round)."""

    best: float
    low: float
    high: float
    median: Optional[float] = None

    def __str__(self) -> str:
        middle = f", median {self.median:.2f}" if self.median is not None else ""
        return f"{self.best:.2f}x [{self.low:.2f}-{self.high:.2f}{middle}]"


def ratio(impl: Impl, ref: Impl) -> Optional[Ratio]:
    """``impl`` against ``ref``: above 1 means ``impl`` is faster; ``None`` if either is missing."""
    if not impl.times or not ref.times:
        return None
    per_round = [r / t for r, t in zip(ref.times, impl.times)]
    return Ratio(min(ref.times) / min(impl.times), min(per_round), max(per_round), statistics.median(per_round))


def check_spans(texts: List[str], outputs: List[list], measure: Callable[[str], int], limit: int):
    """Chunks, offset violations and ceiling violations of one implementation's output.

    Args:
        texts: The source documents.
        outputs: Per document, a list of ``(text, start, end)``; ``start`` is ``None`` for a
            library without offsets (the chunk must then be found in the source, at most
            two chunk lengths before the previous chunk's start), ``end`` ``None`` when not
            given.
        measure: Size of a chunk's own text in the ceiling's unit.
        limit: The ceiling (a chunk measuring more is a violation).

    Returns:
        ``(chunks, offset violations, ceiling violations)``.
    """
    n = off = over = 0
    for src, chunks in zip(texts, outputs):
        pos = 0
        for text, start, end in chunks:
            n += 1
            if start is None:
                start = src.find(text, max(0, pos - 2 * max(len(text), 1)))
            if start < 0 or src[start:start + len(text)] != text or (end is not None and end != start + len(text)):
                off += 1
            else:
                pos = start
            if measure(text) > limit:
                over += 1
    return n, off, over


def table(title: str, impls: List[Impl], nbytes: int, checks: Dict[str, tuple], repeat: int = 1,
          ref: Optional[Impl] = None) -> str:
    """A Markdown table of one comparison: best s, its CPU s (every thread of this process),
    MB/s, checks, ratio [per-round range]. A CPU time well above the wall time means threads
    ran on other cores: the ratio then depends on how many cores are idle."""
    ref = ref or next((i for i in impls if i.times), impls[0])
    lines = [f"#### {title}", "", f"{nbytes / 1e6:.2f} MB; best of {len(ref.times)} rounds, interleaved"
             + (f", {repeat} calls per timing" if repeat > 1 else ""), "",
             "| implementation | best s | CPU s | MB/s | chunks | offset violations | ceiling violations "
             "| ratio [per-round range, median] |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for impl in impls:
        if not impl.times:
            lines.append(f"| {impl.name} | not run: {impl.missing} | | | | | | |")
            continue
        best = min(impl.times)
        cpu = impl.cpu[impl.times.index(best)]
        n, off, over = checks.get(impl.name, ("", "", ""))
        r = "reference" if impl is ref else str(ratio(impl, ref))
        lines.append(f"| {impl.name} | {best:.3f} | {cpu:.3f} | {nbytes / 1e6 / best:.3g} | {n} | {off} | {over} "
                     f"| {r} |")
    return "\n".join(lines) + "\n"
