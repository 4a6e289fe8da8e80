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


def document_id(uri: str) -> str:
    """Return the id of the document at ``uri``: 16 hex digits of SHA-256 over the URI.

    The same URI always gives the same id; content changes keep the id (re-ingest with
    ``overwrite=True`` to replace the old chunks).

    Example:
        >>> document_id("examples/intro.md")
        '...'
    """
    return hashlib.sha256(uri.encode("utf-8")).hexdigest()[:16]


def chunk_id(document_id: str, start: int, ordinal: int = 0) -> str:
    """Return ``f"{document_id}:{start:010d}"``, plus ``#ordinal`` when ``ordinal`` > 0."""
    base = f"{document_id}:{start:010d}"
    return f"{base}#{ordinal}" if ordinal else base


def _canonical(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            "__class__": type(value).__qualname__,
            **{f.name: _canonical(getattr(value, f.name)) for f in dataclasses.fields(value) if f.compare},
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
    table records exactly which configuration produced each chunk.
    """
    payload = json.dumps(_canonical(config), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:12]
