"""Writing Parquet shards from inside the fused stage that produced the rows.

Each bundle streams its rows into one file per table, under the run's own folder, in row
groups. What tells the commit which files exist is a :class:`ShardRef`, emitted from
``process`` when a file is opened. A runner publishes a bundle's outputs only when the whole
bundle (its ``finish_bundle``, which closes the files, included) succeeded, so the refs that
reach the commit name exactly the files of bundles that succeeded: the file of a failed,
retried or speculatively duplicated attempt is named by no ref and is never published.

Refs come from ``process``, not ``finish_bundle``, because some runners (Beam's DaskRunner)
drop what ``finish_bundle`` emits.
"""
from __future__ import annotations

import uuid
import zlib
from typing import Dict, List, NamedTuple, Optional, Union

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems

from beam_chunking.transforms._common import LeanDoFn

#: Rows buffered per table before a row group is written.
ROWS_PER_GROUP = 50_000
#: Bytes of buffered Arrow data per table before a row group is written, whatever the row
#: count: a worker's memory then stays flat however large the corpus (one small batch per
#: document costs about three times its Arrow size in memory).
BYTES_PER_GROUP = 8 * 1024 * 1024


class ShardRef(NamedTuple):
    """One Parquet file of one table, written by one bundle (or one fixed shard)."""

    table: str
    path: str
    shard: Optional[int] = None


class Rows(NamedTuple):
    """What one document adds to the tables: its chunk rows (a record batch, or a small
    document's rows already checked against the schema, or ``None``), its document row,
    its parent rows (``parent_child``; ``None`` for other strategies) and its changes-table
    row (``None`` where the changes are written apart, as in an incremental run)."""

    batch: Union[pa.RecordBatch, List[dict], None]
    document: dict
    parents: Union[pa.RecordBatch, List[dict], None] = None
    change: Optional[dict] = None


class _ShardWriter:
    """One Parquet file, written a row group at a time."""

    def __init__(self, path: str, schema: pa.Schema, codec: str):
        self.path = path
        self._file = FileSystems.create(path)
        self._writer = pq.ParquetWriter(self._file, schema, compression=codec)

    def write(self, table: pa.Table) -> None:
        self._writer.write_table(table)

    def close(self) -> None:
        self._writer.close()
        self._file.close()

    def abort(self) -> None:
        """After a failure: close the handles without finishing the file, then remove it
        (best effort). A removed file's bytes stay on disk until its last handle closes,
        so a failed bundle's open files would keep taking the space (a full disk stays full)."""
        for close in (self._writer.close, self._file.close):
            try:
                close()
            except Exception:  # the disk that failed the write fails the footer too
                pass
        try:
            FileSystems.delete([self.path])
        except Exception:  # never created, or already gone: the run's discard or the next sweep removes it
            pass


class _Buffer:
    """Rows (record batches or dicts) waiting for the next row group."""

    def __init__(self, schema: pa.Schema):
        self.schema = schema
        self.batches: List[pa.RecordBatch] = []
        self.dicts: List[dict] = []
        self.rows = 0
        self.nbytes = 0

    def add(self, element) -> None:
        if isinstance(element, dict):
            self.dicts.append(element)
            self.rows += 1
            self.nbytes += 512  # a documents-table row: small, and its size is not worth computing
        elif isinstance(element, list):  # checked chunk rows of a small document
            self.dicts.extend(element)
            self.rows += len(element)
            self.nbytes += sum(len(r["text"]) for r in element) + 512 * len(element)
        else:
            self.batches.append(element)
            self.rows += element.num_rows
            self.nbytes += element.nbytes

    @property
    def full(self) -> bool:
        """Whether a row group should be written now."""
        return self.rows >= ROWS_PER_GROUP or self.nbytes >= BYTES_PER_GROUP

    def take(self) -> Optional[pa.Table]:
        if not self.rows:
            return None
        batches = list(self.batches)
        if self.dicts:
            batches.append(pa.RecordBatch.from_pylist(self.dicts, schema=self.schema))
        self.batches, self.dicts, self.rows, self.nbytes = [], [], 0, 0
        return pa.Table.from_batches(batches, schema=self.schema)


