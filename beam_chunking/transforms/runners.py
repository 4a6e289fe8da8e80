"""What the transforms must know about a runner's deviations from the Beam model.

Beam's DaskRunner (2.77) runs a Reshuffle as a no-op, keeps a source in one partition,
drops whatever a DoFn emits from ``finish_bundle``, keeps every ParDo's outputs until the
job ends, hands every output of a multi-output ParDo to the consumers of each, computes
a side input inside the task that reads it, and has no translation of ``Impulse``; Beam
round-trips a pipeline through its runner API before running it there, a check that the
DaskRunner's side inputs depend on. The transforms check for it here, in one place, and
expand differently where the model would otherwise lose or serialise work.
"""
from __future__ import annotations

from typing import Any

from apache_beam.pipeline import PipelineVisitor


def _is_dask(runner: Any) -> bool:
    return any(cls.__name__ == "DaskRunner" for cls in type(runner).__mro__)


def reshuffle_is_noop(runner: Any) -> bool:
    """Whether ``runner`` runs a Reshuffle without moving data."""
    return _is_dask(runner)


def keeps_pardo_outputs(runner: Any) -> bool:
    """Whether ``runner`` holds every ParDo's outputs until the job ends (so a chain of
    ParDos should run as one; see :mod:`beam_chunking.transforms.fused`)."""
    return _is_dask(runner)


def drops_finish_bundle_output(runner: Any) -> bool:
    """Whether ``runner`` loses what ``finish_bundle`` emits (so a DoFn must emit from
    ``process`` only)."""
    return _is_dask(runner)


def mixes_tagged_outputs(runner: Any) -> bool:
    """Whether ``runner`` gives the consumers of one tagged output of a ParDo all of its
    outputs, untagged (so outputs must be told apart by value)."""
    return _is_dask(runner)


def nests_side_inputs(runner: Any) -> bool:
    """Whether ``runner`` computes a side input inside the task that reads it, not as a
    dependency before it (so the whole job upstream of a side input becomes one task, which
    a lost worker reruns from the start and which cannot be cancelled)."""
    return _is_dask(runner)


def lacks_impulse(runner: Any) -> bool:
    """Whether ``runner`` cannot start a collection from ``Impulse`` (so a fixed list of
    elements must start from ``Create``)."""
    return _is_dask(runner)


def round_trip_is_redundant(pipeline: Any) -> bool:
    """Whether ``Pipeline.run`` may skip its check that ``pipeline`` survives a round trip
    through Beam's runner API (it pickles every DoFn twice, about a second on the client
    before the runner sees the first element); the FnApiRunner never does it, and Dataflow
    keeps it. On the DaskRunner the round trip is also what swaps a ParDo's side-input
    arguments for the placeholders its DoFn invoker fills, so it is kept when any step
    reads a side input."""
    return _is_dask(pipeline.runner) and not _reads_side_inputs(pipeline)


def _reads_side_inputs(pipeline: Any) -> bool:
    class Finder(PipelineVisitor):
        found = False

        def visit_transform(self, applied):
            self.found = self.found or bool(applied.side_inputs)

    finder = Finder()
    pipeline.visit(finder)
    return finder.found
