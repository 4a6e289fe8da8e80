"""WriteChunkTable: chunked documents and failures -> the chunks and documents Parquet tables.

A run writes exactly one consistent set of files. Shards are first written under
``OUTPUT/.staging-<run>/``; only when every shard of both tables exists does a final step
replace ``OUTPUT/chunks/`` and ``OUTPUT/documents/`` with them and write
``OUTPUT/_manifest.json``. So no shard of an earlier run survives an overwrite (whatever the
shard counts), and a run that fails before that step leaves the previous output untouched.
"""
from __future__ import annotations

import glob
import json
import logging
import os
import posixpath
import shutil
import uuid
from typing import List, NamedTuple, Optional

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems
from apache_beam.pvalue import AsList

from beam_chunking.errors import ConfigError, OutputExistsError
from beam_chunking.schema import COMPRESSIONS, CHUNKS_SCHEMA, DOCUMENTS_SCHEMA, chunk_batch, chunk_rows, document_row
from beam_chunking.transforms._common import StageFn
from beam_chunking.transforms._shards import WriteShards
from beam_chunking.transforms.records import ChunkedDocument, Failure

_LOG = logging.getLogger(__name__)
TABLES = ("chunks", "documents")
SCHEMAS = {"chunks": CHUNKS_SCHEMA, "documents": DOCUMENTS_SCHEMA}
MANIFEST = "_manifest.json"


class _Rows(NamedTuple):
    batch: Optional[pa.RecordBatch]
    document: dict


class _RowsFn(StageFn):
    stage = "validate"

    def handle(self, item: ChunkedDocument):
        rows = chunk_rows(list(item.chunks), strategy=item.strategy, fingerprint=item.strategy_fingerprint,
                          content_type=item.content_type, uri=item.uri)
        batch = chunk_batch(rows) if rows else None
        yield _Rows(batch, document_row(
            document_id=item.document_id, uri=item.uri, content_type=item.content_type,
            size_bytes=item.size_bytes, sha256=item.sha256, status="ok" if rows else "empty",
            section_count=item.section_count, chunk_count=len(rows), strategy=item.strategy,
            decode_replacements=item.decode_replacements,
            dropped=[label for label, _ in item.dropped] or None,
            dropped_characters=sum(n for _, n in item.dropped) if item.dropped else None,
        ))


def _document_row(element) -> dict:
    if isinstance(element, Failure):
        return document_row(
            document_id=element.document_id, uri=element.uri, content_type=element.content_type,
            size_bytes=element.size_bytes, sha256=element.sha256, status="failed", stage=element.stage,
            error_type=element.error_type, error_message=element.error_message[:4000],
        )
    return element.document


def _batches(element):
    if isinstance(element, _Rows) and element.batch is not None:
        yield element.batch


def existing_files(output: str) -> List[str]:
    """Files under ``output`` (two levels deep) other than leftovers of failed runs."""
    found = []
    for pattern in (f"{output}/*", f"{output}/*/*"):
        try:
            result = FileSystems.match([pattern])[0]
        except Exception:  # a missing folder matches nothing
            continue
        for meta in result.metadata_list:
            rel = meta.path[len(output):].lstrip("/")
            if not rel.startswith(".staging-"):
                found.append(meta.path)
    return sorted(set(found))


def _ensure_dir(path: str) -> None:
    try:
        FileSystems.mkdirs(path)
    except Exception:  # exists already, or object stores that have no folders
        pass


def _commit(_, output: str, staging: str, chunk_files: List[str], document_files: List[str]):
    """Replace the output tables with the staged shards, then drop the staging folder."""
    new = {"chunks": sorted(chunk_files), "documents": sorted(document_files)}
    old = [p for p in existing_files(output)
           if posixpath.basename(posixpath.dirname(p)) in TABLES or p.endswith(MANIFEST)]
    if old:
        FileSystems.delete(old)
    final = {}
    for table, files in new.items():
        _ensure_dir(f"{output}/{table}")
        if not files:  # no rows at all: an empty table still has its schema
            files = [_empty_shard(f"{staging}/{table}", SCHEMAS[table])]
        dest = [f"{output}/{table}/part-{i:05d}-of-{len(files):05d}.parquet" for i in range(len(files))]
        FileSystems.rename(files, dest)
        final[table] = dest
    with FileSystems.create(f"{output}/{MANIFEST}") as f:
        f.write(json.dumps({"tables": final}, indent=2, sort_keys=True).encode("utf-8"))
    _drop_staging(output)
    yield final


