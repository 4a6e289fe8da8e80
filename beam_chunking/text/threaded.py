"""Token counts of many spans, spread over a few threads when the work is large enough.

tiktoken's encoder runs in Rust and releases the GIL while it encodes, so counting the
chunks of large documents on two threads takes about a quarter less time when the second
core is free (0.41 s against 0.55 s for 9 MB of chunks) and more when it is not (0.72 s
against 0.60 s). Threads are therefore used only on enough text and on idle cores: below
:data:`MIN_PARALLEL_CHARS` the spans are counted on the calling thread, which is also the
only thread used when no other core is idle (see :func:`_threads`). Every span is encoded on
its own, so the counts are exactly those of ``count(text[start:end])`` whatever the split.

Example:
    >>> spans = [(0, 3), (4, 9)]
    >>> count_spans_threaded(len, "one three", spans)
    [3, 5]
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, List, Optional, Sequence, Tuple

#: Characters (over all spans) per extra thread: 8,000 is about half a millisecond of
#: encoding, against some 30 microseconds to hand a part to a thread.
MIN_PARALLEL_CHARS = 8_000

#: Most threads that count one call's spans, the calling thread included.
MAX_THREADS = 4

_LOCK = threading.Lock()
_POOL: Optional[ThreadPoolExecutor] = None


def _usable_cores() -> int:
    # The cores this process may run on (a container's share), not the machine's.
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


_CORES = _usable_cores()
_THREADS = max(1, min(MAX_THREADS, _CORES))


def _threads() -> int:
    """Threads worth using now: one per core left idle by the rest of the machine.

    Extra threads only pay on cores nothing else uses: where every core already runs a
    worker process (a multi-process or Dataflow run), they would slow each other down.
    The one-minute load average, which counts this process too, tells.
    """
    if _THREADS < 2:
        return 1
    try:
        busy = os.getloadavg()[0]
    except (AttributeError, OSError):  # no load average on this platform: use the cores
        return _THREADS
    # Rounded: a load of 1.4 on two cores (this process and some noise) leaves most of a core idle.
    return max(1, min(_THREADS, int(_CORES - busy + 1.5)))


def _pool() -> ThreadPoolExecutor:
    # One small pool per process, shared by every sizer and every worker thread of the runner.
    global _POOL
    if _POOL is None:
        with _LOCK:
            if _POOL is None:
                _POOL = ThreadPoolExecutor(max_workers=max(1, _THREADS - 1), thread_name_prefix="beam-chunking-count")
    return _POOL


def _count_all(count: Callable[[str], int], text: str, spans: Sequence[Tuple[int, int]]) -> List[int]:
    return [count(text[s:e]) for s, e in spans]


def spare_core() -> bool:
    """Whether a core is idle besides the calling thread's (see :func:`_threads`)."""
    return _threads() >= 2


def run_later(fn: Callable[..., Any], *args: Any) -> "Future[Any]":
    """Start ``fn(*args)`` on the pool's thread and return its future.

    For work that releases the GIL for most of its time (a whole document's tiktoken
    encode): the caller goes on with other work meanwhile. Call it only when
    :func:`spare_core` says a core is idle. Work that takes the GIL often (many short
    encodes) gains nothing: the caller holds the GIL, and the pool's thread waits for it
    at every step.
    """
    return _pool().submit(fn, *args)


def count_spans_threaded(count: Callable[[str], int], text: str, spans: Sequence[Tuple[int, int]],
                         min_parallel_chars: int = MIN_PARALLEL_CHARS) -> List[int]:
    """Return ``[count(text[s:e]) for s, e in spans]``, counted on up to :data:`MAX_THREADS` threads.

    Args:
        count: Counts one string; it should release the GIL (tiktoken's encoder does) for the
            threads to help.
        text: The document text.
        spans: ``(start, end)`` character offsets into ``text``.
        min_parallel_chars: Characters of span text per extra thread: spans totalling
            less are counted on the calling thread alone. Default
            :data:`MIN_PARALLEL_CHARS` (8,000).

    Returns:
        One count per span, in order.
    """
    total = sum(e - s for s, e in spans)
    threads = min(_threads(), 1 + total // max(1, min_parallel_chars))
    if threads < 2 or len(spans) < 2:
        return _count_all(count, text, spans)
    # Contiguous parts of about equal length; the calling thread counts the last one.
    bounds, acc, k = [0], 0, 1
    for i, (s, e) in enumerate(spans):
        acc += e - s
        if acc >= total * k / threads and i + 1 < len(spans) and len(bounds) < threads:
            bounds.append(i + 1)
            k += 1
    bounds.append(len(spans))
    parts = [spans[a:b] for a, b in zip(bounds, bounds[1:])]
    futures: List[Future] = [_pool().submit(_count_all, count, text, part) for part in parts[:-1]]
    last = _count_all(count, text, parts[-1])
    out: List[int] = []
    for f in futures:
        out.extend(f.result())
    out.extend(last)
    return out
