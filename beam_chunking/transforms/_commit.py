"""Publishing a run: check its files, switch the manifest, then remove what no manifest names.

The steps, each safe to repeat (the runner may retry the commit):

1. Every file that a succeeded bundle reported is opened and its Parquet footer read: a
   missing or truncated file fails the commit, and the previous output stays as it was.
2. Tables that received no row get one empty file (so readers always find the schema);
   with a fixed shard count, missing shards get empty files, so each table has exactly N.
3. The new manifest is written under a temporary name and renamed over ``_manifest.json``.
   Until that rename, readers of the manifest see the previous run whole; after it, the new
   one.
4. Only then are the previous run's files deleted, with the folders (and temporary
   manifests) of runs that started before this one and never committed (crashed runs), the
   files of this run's own failed or duplicated bundle attempts, and the old layout's shards.
   Nothing else under the output is touched: a file of the user's under ``OUTPUT/chunks/``
   stays, and so does a folder there unless its name is a run id.

Two more clean-ups keep a failed run from failing the next one (a full disk, say):
:func:`sweep`, when a run has taken the lease and before it writes, removes the folders of
earlier runs that the manifest does not name; :func:`discard`, when a run fails, removes its
own folders unless its commit had switched the manifest to it. On object stores every
clean-up lists the objects under a folder (a ``**`` match: ``*`` does not cross ``/``) and
deletes them one by one.
"""
from __future__ import annotations

import functools
import glob
import logging
import os
import posixpath
import re
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from typing import Dict, Iterable, List, Optional, Tuple

import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems

from beam_chunking.transforms._shards import ShardRef
from beam_chunking.transforms.lease import LEASE, release as release_lease, verify as verify_lease
from beam_chunking.transforms.manifest import (
    MANIFEST, RUN_PREFIX, TABLES, basename, join, manifest_json, manifest_run, read_manifest, relative_to,
    run_folder,
)

_LOG = logging.getLogger(__name__)
#: Shards of the old layout (``chunks/part-00000-of-00002.parquet``) and its staging folders.
_LEGACY_SHARD = re.compile(r"part-\d{5}-of-\d{5}\.parquet$")
#: A run id inside a file name (see :func:`~beam_chunking.transforms.manifest.new_run_id`).
_RUN_ID = re.compile(RUN_PREFIX + r"\d{8}T\d{9}Z-[0-9a-f]{8}")


def _rows_in(path: str) -> int:
    with FileSystems.open(path) as f:
        return pq.ParquetFile(f).metadata.num_rows


def _empty_file(folder: str, name: str, schema: pa.Schema, codec: str) -> str:
    path = f"{folder}/{name}"
    with FileSystems.create(path) as f:
        pq.write_table(schema.empty_table(), f, compression=codec)
    return path


def _table_files(refs: List[ShardRef], folder: str, schema: pa.Schema, codec: str, num_shards: int) -> List[str]:
    files = sorted(r.path for r in refs)
    if len(set(files)) != len(files):
        raise RuntimeError(f"a file was reported twice under {folder}")
    if num_shards:
        seen = [r.shard for r in refs]
        if len(set(seen)) != len(seen):
            raise RuntimeError(f"a shard was reported twice under {folder}: {sorted(seen)}")
        files += [_empty_file(folder, f"part-{i:05d}-empty.parquet", schema, codec)
                  for i in range(num_shards) if i not in seen]
    elif not files:
        files.append(_empty_file(folder, "part-empty.parquet", schema, codec))
    return sorted(files)


def _list(pattern: str) -> List[str]:
    try:
        return [m.path for m in FileSystems.match([pattern])[0].metadata_list]
    except Exception:  # a folder that does not exist matches nothing
        return []


def _remote(output: str) -> bool:
    return FileSystems.get_scheme(output) is not None


def _stale_runs(output: str, table: str, run_id: str) -> List[str]:
    """Run folders of ``table`` that started before ``run_id`` (their ids sort lower); only
    folders named exactly like a run id, so a user's ``chunks/run-notes/`` is never one."""
    base = f"{output}/{table}"
    if not _remote(output):
        names = [n for n in os.listdir(base) if os.path.isdir(os.path.join(base, n))] if os.path.isdir(base) else []
    else:
        names = {p[len(base) + 1:].split("/", 1)[0] for p in _list(f"{base}/{RUN_PREFIX}**")}
    return [f"{base}/{n}" for n in sorted(names) if _RUN_ID.fullmatch(n) and n < run_id]


