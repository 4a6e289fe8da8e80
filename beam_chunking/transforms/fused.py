"""Several DoFns run as one, element by element, for runners that keep every ParDo's output.

Beam's DaskRunner (2.77) collects each ParDo's outputs for a whole partition and keeps them
until the job ends, so a chain of Read | Parse | Chunk | Rows | Write ParDos holds every
document's bytes, text and rows in worker memory: memory grows with the corpus. Run as one
DoFn, the chain hands each document from step to step inside ``process`` and emits only the
small file references at the end; nothing of a document outlives its turn.
"""
from __future__ import annotations

import inspect
from typing import Callable, Iterable, List, Sequence

import apache_beam as beam
from apache_beam.io import fileio
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.timestamp import MIN_TIMESTAMP
from apache_beam.utils.windowed_value import WindowedValue


def _outputs(produced) -> List:
    return [o.value if isinstance(o, WindowedValue) else o for o in (produced or ())]


class MapFn(beam.DoFn):
    """A plain function as a DoFn (what ``beam.Map`` would run)."""

    def __init__(self, fn: Callable):
        self.fn = fn

    def process(self, element):
        yield self.fn(element)


class OpenFn(beam.DoFn):
    """File metadata to a readable file (what ``fileio.ReadMatches`` does), folders skipped."""

    def process(self, meta):
        if not meta.path.endswith("/"):
            yield fileio.ReadableFile(meta)


class FusedFn(beam.DoFn):
    """Run ``fns`` as one DoFn: each element goes through all of them before the next one.

    Lifecycle calls (setup, start_bundle, finish_bundle, teardown) reach every DoFn in order.
    A DoFn whose ``process`` takes ``window`` and ``timestamp`` gets the element's. What a
    DoFn emits when its bundle finishes is passed through the later ones; with
    ``late_outputs`` the chain emits what comes out in the global window, else it refuses
    to (a runner that drops what ``finish_bundle`` emits).
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

    def _through(self, items: Iterable, start: int, window=None, timestamp=None) -> List:
        """``items`` through the fns from ``start`` on; ``window`` and ``timestamp`` (both or
        neither) go to the fns that take them."""
        items = list(items)
        for k in range(start, len(self.fns)):
            fn = self.fns[k]
            if window is not None and self._takes_window[k]:
                items = [out for item in items for out in _outputs(fn.process(item, window=window, timestamp=timestamp))]
            else:
                items = [out for item in items for out in _outputs(fn.process(item))]
        return items

    def process(self, element, window=beam.DoFn.WindowParam, timestamp=beam.DoFn.TimestampParam):
        yield from self._through([element], 0, window, timestamp)

    def finish_bundle(self):
        for k, fn in enumerate(self.fns):
            late = self._through(_outputs(fn.finish_bundle()), k + 1, GlobalWindow(), MIN_TIMESTAMP)
            if late and not self.late_outputs:
                raise RuntimeError(f"{type(fn).__name__} emitted {len(late)} outputs when its bundle finished; "
                                   "a fused stage cannot deliver them on this runner")
            for out in late:
                yield WindowedValue(out, MIN_TIMESTAMP, (GlobalWindow(),))

    def teardown(self):
        for fn in self.fns:
            fn.teardown()
