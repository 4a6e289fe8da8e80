"""FusedFn runs DoFns as one, element by element, and refuses to lose end-of-bundle output."""
import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to
from apache_beam.transforms.window import GlobalWindows, TimestampedValue
from apache_beam.utils.windowed_value import WindowedValue

from beam_chunking.transforms.fused import FusedFn, MapFn


class Twice(beam.DoFn):
    def process(self, x):
        yield x
        yield x + 100


class Buffered(beam.DoFn):
    """Holds its input until the bundle ends (what cross-document batching does)."""

    def start_bundle(self):
        self.held = []

    def process(self, x):
        self.held.append(x)

    def finish_bundle(self):
        for x in self.held:
            yield GlobalWindows.windowed_value(x)


def test_elements_pass_through_every_fn_in_order():
    with TestPipeline(runner="FnApiRunner") as p:
        out = p | beam.Create([1, 2]) | beam.ParDo(FusedFn([MapFn(lambda x: x * 10), Twice()]))
        assert_that(out, equal_to([10, 110, 20, 120]))


def test_output_at_bundle_end_is_refused_not_lost():
    fused = FusedFn([Buffered(), MapFn(str)])
    fused.setup()
    fused.start_bundle()
    assert list(fused.process(1)) == []
    with pytest.raises(RuntimeError, match="Buffered emitted 1 outputs when its bundle finished"):
        list(fused.finish_bundle() or ())


def test_output_at_bundle_end_goes_through_the_later_fns_where_the_runner_takes_it():
    with TestPipeline(runner="FnApiRunner") as p:
        out = p | beam.Create([1, 2]) | beam.ParDo(FusedFn([Buffered(), MapFn(str)], late_outputs=True))
        assert_that(out, equal_to(["1", "2"]))


class HoldOne(beam.DoFn):
    """Emits each element during the next one's turn (the last at bundle end), with its own
    window and timestamp: what the deferred token counts do."""

    def start_bundle(self):
        self.held = None

    def process(self, x, window=beam.DoFn.WindowParam, timestamp=beam.DoFn.TimestampParam):
        if self.held is not None:
            yield WindowedValue(*self.held)
        self.held = (x, timestamp, (window,))

    def finish_bundle(self):
        if self.held is not None:
            yield WindowedValue(*self.held)


class WithTimestamp(beam.DoFn):
    def process(self, x, timestamp=beam.DoFn.TimestampParam):
        yield x, int(timestamp.micros // 1_000_000)


def test_outputs_emitted_during_another_element_keep_their_own_timestamps():
    with TestPipeline(runner="FnApiRunner") as p:
        out = (p | beam.Create([1, 2, 3], reshuffle=False) | beam.Map(lambda x: TimestampedValue(x, 10 * x))
               | beam.ParDo(FusedFn([HoldOne(), MapFn(lambda x: x + 100)], late_outputs=True))
               | beam.ParDo(WithTimestamp()))
        assert_that(out, equal_to([(101, 10), (102, 20), (103, 30)]))
