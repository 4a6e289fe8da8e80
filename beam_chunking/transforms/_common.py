"""Plumbing shared by the transforms: per-element failure capture and pass-through.

Each stage's DoFn turns an exception raised for one element into a :class:`Failure` in its
main output, and passes earlier failures through untouched. This is what Beam's
``with_exception_handling`` does, without its second (dead-letter) output: that output has to
be flattened back into the main stream after every stage, and those Flattens cost about a
fifth of the pipeline's throughput on the in-process runner (measured with bench/run.py).
"""
from __future__ import annotations

from typing import Any, Iterable

import apache_beam as beam

from beam_chunking.transforms.runners import lacks_impulse
from beam_chunking.transforms.records import Failure, Stage, failure_from

NAMESPACE = "beam_chunking"

#: The methods Beam calls on a DoFn, which may take its parameters (state, timers, windows).
_LIFECYCLE = frozenset(("process", "process_batch", "setup", "start_bundle", "finish_bundle", "teardown"))
_INHERITED = frozenset(dir(beam.DoFn))


class LeanDoFn(beam.DoFn):
    """A DoFn whose ``dir()`` leaves out what it inherits from Beam's DoFn, lifecycle
    methods excepted.

    Beam (2.77) looks for state and timer parameters in every method that ``dir()`` lists,
    by reading its signature, eight times per step as a pipeline is built and run: about
    2.5 ms per step for the thirty-odd methods of a plain DoFn, as measured in
    bench/README.md. The inherited methods never take such parameters. Every lifecycle
    method and every method a subclass adds under a new name stays listed, so a subclass that
    does use state or timers is seen as stateful as before; an inherited name it overrides
    (``display_data``, say) is hidden like the original.
    """

    def __dir__(self):
        return [name for name in super().__dir__() if name in _LIFECYCLE or name not in _INHERITED]


class StageFn(LeanDoFn):
    """A stage's DoFn. Subclasses implement ``handle`` and set ``stage``.

    All of an element's outputs are produced before any is emitted, so a failure never
    leaves half of a document's outputs behind. ``Exception`` subclasses become failures;
    ``KeyboardInterrupt`` and ``SystemExit`` propagate.
    """

    stage: Stage

    def process(self, element):
        if isinstance(element, Failure):
            yield element
            return
        try:
            outputs = list(self.handle(element))
        except Exception as exc:  # one bad document must not fail the job
            beam.metrics.Metrics.counter(NAMESPACE, f"failed_{self.stage.value}").inc()
            yield failure_from(element, exc, self.stage)
            return
        yield from outputs

    def handle(self, element):  # pragma: no cover - abstract
        raise NotImplementedError


class Values(beam.PTransform):
    """A short, fixed list of elements (patterns, files, a sentinel) as a collection, made
    by one step.

    ``beam.Create`` encodes its values when the pipeline is built and decodes them in a
    step of its own, after inferring a coder from them: about 10 ms per Create on the
    in-process runner, as measured in bench/README.md. Here the
    values travel pickled with the one step that emits them.

    Args:
        values: The elements, in order; any picklable objects.
        spread: Whether to spread them over the workers (a ``beam.Create`` with its
            shuffle, worth it for more than a handful). Default ``False``.
    """

    def __init__(self, values: Iterable[Any], spread: bool = False):
        super().__init__()
        self.values = list(values)
        self.spread = spread

    def expand(self, pbegin):
        if self.spread or lacks_impulse(pbegin.pipeline.runner):
            return pbegin | "Create" >> beam.Create(self.values, reshuffle=self.spread)
        return (pbegin
                | "Impulse" >> beam.Impulse()
                | "Emit" >> beam.ParDo(_EmitFn(self.values)).with_output_types(Any))


class _EmitFn(LeanDoFn):
    def __init__(self, values):
        self.values = values

    def process(self, _):
        return self.values