def _expanded(output: str, folders: Iterable[str]) -> List[str]:
    """What to delete to remove ``folders``: the folders themselves on a local disk, every
    object under them on an object store (Beam deletes only a folder's direct children)."""
    if not _remote(output):
        return [f for f in folders if os.path.isdir(f)]
    return [p for f in folders for p in _list(f.rstrip("/") + "/**")]


def _legacy(output: str) -> List[str]:
    """Shards and staging folders of the old layout, which had no run folders."""
    found = [p for table in TABLES for p in _list(f"{output}/{table}/part-*.parquet")
             if _LEGACY_SHARD.search(basename(p)) and basename(os.path.dirname(p)) == table]
    if not _remote(output):
        found += glob.glob(os.path.join(output, ".staging-*"))
    else:
        found += _list(f"{output}/.staging-**")  # the staged files lay two levels down
    return found


def _stale_temporaries(output: str, run_id: str) -> List[str]:
    """Temporary manifests and lease files of runs that started before ``run_id`` and were
    killed before they could rename or remove them."""
    found = _list(f"{output}/{MANIFEST}.{RUN_PREFIX}*.tmp") + _list(f"{output}/{LEASE}.*")
    owners = ((p, _RUN_ID.search(basename(p))) for p in found)
    return [p for p, owner in owners if owner and owner.group(0) < run_id]


def _delete(paths: Iterable[str]) -> None:
    paths = sorted(set(paths))
    if not paths:
        return
    try:
        FileSystems.delete(paths)
    except Exception as exc:  # garbage left now is removed by the next run
        _LOG.warning("could not remove %d old files or folders: %s", len(paths), exc)


def _garbage(output: str, run_id: str, previous: Optional[dict], committed: List[str]) -> List[str]:
    # Files of this run that no succeeded bundle reported: attempts that failed or were
    # duplicated, left behind by their workers.
    keep = set(committed)
    garbage = [p for table in TABLES for p in _list(run_folder(output, table, run_id) + "/*") if p not in keep]
    folders = [folder for table in TABLES for folder in _stale_runs(output, table, run_id)]
    garbage += _expanded(output, folders)
    if previous is not None and manifest_run(previous) != run_id:
        named = [join(output, p) for files in previous["tables"].values() for p in files if isinstance(p, str)]
        outside = {path for path in named if not owned(output, path)}
        if outside:
            # An output copied from elsewhere, or a manifest someone wrote: what it names
            # outside this output's table folders belongs to someone else.
            _LOG.warning("the previous manifest names %d file(s) outside %s's table folders, such as %s: "
                         "left in place", len(outside), output, min(outside))
        garbage += [path for path in named if path not in outside
                    and f"/{run_id}/" not in path and not any(path.startswith(f + "/") for f in folders)]
    return garbage + _legacy(output) + _stale_temporaries(output, run_id)


def owned(output: str, path: str) -> bool:
    """Whether ``path`` lies inside one of ``output``'s table folders (``chunks/`` ...) once
    ``..`` and, on a local disk, links are resolved: the only files a commit may delete."""
    if _remote(output):
        scheme = FileSystems.get_scheme(output)
        if FileSystems.get_scheme(path) != scheme:
            return False
        root = posixpath.normpath(output[len(scheme) + 3:].rstrip("/"))
        where = posixpath.normpath(path[len(scheme) + 3:])
        return any(where.startswith(f"{root}/{table}/") for table in TABLES)
    if FileSystems.get_scheme(path) is not None:
        return False
    where = os.path.realpath(path)
    return where.startswith(_table_roots(output, os.getcwd()))


@functools.lru_cache(maxsize=8)
def _table_roots(output: str, cwd: str) -> Tuple[str, ...]:
    """The resolved table folders of a local output, each ending with a separator (resolved
    once per output, not once per file a manifest names)."""
    return tuple(os.path.realpath(os.path.join(output, table)) + os.sep for table in TABLES)


