"""Plumbing shared by the transforms: failure pass-through and dead-letter wiring."""
from __future__ import annotations

import apache_beam as beam

from beam_chunking.transforms.records import Failure, failure_from

NAMESPACE = "beam_chunking"


def with_failures(pcoll, label: str, fn: beam.DoFn, stage: str):
    """Apply ``fn`` with Beam's exception handling; failed elements become :class:`Failure`.

    ``fn`` receives only elements that are not failures; earlier failures pass through.
    """
    failures_in, todo = pcoll | f"{label}SkipFailures" >> beam.Partition(
        lambda e, _: 0 if isinstance(e, Failure) else 1, 2
    )
    good, bad = todo | label >> beam.ParDo(fn).with_exception_handling()
    failed = bad | f"{label}Failures" >> beam.Map(_to_failure, stage)
    return (good, failed, failures_in) | f"{label}Merge" >> beam.Flatten()


def _to_failure(bad, stage):
    element, error = bad
    beam.metrics.Metrics.counter(NAMESPACE, f"failed_{stage}").inc()
    return failure_from(element, error, stage)