class _TableFiles:
    """The open file of each table for one bundle or shard; opening one yields its ref."""

    def __init__(self, folders: Dict[str, str], schemas: Dict[str, pa.Schema], codec: str, shard: Optional[int]):
        self.folders, self.schemas, self.codec, self.shard = folders, schemas, codec, shard
        self.buffers = {table: _Buffer(schema) for table, schema in schemas.items()}
        self.writers: Dict[str, _ShardWriter] = {}

    def _name(self) -> str:
        prefix = "part" if self.shard is None else f"part-{self.shard:05d}"
        return f"{prefix}-{uuid.uuid4().hex}.parquet"

    def add(self, table: str, rows):
        """Buffer ``rows``; yield a :class:`ShardRef` when the table's file is first opened."""
        if table not in self.writers:
            path = f"{self.folders[table]}/{self._name()}"
            self.writers[table] = _ShardWriter(path, self.schemas[table], self.codec)
            yield ShardRef(table, path, self.shard)
        buffer = self.buffers[table]
        buffer.add(rows)
        if buffer.full:
            self.writers[table].write(buffer.take())

    def close(self) -> None:
        """Write what is buffered and close every file; after a failure, abort them all."""
        try:
            for table, writer in self.writers.items():
                rest = self.buffers[table].take()
                if rest is not None:
                    writer.write(rest)
                writer.close()
        except BaseException:
            self.abort()
            raise
        self.writers = {}

    def abort(self) -> None:
        """Close and remove every file (a failed bundle's files are never published)."""
        for writer in self.writers.values():
            writer.abort()
        self.writers = {}
        self.buffers = {table: _Buffer(schema) for table, schema in self.schemas.items()}

    def added(self, element: "Rows") -> List[ShardRef]:
        """:func:`_documents_and_chunks` for one element, the files aborted if it fails."""
        try:
            return list(_documents_and_chunks(self, element))
        except BaseException:
            self.abort()
            raise


def _documents_and_chunks(files: _TableFiles, element: Rows):
    if element.batch is not None:
        yield from files.add("chunks", element.batch)
    if element.parents is not None:
        yield from files.add("parents", element.parents)
    yield from files.add("documents", element.document)
    if element.change is not None:
        yield from files.add("changes", element.change)


class BundleFilesFn(LeanDoFn):
    """A DoFn that writes one file per table per bundle (``self._files``, a
    :class:`_TableFiles`): opened as the bundle starts, closed as it finishes, and aborted
    (removed) when the bundle fails, so a failed bundle's files never take space until the
    sweep."""

    def __init__(self, folders: Dict[str, str], schemas: Dict[str, pa.Schema], codec: str):
        self.folders, self.schemas, self.codec = folders, schemas, codec

    def start_bundle(self):
        self._files = _TableFiles(self.folders, self.schemas, self.codec, None)

    def finish_bundle(self):
        self._files.close()

    def teardown(self):
        files = getattr(self, "_files", None)
        if files is not None:  # a bundle that failed (here, or in another step of its stage)
            files.abort()


class WriteBundleShardsFn(BundleFilesFn):
    """Write each bundle's rows to one file per table; yield each file's ref when it opens."""

    def process(self, element: Rows):
        yield from self._files.added(element)


class WriteKeyedShardsFn(LeanDoFn):
    """Write one file per table for each shard key (a fixed shard count was asked for)."""

    def __init__(self, folders: Dict[str, str], schemas: Dict[str, pa.Schema], codec: str):
        self.folders, self.schemas, self.codec = folders, schemas, codec

    def process(self, keyed):
        shard, elements = keyed
        files = _TableFiles(self.folders, self.schemas, self.codec, shard)
        refs = []
        for element in elements:
            refs.extend(files.added(element))
        files.close()  # refs leave only once the files are complete
        yield from refs


def shard_key(element: Rows, shards: int) -> int:
    """A stable shard for a document's rows, from its id (no hash seed involved)."""
    return zlib.crc32(element.document["document_id"].encode("utf-8")) % shards


class WriteShards(beam.PTransform):
    """Write :class:`Rows` as Parquet files, one folder per table; return their :class:`ShardRef`\\ s.

    ``num_shards=0`` writes one file per table per bundle, inside the producing stage (no
    shuffle); ``num_shards=N`` groups the documents into ``N`` keyed shards (a shuffle of the
    rows; the commit adds empty files for shards that received no row, so each table has
    exactly ``N`` files).
    """

    def __init__(self, folders: Dict[str, str], schemas: Dict[str, pa.Schema], codec: str, num_shards: int = 0):
        super().__init__()
        self.folders, self.schemas, self.codec, self.num_shards = folders, schemas, codec, num_shards

    def expand(self, pcoll):
        if not self.num_shards:
            return pcoll | "WriteBundles" >> beam.ParDo(WriteBundleShardsFn(self.folders, self.schemas, self.codec))
        return (
            pcoll
            | "KeyByShard" >> beam.Map(lambda e, n: (shard_key(e, n), e), self.num_shards)
            | "GroupShards" >> beam.GroupByKey()
            | "WriteShards" >> beam.ParDo(WriteKeyedShardsFn(self.folders, self.schemas, self.codec))
        )
