"""Several DoFns run as one, element by element, for runners that keep every ParDo's output.

Beam's DaskRunner (2.77) collects each ParDo's outputs for a whole partition and keeps them
until the job ends, so a chain of Read | Parse | Chunk | Rows | Write ParDos holds every
document's bytes, text and rows in worker memory: memory grows with the corpus. Run as one
DoFn, the chain hands each document from step to step inside ``process`` and emits only the
small file references at the end; nothing of a document outlives its turn.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Iterable, List, Sequence, Tuple

import apache_beam as beam
from apache_beam.io import fileio
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.timestamp import MIN_TIMESTAMP
from apache_beam.utils.windowed_value import WindowedValue

from beam_chunking.transforms._common import LeanDoFn


def _items(produced, window, timestamp) -> List[Tuple[Any, Any, Any]]:
    """A fn's outputs as ``(value, window, timestamp)``: a ``WindowedValue`` brings its own
    (one item per window), any other output gets ``window`` and ``timestamp``."""
    out: List[Tuple[Any, Any, Any]] = []
    for o in produced or ():
        if isinstance(o, WindowedValue):
            out.extend((o.value, w, o.timestamp) for w in o.windows)
        else:
            out.append((o, window, timestamp))
    return out


class MapFn(LeanDoFn):
    """A plain function as a DoFn (what ``beam.Map`` would run)."""

    def __init__(self, fn: Callable):
        self.fn = fn

    def process(self, element):
        yield self.fn(element)


class OpenFn(LeanDoFn):
    """File metadata to a readable file (what ``fileio.ReadMatches`` does), folders skipped."""

    def process(self, meta):
        if not meta.path.endswith("/"):
            yield fileio.ReadableFile(meta)


# Declared, so that Beam does not infer it from the bytecode each time a pipeline is built.
@beam.typehints.with_output_types(Any)
class FusedFn(LeanDoFn):
    """Run ``fns`` as one DoFn: each element goes through all of them before the next one.

    Lifecycle calls (setup, start_bundle, finish_bundle, teardown) reach every DoFn in order.
    A DoFn whose ``process`` takes ``window`` and ``timestamp`` gets the element's, and an
    output it emits as a ``WindowedValue`` keeps that value's window and timestamp through
    the later DoFns and out of the chain. What a DoFn emits when its bundle finishes is
    passed through the later ones; with ``late_outputs`` the chain emits it (in the global
    window unless it says otherwise), else it refuses to (a runner that drops what
    ``finish_bundle`` emits).
    """

    def __init__(self, fns: Sequence[beam.DoFn], late_outputs: bool = False):
        self.fns = list(fns)
        self.late_outputs = late_outputs

    def setup(self):
        self._takes_window = [{"window", "timestamp"} <= set(inspect.signature(fn.process).parameters)
                              for fn in self.fns]
        for fn in self.fns:
            fn.setup()

    def start_bundle(self):
        for fn in self.fns:
            fn.start_bundle()

    def _flow(self, items: List[Tuple[Any, Any, Any]], start: int) -> List[Tuple[Any, Any, Any]]:
        """``(value, window, timestamp)`` items through the fns from ``start`` on.

        A fn that takes ``window`` and ``timestamp`` gets the item's (when it has them). An
        output keeps its input's window and timestamp unless the fn emits it as a
        ``WindowedValue`` of its own: a fn that holds documents back (deferred token counts)
        emits each one later, during another element, with the window and timestamp it came
        with.
        """
        for k in range(start, len(self.fns)):
            fn, takes_window = self.fns[k], self._takes_window[k]
            out: List[Tuple[Any, Any, Any]] = []
            for value, window, timestamp in items:
                produced = (fn.process(value, window=window, timestamp=timestamp) if takes_window and window is not None
                            else fn.process(value))
                out.extend(_items(produced, window, timestamp))
            items = out
        return items

    def _through(self, items: Iterable, start: int) -> List:
        """The values that ``items`` become through the fns from ``start`` on (no windows)."""
        return [value for value, _, _ in self._flow([(item, None, None) for item in items], start)]

    def process(self, element, window=beam.DoFn.WindowParam, timestamp=beam.DoFn.TimestampParam):
        for value, w, ts in self._flow([(element, window, timestamp)], 0):
            yield value if w == window and ts == timestamp else WindowedValue(value, ts, (w,))

    def finish_bundle(self):
        for k, fn in enumerate(self.fns):
            late = self._flow(_items(fn.finish_bundle(), GlobalWindow(), MIN_TIMESTAMP), k + 1)
            if late and not self.late_outputs:
                raise RuntimeError(f"{type(fn).__name__} emitted {len(late)} outputs when its bundle finished; "
                                   "a fused stage cannot deliver them on this runner")
            for value, window, timestamp in late:
                yield WindowedValue(value, timestamp, (window,))

    def teardown(self):
        for fn in self.fns:
            fn.teardown()
