"""Several DoFns run as one, element by element, for runners that keep every ParDo's output.

Beam's DaskRunner (2.77) collects each ParDo's outputs for a whole partition and keeps them
until the job ends, so a chain of Read | Parse | Chunk | Rows | Write ParDos holds every
document's bytes, text and rows in worker memory: memory grows with the corpus. Run as one
DoFn, the chain hands each document from step to step inside ``process`` and emits only the
small file references at the end; nothing of a document outlives its turn.
"""
from __future__ import annotations

from typing import Callable, Iterable, List, Sequence

import apache_beam as beam
from apache_beam.io import fileio
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
    What a DoFn emits when its bundle finishes is passed through the later ones; the chain
    refuses to emit anything itself at that point, since the runners this serves drop it.
    """

    def __init__(self, fns: Sequence[beam.DoFn]):
        self.fns = list(fns)

    def setup(self):
        for fn in self.fns:
            fn.setup()

    def start_bundle(self):
        for fn in self.fns:
            fn.start_bundle()

    def _through(self, items: Iterable, start: int) -> List:
        items = list(items)
        for fn in self.fns[start:]:
            items = [out for item in items for out in _outputs(fn.process(item))]
        return items

    def process(self, element):
        yield from self._through([element], 0)

    def finish_bundle(self):
        for k, fn in enumerate(self.fns):
            late = self._through(_outputs(fn.finish_bundle()), k + 1)
            if late:
                raise RuntimeError(f"{type(fn).__name__} emitted {len(late)} outputs when its bundle finished; "
                                   "a fused stage cannot deliver them on this runner")

    def teardown(self):
        for fn in self.fns:
            fn.teardown()
