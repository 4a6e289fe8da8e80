"""Deferred token counts: each document's tokens come from one encode on the pool's thread
while the next documents are chunked, and every chunk's count is still its own text's."""
from __future__ import annotations

import threading
import time

import pytest
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.timestamp import MIN_TIMESTAMP
from hypothesis import given, settings, strategies as st

import beam_chunking.transforms.chunk as chunk_stage
from beam_chunking.refiners import Refined
from beam_chunking.refiners.sanitise import Sanitiser
from beam_chunking.registry import get
from beam_chunking.sizing import load_encoding
from beam_chunking.text import threaded
from beam_chunking.text.tokens import TokenIndex
from beam_chunking.transforms import ChunkedDocument, DocumentHeader, Failure, Stage
from beam_chunking.transforms.chunk import _ChunkFn
from beam_chunking.transforms.fused import FusedFn
from beam_chunking.types import ParsedDocument, Section
from tests.helpers import adversarial_text

ENC = load_encoding("cl100k_base")
PROSE = ("Tokens are counted on each chunk's own text. Mail me at ann@example.com or call "
         "+1 415 555 0100, the key is sk-abcdefghijklmnopqrstuvwxyz012345. ") * 40
TEXTS = [PROSE, "日本語のテキストと、句読点。" * 300, "def f(x):\n    return x  # 👩‍👩‍👧 e\u0301\r\n" * 200, "", "   \n",
         "word " * 3000]


def docs():
    out = [ParsedDocument(f"d{k}", f"d{k}.txt", "text/plain", t, (Section(0, len(t)),) if t else ())
           for k, t in enumerate(TEXTS)]
    out.insert(2, Failure(DocumentHeader("gone", "gone.pdf", "application/pdf", 3, "sha"), Stage.PARSE, "ParseError",
                          "broken"))
    return out


def run(fn, elements, hold_pool: bool = False):
    """The DoFn's lifecycle as a fused stage runs it; returns (outputs from process, from finish).

    ``hold_pool``: the counting pool's threads are kept busy until the last element has
    been processed, so every count is still pending when the bundle ends."""
    fused = FusedFn([fn], late_outputs=True)
    fused.setup()
    fused.start_bundle()
    gate = threading.Event()
    if hold_pool:
        for _ in range(threaded.MAX_THREADS):
            threaded.run_later(gate.wait)
    try:
        early = [out for e in elements for out in fused.process(e, window=GlobalWindow(), timestamp=MIN_TIMESTAMP)]
    finally:
        gate.set()
    late = [wv.value for wv in fused.finish_bundle()]
    fused.teardown()
    return early, late


STRATEGIES = {
    "recursive": get("recursive", max_chunk_size=300, overlap=40),
    "parent_child": get("parent_child", parent=get("recursive", max_chunk_size=2000, overlap=0),
                        child=get("recursive", max_chunk_size=300, overlap=0)),
    "sanitised": Refined(get("recursive", max_chunk_size=300, overlap=40), Sanitiser()),
}


@pytest.mark.parametrize("name", list(STRATEGIES))
def test_deferred_counts_equal_counts_taken_in_line_in_the_same_order(monkeypatch, name):
    monkeypatch.setattr(chunk_stage, "spare_core", lambda: True)
    inline, none_late = run(_ChunkFn(STRATEGIES[name], "cl100k_base", defer_counts=False), docs())
    assert none_late == []
    early, late = run(_ChunkFn(STRATEGIES[name], "cl100k_base", defer_counts=True), docs())
    assert early + late == inline
    early, late = run(_ChunkFn(STRATEGIES[name], "cl100k_base", defer_counts=True), docs(), hold_pool=True)
    assert early == [] and late == inline  # all waited for the pool, and left in order at the end
    assert isinstance(inline[2], Failure) and [o.document_id for o in inline] == ["d0", "d1", "gone", "d2", "d3",
                                                                                   "d4", "d5"]
    chunks = [c for o in inline if isinstance(o, ChunkedDocument) for c in (*o.chunks, *o.parents)]
    assert chunks and all(c.token_count == len(ENC.encode_ordinary(c.text)) for c in chunks)
    if name == "sanitised":
        assert any(c.metadata.get("rewrite") for c in chunks)


