"""make_chunks: built in C when the extension is there, the same chunks as the Python loop."""
from __future__ import annotations

import json
import pickle
import subprocess
import sys

import pytest

from beam_chunking import RecursiveChunker, TokenChunker
from beam_chunking.strategies import base
from beam_chunking.strategies.base import make_chunks
from beam_chunking.types import Chunk, ParsedDocument, Section


def document(text: str) -> ParsedDocument:
    return ParsedDocument("doc", "mem://doc", "text/plain", text, (Section(0, len(text)),))


def test_the_same_chunks_as_of_span_per_span():
    doc, meta = document("alpha beta gamma"), {"heading": "H"}
    spans = [(0, 5, None), (6, 10, 2), (11, 16, None)]
    built = make_chunks(doc, spans, meta, index=3)
    assert built == [Chunk.of_span("doc", k, s, e, doc.text[s:e], n, meta) for k, (s, e, n) in enumerate(spans, 3)]
    assert all(type(c) is Chunk and c.metadata is meta and c.embedding is None and c.ordinal == 0 for c in built)
    assert [c.id for c in built] == ["doc:0000000000", "doc:0000000006", "doc:0000000011"]
    assert pickle.loads(pickle.dumps(built)) == built
    assert make_chunks(doc, iter(spans), meta) == make_chunks(doc, tuple(spans), meta) == make_chunks(doc, spans, meta)
    assert make_chunks(doc, [], meta) == []


@pytest.fixture(params=["native", "python"])
def builder_path(request, monkeypatch):
    """Both ways of building chunks: the C extension (where built) and the Python loop."""
    if request.param == "native" and not base.NATIVE_CHUNKS:
        pytest.skip("the C extension was not built (no compiler at install)")
    if request.param == "python":
        monkeypatch.setattr(base, "_native_make_chunks", None)
    return request.param


def test_spans_outside_the_text_are_refused(builder_path):
    for span in [(0, 99, None), (3, 2, None), (-1, 2, None), (2 ** 70, 2 ** 71, None)]:
        with pytest.raises(ValueError, match="outside the text"):
            make_chunks(document("short"), [span], {})


def test_spans_as_lists_or_any_sequence(builder_path):
    doc = document("alpha beta")
    expected = make_chunks(doc, [(0, 5, None), (6, 10, 1)], {})
    assert make_chunks(doc, [[0, 5, None], [6, 10, 1]], {}) == expected
    assert make_chunks(doc, ((s, e, n) for s, e, n in [(0, 5, None), (6, 10, 1)]), {}) == expected
    with pytest.raises((TypeError, ValueError)):
        make_chunks(doc, [(0, 5)], {})


def test_a_span_list_changed_while_it_is_read(builder_path):
    # An offset's __index__ may run any code: here it empties the list being read.
    import gc

    spans = []

    class Shrinking:
        def __index__(self):
            spans.clear()
            gc.collect()
            return 1

    spans += [(0, Shrinking(), None), (0, 1, None)]
    chunks = make_chunks(document("ab"), spans, {})  # no crash; C reads a copy, Python stops early
    assert chunks and all((c.start, c.end, c.text, type(c.end)) == (0, 1, "a", int) for c in chunks)


def test_reference_counts_are_kept_when_a_span_is_refused():
    doc, meta = document("x" * 10), {}
    before = sys.getrefcount(meta), sys.getrefcount(doc.text)
    for _ in range(1000):
        with pytest.raises(ValueError):
            make_chunks(doc, [(0, 5, None), (3, 99, None)], meta)
    assert (sys.getrefcount(meta), sys.getrefcount(doc.text)) == before


def test_reference_counts_are_kept():
    doc, meta = document("x" * 100), {}
    spans = [(k, k + 10, None) for k in range(0, 90, 10)]
    before = sys.getrefcount(meta), sys.getrefcount(doc.text), sys.getrefcount(doc.id)
    for _ in range(1000):
        make_chunks(doc, spans, meta)
    assert (sys.getrefcount(meta), sys.getrefcount(doc.text), sys.getrefcount(doc.id)) == before


def test_without_the_extensions_the_same_chunks(tmp_path):
    # An install without a compiler: both extensions unimportable, the Python code serves.
    script = """
import json, sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name in ("beam_chunking.strategies._chunkbuild", "beam_chunking.text._separators",
                    "beam_chunking.text._scan"):
            raise ImportError(name)
sys.meta_path.insert(0, Block())
from beam_chunking import RecursiveChunker, TokenChunker
from beam_chunking.strategies import base
from beam_chunking.text import separators, tokens
assert not base.NATIVE_CHUNKS and not separators.NATIVE and not tokens.NATIVE_SCAN
text = open(sys.argv[1], encoding="utf-8", newline="").read()
print(json.dumps([[(c.start, c.end, c.text, c.token_count) for c in strategy.chunk(text)]
                  for strategy in (RecursiveChunker(max_chunk_size=60, overlap=12), TokenChunker(16, 3))]))
"""
    text = ("Ein Absatz mit Wörtern. " * 9 + "\n\n" + "日本語のテキスト" * 30 + "\r\n" + "👩‍👩‍👧 e\u0301 " * 20) * 3
    (tmp_path / "in.txt").write_text(text, encoding="utf-8", newline="")
    run = subprocess.run([sys.executable, "-c", script, str(tmp_path / "in.txt")], capture_output=True, text=True,
                         check=True)
    expected = [[[c.start, c.end, c.text, c.token_count] for c in strategy.chunk(text)]
                for strategy in (RecursiveChunker(max_chunk_size=60, overlap=12), TokenChunker(16, 3))]
    assert json.loads(run.stdout) == expected


@pytest.mark.skipif(not base.NATIVE_CHUNKS, reason="the C extension was not built (no compiler at install)")
def test_the_builder_refuses_what_is_not_a_slot():
    from beam_chunking.strategies._chunkbuild import builder

    class Plain:
        a = 1

    with pytest.raises(TypeError, match="not a slot"):
        builder(Plain, ("a",) * 9)
    with pytest.raises(ValueError, match="9 field names"):
        builder(Chunk, ("start",))


@pytest.mark.skipif(not base.NATIVE_CHUNKS, reason="the C extension was not built (no compiler at install)")
def test_chunks_are_left_to_reference_counting():
    import gc
    import weakref

    class Held:
        pass

    held = Held()
    meta = {"section_path": ["A", "B"], "held": held}
    chunks = make_chunks(document("alpha beta"), [(0, 5, None), (6, 10, None)], meta)
    assert not any(gc.is_tracked(c) for c in chunks) and gc.is_tracked(meta)
    gone = weakref.ref(held)
    del held, meta, chunks
    assert gone() is None  # freed by reference counting: nothing waits for a collection


def test_built_extensions_are_not_older_than_their_sources():
    # An editable install builds the extensions once; an edited or checked-out .c file needs
    # `pip install -e .` again, or the tests would run yesterday's C code.
    import importlib
    import os

    for name, source in [("beam_chunking.strategies._chunkbuild", "_chunkbuild.c"),
                         ("beam_chunking.text._separators", "_separators.c"),
                         ("beam_chunking.text._scan", "_scan.c")]:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        c_file = os.path.join(os.path.dirname(module.__file__), source)
        if os.path.exists(c_file):  # an installed wheel carries no sources
            assert os.path.getmtime(module.__file__) >= os.path.getmtime(c_file), \
                f"{module.__file__} is older than {source}: run pip install -e . again"
