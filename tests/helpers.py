"""Invariant checks and adversarial text shared by the strategy tests."""
from __future__ import annotations

import pickle

from hypothesis import strategies as st

from beam_chunking.sizing import TiktokenSizer

CL100K = TiktokenSizer()

# Alphabets that break naive splitters: CJK, emoji with ZWJ and skin tones, combining marks,
# CRLF, tabs, NBSP, special-token strings.
_PIECES = [
    "the", "quick", "brown", "fox", "Dr.", "U.S.", "3.14", "v1.2.3", "https://example.org/a.b",
    "日本語のテキスト", "中文句子。", "한국어", "👩‍👩‍👧", "👍🏽", "🇫🇷", "e\u0301", "a\u0308\u0323",
    "\r\n", "\n", "\n\n", "\t", "\u00a0", " ", "  ", ". ", "! ", "? ", "<|endoftext|>",
    "x" * 40, "supercalifragilisticexpialidocious", "、", "。", "\u200b",
]

adversarial_text = st.one_of(
    st.lists(st.sampled_from(_PIECES), max_size=120).map("".join),
    st.text(max_size=600),
    st.text(alphabet=st.sampled_from(list("ab \n.")), max_size=800),
)


def check_chunks(text, chunks, *, limit=None, measure=len):
    """The invariant battery: exact spans, no loss, non-empty, bounded, ordered, unique ids."""
    covered = bytearray(len(text))
    ids = set()
    for i, c in enumerate(chunks):
        assert c.index == i
        assert c.text == text[c.start:c.end], (c.start, c.end)
        assert c.text.strip(), f"whitespace-only chunk {c!r}"
        if limit is not None:
            assert measure(c.text) <= limit, (measure(c.text), limit, c.text)
        assert c.id not in ids
        ids.add(c.id)
        for k in range(c.start, c.end):
            covered[k] = 1
    lost = [k for k, ch in enumerate(text) if not covered[k] and not ch.isspace()]
    assert not lost, f"lost non-whitespace at {lost[:5]}: {[text[k] for k in lost[:5]]}"
    starts = [c.start for c in chunks]
    assert starts == sorted(starts)


def check_properties(strategy, text, limit, measure=len):
    """The battery plus determinism, and exact token counts for strategies that report them."""
    chunks = strategy.chunk(text)
    check_chunks(text, chunks, limit=limit, measure=measure)
    assert chunks == strategy.chunk(text)
    if measure is not len:
        assert all(c.token_count == measure(c.text) for c in chunks)
    return chunks


def check_long_text(strategy, text, limit, size_of=lambda c: len(c.text)):
    """A cheap battery for multi-megabyte inputs: bounded, exact at a sample, no gaps."""
    chunks = strategy.chunk(text)
    assert max(size_of(c) for c in chunks) <= limit
    assert chunks[0].start == 0 and chunks[-1].end == len(text)
    for a, b in zip(chunks, chunks[1:]):
        assert a.start < b.start <= a.end or not text[a.end:b.start].strip()
    for c in chunks[:: max(1, len(chunks) // 50)]:
        assert c.text == text[c.start:c.end]
    return chunks


def tokens(text: str) -> int:
    return CL100K.count(text)


def check_pickle(strategy, text="Some text. More text.\n\nA paragraph."):
    clone = pickle.loads(pickle.dumps(strategy))
    assert clone == strategy
    assert [c.text for c in clone.chunk(text)] == [c.text for c in strategy.chunk(text)]


def parsed_text(path):
    """The text a pipeline's chunk offsets refer to for a local file (the parser's output)."""
    import os

    from beam_chunking.parsers import detect_content_type, parse
    from beam_chunking.types import Document

    with open(path, "rb") as f:
        data = f.read()
    name = os.path.basename(path)
    return parse(Document("d", name, data, detect_content_type(name, data))).text
