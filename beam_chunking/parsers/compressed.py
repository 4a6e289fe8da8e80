"""Transparent decompression of ``.gz`` inputs, bounded so a gzip bomb cannot exhaust memory.

Beam's own ``.gz`` reading has failed on files whose size is unknown; reading the raw
bytes and inflating them here avoids that path and lets the cap apply to the inflated size.
"""
from __future__ import annotations

import gzip
import io
import zlib
from typing import Tuple

from beam_chunking.errors import ParseError

GZIP_MAGIC = b"\x1f\x8b"


def is_gzip(data: bytes) -> bool:
    """Whether ``data`` is gzip (by its magic bytes; the ``.gz`` name alone is not trusted)."""
    return data.startswith(GZIP_MAGIC)


def gunzip(uri: str, data: bytes, max_bytes: int) -> Tuple[str, bytes]:
    """Return ``(inner_name, inflated_bytes)`` for a gzip file.

    ``inner_name`` is ``uri`` without its ``.gz`` suffix, so the content type of what is
    inside can be detected (``report.pdf.gz`` -> ``report.pdf``).

    Args:
        uri: The file's URI (for the inner name and error messages).
        data: The gzip bytes (one or more members).
        max_bytes: Largest inflated size accepted, in bytes.

    Raises:
        ParseError: truncated or corrupt data, or more than ``max_bytes`` once inflated.
    """
    inner = uri[:-3] if uri.lower().endswith(".gz") else uri
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as f:
            out = f.read(max_bytes + 1)
    except EOFError:
        raise ParseError("gzip: the file is truncated (compressed stream ends early)", uri=uri) from None
    except (gzip.BadGzipFile, zlib.error, OSError) as exc:
        raise ParseError(f"gzip: corrupt compressed data ({exc})", uri=uri) from None
    if len(out) > max_bytes:
        raise ParseError(
            f"gzip: inflates to more than max_bytes={max_bytes} bytes (a gzip bomb or an oversized "
            "file; raise max_bytes if it is genuine)", uri=uri)
    return inner, out
