"""Deterministic identifiers: documents, chunks and strategy fingerprints.

Ids never depend on time, randomness, process, runner or ``PYTHONHASHSEED``: a retried bundle
or a re-run produces the same ids, so downstream upserts replace rather than duplicate.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
from typing import Any


_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def normalize_uri(path: str) -> str:
    """A local path (or glob) made absolute and normalised (``./a/../b/x`` -> ``/cwd/b/x``);
    URIs with a scheme (``gs://...``) stay as they are. Documents get their URI, and so their
    id, from this form, whatever spelling named them."""
    if _SCHEME.match(path):
        return path
    trailing = "/" if path.endswith("/") else ""
    return os.path.normpath(os.path.abspath(path)) + trailing


def uri_bytes(uri: str) -> bytes:
    """The bytes a URI or path stands for: its UTF-8, where a local file name that is not
    valid UTF-8 (which Python hands over with its undecodable bytes as lone surrogates,
    ``\\udcff`` for ``0xff``) gets its original bytes back. Never raises."""
    try:
        return uri.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate no file name decodes to; still one fixed encoding
        return uri.encode("utf-8", "surrogatepass")


def display_uri(path: str) -> str:
    """``path`` as valid text, for the tables and messages: unchanged when it is valid
    Unicode; otherwise each byte it stands for that is not valid UTF-8 becomes ``%XX``
    (``/in/bad\\udcff.txt`` -> ``/in/bad%FF.txt``). Parquet, Beam's coders and JSON all
    refuse lone surrogates, so such a name could otherwise not be recorded at all."""
    try:
        path.encode("utf-8")
        return path
    except UnicodeEncodeError:
        pass
    out = []
    for char in path:
        if "\ud800" <= char <= "\udfff":
            out.append("".join(f"%{b:02X}" for b in uri_bytes(char)))
        else:
            out.append(char)
    return "".join(out)


def document_id(uri: str) -> str:
    """Return the id of the document at ``uri``: 16 hex digits of SHA-256 over the URI's
    bytes (:func:`uri_bytes`: its UTF-8, or a local name's raw bytes when it is not valid
    UTF-8, so ``bad\\xff.txt`` and a file really named ``bad%FF.txt`` keep distinct ids).

    The same URI always gives the same id; content changes keep the id (re-ingest with
    ``overwrite=True`` to replace the old chunks).

    Example:
        >>> document_id("examples/intro.md")
        '...'
    """
    return hashlib.sha256(uri_bytes(uri)).hexdigest()[:16]


def chunk_id(document_id: str, start: int, ordinal: int = 0) -> str:
    """Return ``f"{document_id}:{start:010d}"``, plus ``#ordinal`` when ``ordinal`` > 0."""
    base = f"{document_id}:{start:010d}"
    return f"{base}#{ordinal}" if ordinal else base


def _canonical(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            "__class__": type(value).__qualname__,
            **{f.name: _canonical(getattr(value, f.name)) for f in dataclasses.fields(value)
               if f.compare and not (f.kw_only and getattr(value, f.name) == f.default)},
        }
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return repr(value)


def fingerprint(config: Any) -> str:
    """Return 12 hex digits identifying a strategy (its class and every compared field).

    Two strategies with equal configuration share a fingerprint in every process, so a chunk
    table records exactly which configuration produced each chunk. Options every strategy
    shares (keyword-only fields such as ``page_boundaries``) count only when they differ from
    their default, so adding one leaves the fingerprints of existing configurations as they were.
    """
    payload = json.dumps(_canonical(config), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:12]
