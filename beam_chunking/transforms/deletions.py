"""The guard against a run that would delete most of an output by mistake.

An ``overwrite`` or ``incremental`` run replaces the previous output: documents the input no
longer matches leave it (an incremental run lists them as ``deleted`` in the changes table,
and a downstream store drops their chunks). A mistyped pattern (``docs/md/*`` for
``docs/**``) would make that most of the index. :func:`check_deletions` counts, before any
work, the previous documents that the input no longer matches, and refuses the run when they
are more than ``max_deletions`` allows.
"""
from __future__ import annotations

from typing import Any

from beam_chunking.config import allowed
from beam_chunking.errors import ConfigError
from beam_chunking.ids import document_id
from beam_chunking.transforms.manifest import read_manifest, read_table
from beam_chunking.transforms.read import matched_files


def check_deletions(config: Any) -> None:
    """Refuse a run that would delete more of the previous output's documents than
    ``config.max_deletions`` allows (see the module doc). Costs a listing of the input and a
    read of the previous documents' ids; nothing when the run replaces no output or any
    number may go (``"100%"``).

    Raises:
        ConfigError: one line with the count, the share, an example and the flag that allows it.
    """
    if not (config.overwrite or config.incremental) or config.max_deletions == "100%":
        return
    try:
        manifest = read_manifest(config.output)
    except ValueError:  # a damaged manifest names no documents; the run reports it
        return
    if manifest is None or "documents" not in manifest["tables"]:
        return
    table = read_table(config.output, "documents", columns=["document_id", "uri"])
    if table is None or table.num_rows == 0:
        return
    previous = dict(zip(table.column("document_id").to_pylist(), table.column("uri").to_pylist()))
    matched = matched_files(config.input, config.exclude)
    current = {document_id(meta.path) for meta in matched}
    gone = [doc for doc in previous if doc not in current]
    if len(gone) <= allowed(config.max_deletions, len(previous)):
        return
    flag = "--incremental" if config.incremental else "--overwrite"
    share = 100 * len(gone) / len(previous)
    raise ConfigError(
        f"{flag}: this run would delete {len(gone)} of the {len(previous)} documents of {config.output} "
        f"({share:.0f}%; such as {previous[gone[0]]}), over --max-deletions {config.max_deletions}: the input "
        f"matches {len(matched)} file(s); check --input, or pass --max-deletions {len(gone)} (or 100%) "
        f"to allow it", field="max_deletions")
