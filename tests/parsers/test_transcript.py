"""WebVTT and SubRip transcripts: timed cue sections, and chunks by time window."""
import pytest

from beam_chunking.errors import ConfigError, ParseError
from beam_chunking.parsers.sniff import SUBRIP, WEBVTT
from beam_chunking.parsers.transcript import parse_transcript, seconds
from beam_chunking.strategies.transcript import TranscriptChunker
from beam_chunking.types import Document

VTT = """WEBVTT

NOTE recorded 2026

00:00:01.000 --> 00:00:04.250
<v Alice>Welcome to the show.

intro-2
00:00:04.500 --> 00:00:09.000 align:start
<v Bob>Thanks, Alice.
Glad to be <i>here</i>.

00:01:10.000 --> 00:01:12.000
<v Alice>Let us begin.
"""

SRT = """1\r\n00:00:00,500 --> 00:00:02,000\r\n{\\an8}Hello <b>world</b>.\r\n\r\n2\r\n00:00:02,500 --> 00:00:05,000\r\nSecond line\r\nof the cue.\r\n"""


def vtt_doc(text=VTT):
    return parse_transcript(Document("v", "file:///talk.vtt", text.encode(), WEBVTT))


def test_webvtt_cues_are_timed_sections_without_markup():
    parsed = vtt_doc()
    texts = [parsed.text[s.start:s.end] for s in parsed.sections]
    assert texts == ["Welcome to the show.", "Thanks, Alice. Glad to be here.", "Let us begin."]
    assert [(s.metadata["timestamp_seconds"], s.metadata["timestamp_end_seconds"]) for s in parsed.sections] == [
        (1.0, 4.25), (4.5, 9.0), (70.0, 72.0)]
    assert [s.metadata["speaker"] for s in parsed.sections] == ["Alice", "Bob", "Alice"]
    assert parsed.metadata["cues"] == 3 and all(s.page is None for s in parsed.sections)


def test_subrip_cues_with_crlf_and_styling():
    parsed = parse_transcript(Document("s", "file:///a.srt", SRT.encode(), SUBRIP))
    assert [parsed.text[s.start:s.end] for s in parsed.sections] == ["Hello world.", "Second line of the cue."]
    assert parsed.sections[1].metadata["timestamp_seconds"] == 2.5


@pytest.mark.parametrize("ctype, data", [(WEBVTT, b"not a transcript"), (SUBRIP, b"1\n00:00:01 --> broken\nx\n")])
def test_malformed_transcripts_fail_with_one_line(ctype, data):
    with pytest.raises(ParseError, match="not a valid transcript"):
        parse_transcript(Document("x", "file:///x", data, ctype))


def test_seconds():
    assert seconds("01:02:03.5") == 3723.5 and seconds("02:03.250") == 123.25 and seconds("00:00:01,007") == 1.007
    with pytest.raises(ValueError):
        seconds("1 minute")


def test_chunks_group_cues_by_window_and_carry_times():
    parsed = vtt_doc()
    chunks = TranscriptChunker(window_seconds=30, min_chunk_size=0).chunk_document(parsed)
    assert [c.text for c in chunks] == ["Welcome to the show.\nThanks, Alice. Glad to be here.", "Let us begin."]
    assert [(c.metadata["timestamp_seconds"], c.metadata["timestamp_end_seconds"]) for c in chunks] == [
        (1.0, 9.0), (70.0, 72.0)]
    assert chunks[0].metadata["speakers"] == ["Alice", "Bob"]
    for c in chunks:
        assert c.text == parsed.text[c.start:c.end] and "page" not in c.metadata


def test_a_short_last_group_joins_the_previous_chunk():
    chunks = TranscriptChunker(window_seconds=30, min_chunk_size=100).chunk_document(vtt_doc())
    assert len(chunks) == 1 and chunks[0].metadata["timestamp_end_seconds"] == 72.0


def test_size_bounds_every_chunk_and_long_cues_are_cut():
    cues = "".join(f"00:00:{k:02d}.000 --> 00:00:{k:02d}.900\nWord {k} " + "blah " * (40 if k == 3 else 3) + "\n\n"
                   for k in range(10))
    parsed = vtt_doc("WEBVTT\n\n" + cues)
    chunks = TranscriptChunker(window_seconds=600, max_chunk_size=60).chunk_document(parsed)
    assert all(len(c.text) <= 60 and c.text == parsed.text[c.start:c.end] for c in chunks)
    long_pieces = [c for c in chunks if c.metadata["timestamp_seconds"] == 3.0]
    assert len(long_pieces) > 1
    assert "".join(parsed.text.split()) == "".join("".join(c.text for c in chunks).split())


def test_options_are_checked():
    with pytest.raises(ConfigError, match="window_seconds"):
        TranscriptChunker(window_seconds=0)


def test_transcripts_are_detected_and_parsed_through_the_registry():
    from beam_chunking.parsers import parse
    from beam_chunking.parsers.detect import detect_content_type

    assert detect_content_type("talk.vtt", VTT.encode()) == WEBVTT
    assert detect_content_type("talk", VTT.encode()) == WEBVTT  # sniffed from its first line
    assert detect_content_type("a.srt", SRT.encode()) == SUBRIP
    doc = Document("v", "file:///talk.vtt", VTT.encode(), detect_content_type("talk.vtt", VTT.encode()))
    assert parse(doc).metadata["cues"] == 3


def test_a_missing_reader_names_the_extra(monkeypatch):
    import sys

    from beam_chunking.errors import MissingExtra

    monkeypatch.setitem(sys.modules, "webvtt", None)  # as if webvtt-py were not installed
    with pytest.raises(MissingExtra, match=r"beam-chunking\[transcripts\]"):
        vtt_doc()
