"""Safety caps that bound what one document may cost a parser.

Every cap fails the one document with a :class:`~beam_chunking.errors.ParseError` that names
the cap and how to raise it; the pipeline goes on with the other documents.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Mapping, Optional

from beam_chunking.errors import ConfigError

MIB = 1024 * 1024

#: Default cap on one document's size as read (and inflated from ``.gz``), in bytes (256 MiB).
DEFAULT_MAX_BYTES = 256 * MIB


@dataclass(frozen=True)
class ParseLimits:
    """Caps applied while parsing one document.

    Args:
        max_uncompressed_bytes: Largest total uncompressed size of a zip container's members
            (DOCX, PPTX, XLSX) or of an Outlook message's bodies and attachments, in bytes.
            Default 512 MiB. (A ``.gz`` input is inflated when it is read, capped by
            ``ReadDocuments(max_bytes=...)``, default 256 MiB, not by this limit.)
        max_compression_ratio: Largest uncompressed/compressed ratio of a zip container as a
            whole (once it inflates past 1 MiB) and of each member: the members over it may
            inflate to 1 MiB in all. Default 200 (real Office files stay under 50; zip bombs
            reach thousands).
        max_zip_members: Most members a zip container may hold. Default 10,000.
        max_pages: Most PDF pages or presentation slides. Default 5,000.
        max_rows: Most data rows over all sheets of a CSV, TSV or XLSX. Default 1,000,000.
        max_attachment_depth: How deep e-mail attachments (messages inside messages) are
            parsed. Default 3.
        max_text_chars: Most characters of text a parser may build from one document (PDF,
            HTML, Office, tabular, e-mail, transcripts; plain text is bounded by ``max_bytes``).
            Default 50,000,000: a 1,000-page book is about 3 million.
    """

    max_uncompressed_bytes: int = 512 * MIB
    max_compression_ratio: float = 200.0
    max_zip_members: int = 10_000
    max_pages: int = 5_000
    max_rows: int = 1_000_000
    max_attachment_depth: int = 3
    max_text_chars: int = 50_000_000

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise ConfigError(f"ParseLimits.{f.name} must be a positive number, got {value!r}", field=f.name)

    @classmethod
    def from_mapping(cls, data: Optional[Mapping[str, Any]]) -> "ParseLimits":
        """Build limits from a spec mapping, rejecting unknown keys by name."""
        data = dict(data or {})
        known = {f.name for f in fields(cls)}
        for key in data:
            if key not in known:
                raise ConfigError(f"unknown limit {key!r} (known: {', '.join(sorted(known))})", field=key)
        return cls(**data)


DEFAULT_LIMITS = ParseLimits()