def test_no_core_to_spare_counts_in_line(monkeypatch):
    monkeypatch.setattr(chunk_stage, "spare_core", lambda: False)
    early, late = run(_ChunkFn(STRATEGIES["recursive"], "cl100k_base", defer_counts=True), docs())
    assert late == [] and len(early) == 7


def test_a_fused_stage_that_may_not_emit_late_does_not_defer(monkeypatch):
    # A runner that drops what finish_bundle emits gets ChunkDocuments.fns() without deferral.
    monkeypatch.setattr(chunk_stage, "spare_core", lambda: True)
    fused = FusedFn(chunk_stage.ChunkDocuments(STRATEGIES["recursive"]).fns(defer_counts=False))
    fused.setup()
    fused.start_bundle()
    out = [o for d in docs() for o in fused.process(d, window=GlobalWindow(), timestamp=MIN_TIMESTAMP)]
    assert len(out) == 7 and list(fused.finish_bundle()) == []


@settings(max_examples=60, deadline=None)
@given(adversarial_text, st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 4000)), min_size=1, max_size=40))
def test_span_counts_from_one_encoding_are_each_spans_own(text, picks):
    spans = [(min(a, len(text)), min(len(text), min(a, len(text)) + w)) for a, w in picks]
    cache = {}
    got = TokenIndex(ENC, text, 0, len(text)).count_spans(text, spans, cache)
    assert got == [len(ENC.encode_ordinary(text[s:e])) for s, e in spans]


def test_waiting_documents_are_bounded(monkeypatch):
    # Past MAX_WAITING documents (or MAX_WAITING_CHARS of chunk text) the oldest is waited
    # for, so memory stays bounded however slow the counting is.
    monkeypatch.setattr(chunk_stage, "spare_core", lambda: True)
    monkeypatch.setattr(chunk_stage, "MAX_WAITING", 2)
    encode = chunk_stage.encode_span

    def slow_encode(*args):  # every count is still pending when the next document comes
        time.sleep(0.05)
        return encode(*args)

    monkeypatch.setattr(chunk_stage, "encode_span", slow_encode)
    fn = _ChunkFn(STRATEGIES["recursive"], "cl100k_base", defer_counts=True)
    fused = FusedFn([fn], late_outputs=True)
    fused.setup()
    fused.start_bundle()
    sizes = []
    for d in docs():
        list(fused.process(d, window=GlobalWindow(), timestamp=MIN_TIMESTAMP))
        sizes.append(len(fn._waiting))
    assert max(sizes) <= 2 and len(list(fused.finish_bundle())) == sizes[-1]
    monkeypatch.setattr(chunk_stage, "MAX_WAITING", 64)
    monkeypatch.setattr(chunk_stage, "MAX_WAITING_CHARS", 10)
    fused.start_bundle()
    sizes = []
    for d in docs():
        list(fused.process(d, window=GlobalWindow(), timestamp=MIN_TIMESTAMP))
        sizes.append(len(fn._waiting))
    assert max(sizes) <= 1  # every document is over 10 characters: each call waits for the oldest
    list(fused.finish_bundle())



def test_the_short_string_cache_is_bounded_and_holds_short_strings_only(monkeypatch):
    from beam_chunking.text import tokens

    monkeypatch.setattr(tokens, "CACHE_ENTRIES", 50)
    text = " ".join(f"word{k}" for k in range(3000)) + " " + "x" * 200
    spans = [(s, s + 40) for s in range(0, len(text) - 40, 37)] + [(len(text) - 200, len(text))]
    cache: dict = {}
    got = TokenIndex(ENC, text, 0, len(text)).count_spans(text, spans, cache)
    assert got == [len(ENC.encode_ordinary(text[s:e])) for s, e in spans]
    assert 0 < len(cache) <= 50 and all(len(k) <= tokens.CACHED_CHARS for k in cache)
