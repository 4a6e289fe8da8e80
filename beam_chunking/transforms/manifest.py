"""The output's manifest: the one small file that says which Parquet files make up each table.

An output folder holds ``_manifest.json`` and, per table, one folder per run::

    OUTPUT/_manifest.json
    OUTPUT/chunks/run-20261201T081500Z-1a2b3c4d/part-<id>.parquet
    OUTPUT/documents/run-20261201T081500Z-1a2b3c4d/part-<id>.parquet

A run writes its files into its own ``run-...`` folders and, once every file is complete,
replaces the manifest (written to a temporary name, then renamed: one atomic step on a local
disk and on object stores). The manifest is the table: read through it
(:func:`table_files`, :func:`read_table`) and you see the last committed run, whole, even
while another run is writing or after one crashed. A plain glob over ``OUTPUT/chunks/``
also sees the files of a run in flight until that run commits or the next one cleans up.
"""
from __future__ import annotations

import io
import json
import posixpath
import time
import uuid
from typing import Dict, List, Optional

from apache_beam.io.filesystems import FileSystems

from beam_chunking.transforms._files import require_filesystem

#: The manifest's file name inside the output folder.
MANIFEST = "_manifest.json"
#: The tables every output holds (``parents`` is empty unless a strategy makes parents;
#: ``changes`` says what changed since the previous run, see
#: :mod:`beam_chunking.transforms.incremental`).
TABLES = ("chunks", "documents", "parents", "changes")
#: Version of the manifest layout written by this package.
MANIFEST_FORMAT = 2
#: Prefix of every run folder.
RUN_PREFIX = "run-"


def new_run_id() -> str:
    """A run id that sorts by start time: ``run-YYYYmmddTHHMMSSmmmZ-<8 hex>`` (UTC, milliseconds)."""
    now = time.time()
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now)) + f"{int(now * 1000) % 1000:03d}Z"
    return f"{RUN_PREFIX}{stamp}-{uuid.uuid4().hex[:8]}"


def run_folder(output: str, table: str, run_id: str) -> str:
    """The folder that holds ``table``'s files of run ``run_id``."""
    return f"{output}/{table}/{run_id}"


def join(output: str, relative: str) -> str:
    """Resolve a manifest path against the output folder (absolute paths stay as they are)."""
    if relative.startswith("/") or FileSystems.get_scheme(relative):
        return relative
    return f"{output}/{relative}"


def relative_to(output: str, path: str) -> str:
    """``path`` relative to ``output`` (manifests name files relatively, so an output can move)."""
    prefix = output.rstrip("/") + "/"
    return path[len(prefix):] if path.startswith(prefix) else path


def read_manifest(output: str) -> Optional[dict]:
    """The output's manifest, or ``None`` when it has none.

    Raises:
        ValueError: The manifest exists but is not valid JSON with a ``tables`` mapping.
    """
    require_filesystem(output)
    path = f"{output.rstrip('/')}/{MANIFEST}"
    try:
        if not FileSystems.exists(path):
            return None
        with FileSystems.open(path) as f:
            raw = f.read()
    except FileNotFoundError:
        return None
    try:
        manifest = json.loads(raw.decode("utf-8"))
    except ValueError as exc:
        raise ValueError(f"{path}: not a valid manifest ({exc})") from exc
    if not isinstance(manifest, dict) or not isinstance(manifest.get("tables"), dict):
        raise ValueError(f"{path}: not a valid manifest (no 'tables' mapping)")
    return manifest


def table_files(output: str, table: str, manifest: Optional[dict] = None) -> List[str]:
    """Full paths of the files that make up ``table`` in the output's committed run.

    Raises:
        FileNotFoundError: The output has no manifest (no run committed there).
        KeyError: The manifest has no such table.
    """
    output = output.rstrip("/")
    manifest = manifest if manifest is not None else read_manifest(output)
    if manifest is None:
        raise FileNotFoundError(f"{output}: no {MANIFEST}; no run has been committed there")
    return [join(output, p) for p in manifest["tables"][table]]


def read_table(output: str, table: str = "chunks", columns: Optional[List[str]] = None):
    """Read one table of a committed output into a ``pyarrow.Table`` through its manifest.

    Args:
        output: The output folder (local path or ``gs://``).
        table: ``"chunks"`` (default), ``"documents"``, ``"parents"`` or ``"changes"``.
        columns: Columns to read (a nested field as ``"metadata.key"``); default all.

    Raises:
        ValueError: a file of the table has no column of that name (naming it and the file).
    """
    import pyarrow as pa

    parts = []
    for path in table_files(output, table):
        with FileSystems.open(path) as f:
            parts.append(_read_file(path, io.BytesIO(f.read()), columns))
    return pa.concat_tables(parts) if parts else None


def _read_file(path: str, data, columns: Optional[List[str]]):
    import pyarrow.parquet as pq

    parquet = pq.ParquetFile(data)
    names = parquet.schema_arrow.names
    if columns is not None and not all(c in names for c in columns):
        missing = [c for c in columns if c.split(".")[0] not in names]
        if missing:
            raise ValueError(f"{path}: no column {', '.join(missing)} (it has {', '.join(names)})")
        return pq.read_table(data, columns=columns)  # a nested field's path ('metadata.k')
    # One file's own reader: pq.read_table goes through pyarrow.dataset, whose import (with
    # pyarrow.compute) took 60-75 ms, as measured in bench/README.md (start-up).
    return parquet.read(columns=columns)


def manifest_json(run_id: str, tables: Dict[str, List[str]], rows: Dict[str, int],
                  fields: Optional[Dict[str, str]] = None) -> bytes:
    """The bytes of a manifest naming ``tables`` (paths relative to the output), with extra
    top-level ``fields`` (``options_fingerprint``, which an incremental run compares)."""
    return json.dumps({
        **(fields or {}), "format": MANIFEST_FORMAT, "run_id": run_id,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "tables": {t: sorted(files) for t, files in tables.items()}, "rows": rows,
    }, indent=2, sort_keys=True).encode("utf-8")


def manifest_run(manifest: Optional[dict]) -> Optional[str]:
    """The run id a manifest names (``None`` for none, or for a manifest of the old layout)."""
    return (manifest or {}).get("run_id")


def basename(path: str) -> str:
    """The last component of a local or remote path."""
    return posixpath.basename(path.rstrip("/"))
