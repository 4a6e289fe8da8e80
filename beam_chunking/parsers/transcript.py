"""Transcripts: WebVTT (``.vtt``) and SubRip (``.srt``) cues as timed sections.

Each cue is one section (kind ``cue``) whose text is the cue's lines joined by spaces, with
markup (``<i>``, ``<v Speaker>``, ``{\\an8}``) removed; cues are separated by a newline.
Section metadata: ``timestamp_seconds`` (the cue's start), ``timestamp_end_seconds`` (its
end) and ``speaker`` when a WebVTT voice tag names one. Cue text is parsed by webvtt-py and
srt, the maintained readers of the two formats.
"""
from __future__ import annotations

import io
import re
from typing import FrozenSet, Iterable, Optional, Tuple

from beam_chunking.errors import MissingExtra, ParseError
from beam_chunking.parsers._build import TextBuilder
from beam_chunking.parsers._optional import require
from beam_chunking.parsers.decode import decode_text
from beam_chunking.parsers.drops import KEEP_NOTHING
from beam_chunking.parsers.limits import DEFAULT_LIMITS, ParseLimits
from beam_chunking.parsers.sniff import WEBVTT
from beam_chunking.types import Document, ParsedDocument


_TAG = re.compile(r"<[^>]*>|\{\\[^}]*\}")
_CLOCK = re.compile(r"^(?:(\d+):)?(\d{1,2}):(\d{1,2})(?:[.,](\d{1,3}))?$")

#: ``(start seconds, end seconds, text, speaker or None)`` of one cue.
Cue = Tuple[float, float, str, Optional[str]]


def seconds(clock: str) -> float:
    """``"01:02:03.500"``, ``"02:03.5"`` or ``"00:00:01,250"`` as seconds (a float)."""
    m = _CLOCK.match(clock.strip())
    if not m:
        raise ValueError(f"not a cue time: {clock!r}")
    hours, minutes, secs, frac = m.groups()
    return int(hours or 0) * 3600 + int(minutes) * 60 + int(secs) + (int(frac.ljust(3, "0")) / 1000 if frac else 0.0)


def _vtt_cues(text: str) -> Iterable[Cue]:
    webvtt = require("webvtt", "webvtt-py", "transcripts")
    for cue in webvtt.from_buffer(io.StringIO(text)):
        yield seconds(cue.start), seconds(cue.end), cue.text, getattr(cue, "voice", None) or None


def _srt_cues(text: str) -> Iterable[Cue]:
    srt = require("srt", "srt", "transcripts")
    for sub in srt.parse(text):
        yield sub.start.total_seconds(), sub.end.total_seconds(), sub.content, None


def parse_transcript(doc: Document, *, errors: str = "strict", limits: ParseLimits = DEFAULT_LIMITS,
                     keep: FrozenSet[str] = KEEP_NOTHING) -> ParsedDocument:
    """Parse a WebVTT or SubRip transcript into one timed section per cue.

    Args:
        doc: The raw document (``text/vtt`` or ``application/x-subrip``).
        errors: Decoding policy of the text (see :func:`~beam_chunking.parsers.decode.decode_text`).
        limits: ``limits.max_rows`` caps the cue count (default 1,000,000).
        keep: Unused (nothing is dropped from transcripts); accepted for a uniform signature.

    Raises:
        ParseError: the file is not a valid transcript of its format (the reader's reason).
    """
    text, replaced = decode_text(doc.data, uri=doc.uri, document_id=doc.id, errors=errors)
    kind = "WebVTT" if doc.content_type == WEBVTT else "SubRip"
    reader = _vtt_cues if doc.content_type == WEBVTT else _srt_cues
    builder = TextBuilder(separator="\n", max_chars=limits.max_text_chars)
    count = 0
    try:
        for start, end, cue_text, speaker in reader(text.replace("\r\n", "\n").replace("\r", "\n")):
            count += 1
            if count > limits.max_rows:
                raise ParseError(f"{kind}: more than max_rows={limits.max_rows} cues; raise the limit to parse it",
                                 document_id=doc.id, uri=doc.uri)
            line = " ".join(_TAG.sub("", cue_text).split())
            meta = {"timestamp_seconds": start, "timestamp_end_seconds": end}
            if speaker:
                meta["speaker"] = speaker
            builder.add(line, kind="cue", metadata=meta)
    except (ParseError, MissingExtra):
        raise
    except Exception as exc:  # each reader has its own error classes; all mean a malformed file
        raise ParseError(f"{kind}: not a valid transcript ({type(exc).__name__}: {' '.join(str(exc).split())[:200]})",
                         document_id=doc.id, uri=doc.uri) from None
    meta = {"cues": count}
    if replaced:
        meta["decode_replacements"] = replaced
    return builder.build(doc, meta)
