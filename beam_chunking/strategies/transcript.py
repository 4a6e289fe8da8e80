"""Transcripts: consecutive cues grouped by time window and size, with their timestamps."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Sequence

from beam_chunking.errors import ConfigError
from beam_chunking.strategies.base import Chunker, make_chunk, require_positive, section_metadata
from beam_chunking.strategies.recursive import RecursiveChunker
from beam_chunking.types import Chunk, ParsedDocument, Section

_TIMED = "timestamp_seconds"


@dataclass(frozen=True)
class TranscriptChunker(Chunker):
    """Chunks of consecutive transcript cues, at most ``window_seconds`` long and
    ``max_chunk_size`` characters.

    It reads the timed sections of the transcript parser (WebVTT, SubRip). A chunk is the
    exact span from its first cue to its last and carries ``timestamp_seconds`` (the first
    cue's start) and ``timestamp_end_seconds`` (the last cue's end), the ``speakers`` heard
    in it when the transcript names them, and no page keys. A cue longer than
    ``max_chunk_size`` is cut like ``recursive`` would cut it, every piece keeping the cue's
    times. A last group shorter than ``min_chunk_size`` joins the one before when the two fit
    ``max_chunk_size``. Sections without times (a document that is not a transcript) are
    chunked by ``recursive`` at the same size.

    Args:
        window_seconds: Longest stretch of time per chunk, in seconds, from the first cue's
            start to the last cue's end. Default 60.
        max_chunk_size: Ceiling per chunk, in characters. Default 1000.
        min_chunk_size: A shorter last group of cues joins the previous chunk when it
            fits, in characters; 0 turns it off. Default 100.

    Example:
        >>> TranscriptChunker(window_seconds=30).name
        'transcript'
    """

    name = "transcript"
    window_seconds: float = 60.0
    max_chunk_size: int = 1000
    min_chunk_size: int = 100

    def __post_init__(self) -> None:
        w = self.window_seconds
        if isinstance(w, bool) or not isinstance(w, (int, float)) or w <= 0:
            raise ConfigError(f"TranscriptChunker.window_seconds must be a positive number of seconds, got {w!r}",
                              field="window_seconds")
        require_positive("TranscriptChunker", "max_chunk_size", self.max_chunk_size)
        require_positive("TranscriptChunker", "min_chunk_size", self.min_chunk_size, minimum=0)
        object.__setattr__(self, "_long", RecursiveChunker(max_chunk_size=self.max_chunk_size, overlap=0))

    def chunk_document(self, doc: ParsedDocument) -> List[Chunk]:
        """Return the chunks of ``doc`` in document order."""
        chunks: List[Chunk] = []
        groups: List[List[Section]] = []
        for section in doc.sections:
            if _TIMED not in section.metadata:
                self._flush(doc, groups, chunks)
                for s, e, _ in self._long.section_spans(doc.text, section.start, section.end):
                    chunks.append(make_chunk(doc, index=len(chunks), start=s, end=e, token_count=None,
                                             metadata=section_metadata(doc, section)))
                continue
            if section.end - section.start > self.max_chunk_size:
                self._flush(doc, groups, chunks)
                for s, e, _ in self._long.section_spans(doc.text, section.start, section.end):
                    chunks.append(make_chunk(doc, index=len(chunks), start=s, end=e, token_count=None,
                                             metadata=self._metadata(doc, [section])))
                continue
            if groups and self._fits(doc, groups[-1] + [section]):
                groups[-1].append(section)
            else:
                groups.append([section])
        self._flush(doc, groups, chunks)
        return chunks

    def _fits(self, doc: ParsedDocument, cues: Sequence[Section]) -> bool:
        seconds = cues[-1].metadata.get("timestamp_end_seconds", cues[-1].metadata[_TIMED]) - cues[0].metadata[_TIMED]
        return seconds <= self.window_seconds and cues[-1].end - cues[0].start <= self.max_chunk_size

    def _flush(self, doc: ParsedDocument, groups: List[List[Section]], chunks: List[Chunk]) -> None:
        if len(groups) > 1 and groups[-1][-1].end - groups[-1][0].start < self.min_chunk_size \
                and groups[-1][-1].end - groups[-2][0].start <= self.max_chunk_size:
            groups[-2].extend(groups.pop())
        for cues in groups:
            chunks.append(make_chunk(doc, index=len(chunks), start=cues[0].start, end=cues[-1].end, token_count=None,
                                     metadata=self._metadata(doc, cues)))
        groups.clear()

    @staticmethod
    def _metadata(doc: ParsedDocument, cues: Sequence[Section]) -> Dict[str, Any]:
        meta = section_metadata(doc, cues[0])
        meta.pop("speaker", None)
        meta.pop("chunk_kind", None)  # "cue" describes one section, not a group of them
        meta["timestamp_seconds"] = cues[0].metadata[_TIMED]
        meta["timestamp_end_seconds"] = cues[-1].metadata.get("timestamp_end_seconds", meta["timestamp_seconds"])
        speakers = list(dict.fromkeys(c.metadata["speaker"] for c in cues if c.metadata.get("speaker")))
        if speakers:
            meta["speakers"] = speakers
        return meta
