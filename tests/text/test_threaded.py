"""Counting spans on several threads gives the counts of one thread, in order."""
from __future__ import annotations

import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from beam_chunking.sizing import TiktokenSizer
from beam_chunking.text import threaded
from beam_chunking.text.threaded import count_spans_threaded

TEXT = ("Prose with words, then code(x, y);\r\n日本語のテキスト 👩‍👩‍👧 e\u0301 <|endoftext|>\n" * 400)


def spans_of(text, step, width):
    return [(s, min(len(text), s + width)) for s in range(0, len(text), step)]


@pytest.fixture(scope="module")
def sizer():
    return TiktokenSizer()


def test_threads_give_the_counts_of_one_thread_in_order(sizer):
    spans = spans_of(TEXT, 97, 333)
    one = [sizer.count(TEXT[s:e]) for s, e in spans]
    assert count_spans_threaded(sizer.count, TEXT, spans, min_parallel_chars=100) == one
    assert count_spans_threaded(sizer.count, TEXT, spans, min_parallel_chars=10**9) == one


def test_large_work_is_spread_over_the_pool_and_small_work_stays_on_the_caller(monkeypatch):
    if threaded._THREADS < 2:
        pytest.skip("this machine gives the process one core: everything runs on the calling thread")
    monkeypatch.setattr(threaded, "_threads", lambda: 2)  # whatever else runs on the machine now
    seen = set()

    def count(s):
        seen.add(threading.current_thread().name)
        return len(s)

    spans = spans_of(TEXT, 50, 50)
    assert count_spans_threaded(count, TEXT, spans, min_parallel_chars=1000) == [e - s for s, e in spans]
    assert any(name.startswith("beam-chunking-count") for name in seen)
    seen.clear()
    count_spans_threaded(count, TEXT, spans[:3], min_parallel_chars=1000)
    assert seen == {threading.current_thread().name}


def test_an_error_in_a_pool_thread_reaches_the_caller():
    def count(s):
        if "code" in s:
            raise ValueError("boom")
        return len(s)

    with pytest.raises(ValueError, match="boom"):
        count_spans_threaded(count, TEXT, spans_of(TEXT, 50, 50), min_parallel_chars=10)


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=300), st.lists(st.tuples(st.integers(0, 300), st.integers(0, 300)), max_size=40),
       st.integers(1, 200))
def test_any_spans_of_adversarial_text_count_as_each_span_alone(sizer, text, pairs, min_chars):
    spans = [(min(a, b, len(text)), min(max(a, b), len(text))) for a, b in pairs]
    assert count_spans_threaded(sizer.count, text, spans, min_parallel_chars=min_chars) == [
        sizer.count(text[s:e]) for s, e in spans]


def test_threads_are_used_only_on_cores_the_machine_leaves_idle(monkeypatch):
    monkeypatch.setattr(threaded, "_CORES", 4)
    monkeypatch.setattr(threaded, "_THREADS", 4)
    for load, threads in ((0.2, 4), (1.0, 4), (2.3, 3), (2.6, 2), (3.6, 1), (9.0, 1)):
        monkeypatch.setattr(threaded.os, "getloadavg", lambda load=load: (load, load, load))
        assert threaded._threads() == threads, load
    # Two cores, this process busy on one and a little noise: the other core is idle.
    monkeypatch.setattr(threaded, "_CORES", 2)
    monkeypatch.setattr(threaded, "_THREADS", 2)
    for load, spare in ((1.4, True), (1.6, False)):
        monkeypatch.setattr(threaded.os, "getloadavg", lambda load=load: (load, load, load))
        assert threaded.spare_core() is spare, load