def _empty_shard(folder: str, schema: pa.Schema) -> str:
    path = f"{folder}/part-empty.parquet"
    _ensure_dir(folder)
    with FileSystems.create(path) as f:
        pq.write_table(schema.empty_table(), f)
    return path


def _drop_staging(output: str) -> None:
    """Delete this run's staging folder and any left behind by earlier failed runs."""
    if FileSystems.get_scheme(output) is None:
        # Beam's local match skips folders and dot-names; the folders are ours to remove.
        for path in glob.glob(os.path.join(output, ".staging-*")):
            shutil.rmtree(path, ignore_errors=True)
        return
    try:
        paths = [m.path for m in FileSystems.match([f"{output}/.staging-*"])[0].metadata_list]
        if paths:
            FileSystems.delete(paths)
    except Exception:  # already gone
        _LOG.debug("no staging objects left under %s", output)


class WriteChunkTable(beam.PTransform):
    """Write chunked documents (and failures) to ``OUTPUT/chunks`` and ``OUTPUT/documents``.

    Every document, failed or not, gets one documents-table row (status ``ok``, ``empty`` or
    ``failed``). Rows are validated against the schema per document before the sink, so a bad
    value fails that document (stage ``validate``) rather than the job.

    Args:
        output: Output folder (local path or ``gs://``).
        overwrite: Replace existing output. Default ``False``: a non-empty folder is refused
            when the pipeline is built.
        compression: Parquet codec: ``"zstd"`` (default), ``"snappy"``, ``"gzip"`` or ``"none"``.
        num_shards: Shards per table; 0 (default) writes one file per bundle, inside the
            chunking stage (fastest); ``N`` shuffles rows into exactly ``N`` files.

    Raises:
        OutputExistsError: ``output`` holds files and ``overwrite`` is false.
    """

    def __init__(self, output: str, overwrite: bool = False, compression: str = "zstd", num_shards: int = 0):
        super().__init__()
        if compression not in COMPRESSIONS:
            raise ConfigError(f"WriteChunkTable.compression={compression!r} must be one of {COMPRESSIONS}")
        self.output = output.rstrip("/") or "/"
        self.overwrite = overwrite
        self.compression = compression
        self.num_shards = num_shards

    def expand(self, pcoll):
        if not self.overwrite:
            found = existing_files(self.output)
            if found:
                raise OutputExistsError(
                    f"output folder {self.output} is not empty ({len(found)} files, e.g. {found[0]}); "
                    "pass overwrite=True (--overwrite) to replace it"
                )
        staging = f"{self.output}/.staging-{uuid.uuid4().hex[:12]}"
        codec = self.compression
        rows = pcoll | "ToRows" >> beam.ParDo(_RowsFn())
        chunk_files = (
            rows
            | "ChunkBatches" >> beam.FlatMap(_batches)
            | "WriteChunks" >> WriteShards(f"{staging}/chunks", CHUNKS_SCHEMA, codec, self.num_shards)
        )
        document_files = (
            rows
            | "DocumentRows" >> beam.Map(_document_row)
            | "WriteDocuments" >> WriteShards(f"{staging}/documents", DOCUMENTS_SCHEMA, codec, self.num_shards)
        )
        return (
            pcoll.pipeline
            | "CommitStart" >> beam.Create([None])
            | "Commit" >> beam.FlatMap(_commit, self.output, staging, AsList(chunk_files), AsList(document_files))
        )

    def display_data(self):
        return {"output": self.output, "overwrite": self.overwrite, "compression": self.compression}
