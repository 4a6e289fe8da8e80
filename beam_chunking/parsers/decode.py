"""Decoding bytes to text: UTF-8 (with or without BOM) and UTF-16 with a BOM.

Invalid bytes never pass silently. With ``errors="strict"`` (the default) the document fails
with a :class:`~beam_chunking.errors.DecodeError` naming the byte offset; with
``errors="replace"`` each invalid sequence becomes U+FFFD and the number of replacements is
returned so it lands in the documents table.
"""
from __future__ import annotations

import codecs
import threading
from typing import Optional, Tuple

from beam_chunking.errors import ConfigError, DecodeError

ERROR_POLICIES = ("strict", "replace")

_COUNTER = threading.local()


def _count_replacement(exc: UnicodeDecodeError):
    _COUNTER.count += 1
    return "\ufffd", exc.end


# One handler for the process; registering one per call would grow codecs' registry forever.
codecs.register_error("beam_chunking.count", _count_replacement)


def decode_text(data: bytes, *, uri: str = "", document_id: Optional[str] = None, errors: str = "strict") -> Tuple[str, int]:
    """Return ``(text, replacements)`` for a document's bytes.

    Args:
        data: Raw bytes.
        uri: For error messages.
        document_id: For error messages.
        errors: ``"strict"`` (fail on invalid bytes) or ``"replace"`` (U+FFFD, counted).

    Raises:
        DecodeError: invalid bytes under ``errors="strict"``; the message names the offset.
    """
    if errors not in ERROR_POLICIES:
        raise ConfigError(f"decode errors={errors!r} must be one of {ERROR_POLICIES}")
    if data.startswith(codecs.BOM_UTF8):
        encoding, body, skipped = "utf-8", data[3:], 3
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encoding, body, skipped = "utf-16", data, 0
    else:
        encoding, body, skipped = "utf-8", data, 0
    try:
        return body.decode(encoding), 0
    except UnicodeDecodeError as exc:
        if errors == "strict":
            raise DecodeError(
                f"invalid {encoding.upper()} at byte offset {exc.start + skipped} "
                f"({body[exc.start:exc.end]!r}: {exc.reason}); fix the file or run with "
                "decode_errors='replace' to keep it with U+FFFD replacements",
                document_id=document_id,
                uri=uri,
            ) from None
    _COUNTER.count = 0
    text = body.decode(encoding, errors="beam_chunking.count")
    return text, _COUNTER.count
