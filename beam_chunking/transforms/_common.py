"""Plumbing shared by the transforms: failure pass-through and dead-letter wiring."""
from __future__ import annotations

import apache_beam as beam

from beam_chunking.transforms.records import Failure, failure_from

NAMESPACE = "beam_chunking"


class StageFn(beam.DoFn):
    """A stage's DoFn: earlier failures pass through untouched; ``handle`` does the work."""

    def process(self, element):
        if isinstance(element, Failure):
            yield element
        else:
            yield from self.handle(element)

    def handle(self, element):  # pragma: no cover - abstract
        raise NotImplementedError


def with_failures(pcoll, label: str, fn: StageFn, stage: str):
    """Apply ``fn`` with Beam's exception handling; failed elements become :class:`Failure`.

    Failures of earlier stages flow through ``fn`` itself, so the stage adds one fused ParDo
    and the dead-letter branch, and no re-merge of the main stream.
    """
    good, bad = pcoll | label >> beam.ParDo(fn).with_exception_handling()
    failed = bad | f"{label}Failures" >> beam.Map(_to_failure, stage)
    return (good, failed) | f"{label}Merge" >> beam.Flatten()


def _to_failure(bad, stage):
    element, error = bad
    beam.metrics.Metrics.counter(NAMESPACE, f"failed_{stage}").inc()
    return failure_from(element, error, stage)
