import apache_beam as beam
from apache_beam.pvalue import AsList
from apache_beam.runners.dask.dask_runner import DaskRunner

from beam_chunking.transforms.runners import round_trip_is_redundant


def _pipeline(runner, side_input: bool) -> beam.Pipeline:
    pipeline = beam.Pipeline(runner=runner)
    numbers = pipeline | beam.Create([1, 2])
    if side_input:
        numbers | beam.Map(lambda n, seen: n + len(seen), AsList(numbers))
    else:
        numbers | beam.Map(lambda n: n + 1)
    return pipeline


def test_the_round_trip_is_skipped_only_on_dask_without_side_inputs():
    assert round_trip_is_redundant(_pipeline(DaskRunner(), side_input=False))
    # the DaskRunner's side inputs reach the DoFn only after the round trip
    assert not round_trip_is_redundant(_pipeline(DaskRunner(), side_input=True))
    assert not round_trip_is_redundant(_pipeline("DirectRunner", side_input=False))
