"""ReadDocuments: file pattern -> :class:`Document` (local paths, ``gs://``, any Beam FileSystem)."""
from __future__ import annotations

from typing import Any, Dict, Optional

import apache_beam as beam
from apache_beam.io import fileio

from beam_chunking.ids import document_id
from beam_chunking.parsers.compressed import gunzip, is_gzip
from beam_chunking.parsers.detect import detect_content_type
from beam_chunking.parsers.limits import DEFAULT_MAX_BYTES
from beam_chunking.transforms._common import NAMESPACE, StageFn
from beam_chunking.types import Document



class _ReadFn(StageFn):
    stage = "read"

    def __init__(self, max_bytes: int, metadata: Dict[str, Any]):
        self.max_bytes = max_bytes
        self.metadata = metadata
        self.documents = beam.metrics.Metrics.counter(NAMESPACE, "documents")
        self.bytes = beam.metrics.Metrics.counter(NAMESPACE, "bytes")

    def handle(self, readable):
        uri = readable.metadata.path
        self.documents.inc()
        size = readable.metadata.size_in_bytes
        if size is not None and size > self.max_bytes:
            raise ValueError(f"{uri}: {size} bytes exceeds max_bytes={self.max_bytes}")
        with readable.open(compression_type=beam.io.filesystem.CompressionTypes.UNCOMPRESSED) as f:
            data = f.read(self.max_bytes + 1)
        if len(data) > self.max_bytes:
            raise ValueError(f"{uri}: larger than max_bytes={self.max_bytes}")
        self.bytes.inc(len(data))
        name = uri
        if is_gzip(data):
            name, data = gunzip(uri, data, self.max_bytes)
        yield Document(document_id(uri), uri, data, detect_content_type(name, data), dict(self.metadata))


class ReadDocuments(beam.PTransform):
    """Match ``pattern`` and read every file as a :class:`Document`.

    Gzip files (by their magic bytes) are inflated, capped at ``max_bytes``, and typed by
    the name inside (``notes.md.gz`` is Markdown); the document keeps the ``.gz`` URI.
    Files that cannot be read become failures (stage ``read``) that flow on with the
    documents; they are never dropped.

    Args:
        pattern: A glob understood by Beam's filesystems (``docs/**/*.md``, ``gs://b/x/*``).
        max_bytes: Largest document read (and largest inflated ``.gz``), in bytes. Default 256 MiB.
        metadata: Tags copied onto every document and from there onto every chunk.
        allow_empty: Whether a pattern matching nothing is allowed. Default ``False``.
    """

    def __init__(self, pattern: str, *, max_bytes: int = DEFAULT_MAX_BYTES,
                 metadata: Optional[Dict[str, Any]] = None, allow_empty: bool = False):
        super().__init__()
        self.pattern = pattern
        self.max_bytes = max_bytes
        self.metadata = dict(metadata or {})
        self.allow_empty = allow_empty

    def expand(self, pbegin):
        empty = fileio.EmptyMatchTreatment.ALLOW if self.allow_empty else fileio.EmptyMatchTreatment.DISALLOW
        files = (
            pbegin
            | "MatchFiles" >> fileio.MatchFiles(self.pattern, empty_match_treatment=empty)
            | "ReadMatches" >> fileio.ReadMatches(skip_directories=True)
        )
        return files | "ReadDocument" >> beam.ParDo(_ReadFn(self.max_bytes, self.metadata))

    def display_data(self):
        return {"pattern": self.pattern, "max_bytes": self.max_bytes}
