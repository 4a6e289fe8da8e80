"""Plumbing shared by the transforms: per-element failure capture and pass-through.

Each stage's DoFn turns an exception raised for one element into a :class:`Failure` in its
main output, and passes earlier failures through untouched. This is what Beam's
``with_exception_handling`` does, without its second (dead-letter) output: that output has to
be flattened back into the main stream after every stage, and those Flattens cost about a
fifth of the pipeline's throughput on the in-process runner (measured with bench/run.py).
"""
from __future__ import annotations

import apache_beam as beam

from beam_chunking.transforms.records import Failure, Stage, failure_from

NAMESPACE = "beam_chunking"


class StageFn(beam.DoFn):
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
