"""The plumbing shared by the transforms: lean DoFns and fixed lists of elements."""
import apache_beam as beam
from apache_beam.coders import VarIntCoder
from apache_beam.testing.util import assert_that, equal_to
from apache_beam.transforms import userstate
from apache_beam.transforms.timeutil import TimeDomain

from beam_chunking.transforms._common import LeanDoFn, Values


class _Stateful(LeanDoFn):
    COUNT = userstate.ReadModifyWriteStateSpec("count", VarIntCoder())
    ALARM = userstate.TimerSpec("alarm", TimeDomain.WATERMARK)

    def process(self, element, count=beam.DoFn.StateParam(COUNT), alarm=beam.DoFn.TimerParam(ALARM)):
        yield element

    @userstate.on_timer(ALARM)
    def ring(self, count=beam.DoFn.StateParam(COUNT)):
        yield count.read()

    def helper(self):
        return 1

    def display_data(self):  # an inherited name, overridden: hidden like the original
        return {}


def test_a_lean_dofn_lists_its_own_and_lifecycle_methods_only():
    names = set(dir(_Stateful()))
    assert {"process", "setup", "start_bundle", "finish_bundle", "teardown", "ring", "helper"} <= names
    assert not names & {"to_runner_api", "default_label", "display_data", "infer_output_type", "with_input_types"}
    assert _Stateful().display_data() == {}  # still there to call
    assert set(dir(beam.DoFn())) > names - {"ring", "helper", "COUNT", "ALARM"}


def test_state_and_timers_of_a_lean_dofn_are_still_found():
    states, timers = userstate.get_dofn_specs(_Stateful())
    assert {s.name for s in states} == {"count"}
    assert {t.name for t in timers} == {"ts-alarm"}  # Beam prefixes timer names
    assert userstate.is_stateful_dofn(_Stateful())


def test_values_come_out_in_one_step_in_order():
    with beam.Pipeline() as p:
        out = p | Values([("a", 1), None, {"k": [2]}])
        assert_that(out, equal_to([("a", 1), None, {"k": [2]}]))