def _named_folders(output: str, manifest: Optional[dict]) -> set:
    return {posixpath.dirname(join(output, p)) for files in (manifest or {}).get("tables", {}).values()
            for p in files}


def sweep(output: str, run_id: str) -> int:
    """Before run ``run_id`` writes (it holds the lease): remove the folders of runs that
    started before it and that the manifest does not name (runs that failed or were killed),
    and their temporary files, so that their bytes do not take the space this run needs.

    Returns:
        How many files or folders were removed (0 when nothing was left behind).
    """
    try:
        manifest = read_manifest(output)
    except ValueError:  # a damaged manifest: leave everything for the commit to judge
        return 0
    named = _named_folders(output, manifest)
    folders = [f for table in TABLES for f in _stale_runs(output, table, run_id) if f not in named]
    garbage = _expanded(output, folders) + _stale_temporaries(output, run_id)
    _delete(garbage)
    return len(set(garbage))


def discard(output: str, run_id: str) -> int:
    """Remove the files of run ``run_id``, which failed, unless its commit switched the
    manifest to it (then they are the output). The lease is left alone.

    Returns:
        How many files or folders were removed.
    """
    try:
        manifest = read_manifest(output)
    except ValueError:
        manifest = None
    if manifest_run(manifest) == run_id:
        return 0
    named = _named_folders(output, manifest)  # an old-layout manifest may name odd places
    folders = [f for f in (run_folder(output, table, run_id) for table in TABLES) if f not in named]
    garbage = _expanded(output, folders) + _list(f"{output}/{MANIFEST}.{run_id}.tmp")
    _delete(garbage)
    return len(set(garbage))


def commit(output: str, run_id: str, refs: Iterable[ShardRef], schemas: Dict[str, pa.Schema], codec: str,
           num_shards: int = 0, fields: Optional[Dict[str, str]] = None, *,
           leased: bool = False) -> Dict[str, List[str]]:
    """Publish run ``run_id`` of ``output`` from the refs of its succeeded bundles.

    Args:
        fields: Extra top-level keys of the manifest (see
            :func:`~beam_chunking.transforms.manifest.manifest_json`). Default none.
        leased: The run took the output's lease: check it still holds it right before the
            switch, and release it at the end. Default ``False`` (no lease involved).

    Returns:
        The committed files of each table, relative to ``output``.

    Raises:
        RuntimeError: A reported file is missing, truncated or reported twice; nothing is
            published and the previous output is untouched.
        OutputLeasedError: ``leased`` and another run took the lease over; nothing is published.
    """
    by_table: Dict[str, List[ShardRef]] = defaultdict(list)
    for ref in refs:
        by_table[ref.table].append(ref)
    tables, rows = {}, {}
    for table in TABLES:
        files = _table_files(by_table[table], run_folder(output, table, run_id), schemas[table], codec, num_shards)
        try:  # footers are small reads; on object stores their latency dominates, so overlap them
            with ThreadPoolExecutor(max_workers=min(16, len(files))) as pool:
                rows[table] = sum(pool.map(_rows_in, files))
        except Exception as exc:
            if leased:  # a run that took the lease over removed this run's files: say that
                verify_lease(output, run_id)
            raise RuntimeError(f"run {run_id}: a {table} file is missing or incomplete: {exc}") from exc
        tables[table] = [relative_to(output, p) for p in files]
    try:
        previous = read_manifest(output)
    except ValueError:  # unreadable: the run was told so when it started, and replaces it
        previous = None
    temporary = f"{output}/{MANIFEST}.{run_id}.tmp"
    with FileSystems.create(temporary) as f:
        f.write(manifest_json(run_id, tables, rows, fields))
    # As late as possible: a run that lost its lease must not switch the manifest. A repeated
    # commit of a run already published (its lease released) has nothing left to guard.
    if leased and manifest_run(previous) != run_id:
        try:
            verify_lease(output, run_id)
        except Exception:
            _delete([temporary])
            raise
    FileSystems.rename([temporary], [f"{output}/{MANIFEST}"])
    _delete(_garbage(output, run_id, previous, [join(output, p) for files in tables.values() for p in files]))
    if leased:
        release_lease(output, run_id)
    return tables
