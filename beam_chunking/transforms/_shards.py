"""Writing Parquet shards from inside the fused stage that produced the rows.

Beam's ``WriteToParquet`` sits behind a side input, which makes the runner hand every record
batch across a stage boundary (pickled, about a fifth of the pipeline's time here). This
writer runs in the same fused stage as chunking: each bundle streams its rows into one staged
file, buffered into row groups, and reports the file's path when the bundle finishes. Only
files reported by bundles that succeeded are committed, so a retried bundle's orphan file is
never published.
"""
from __future__ import annotations

import uuid
import zlib
from typing import List, Optional

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.windowed_value import WindowedValue

#: Rows buffered before a row group is written.
ROWS_PER_GROUP = 50_000


class _ShardWriter:
    """One staged Parquet file, written a row group at a time."""

    def __init__(self, folder: str, schema: pa.Schema, codec: str):
        self.path = f"{folder}/part-{uuid.uuid4().hex}.parquet"
        self._file = FileSystems.create(self.path)
        self._writer = pq.ParquetWriter(self._file, schema, compression=codec)

    def write(self, table: pa.Table) -> None:
        self._writer.write_table(table)

    def close(self) -> str:
        self._writer.close()
        self._file.close()
        return self.path


class _Buffer:
    """Rows (record batches or dicts) waiting for the next row group."""

    def __init__(self, schema: pa.Schema):
        self.schema = schema
        self.batches: List[pa.RecordBatch] = []
        self.dicts: List[dict] = []
        self.rows = 0

    def add(self, element) -> None:
        if isinstance(element, dict):
            self.dicts.append(element)
            self.rows += 1
        else:
            self.batches.append(element)
            self.rows += element.num_rows

    def take(self) -> Optional[pa.Table]:
        if not self.rows:
            return None
        batches = list(self.batches)
        if self.dicts:
            batches.append(pa.RecordBatch.from_pylist(self.dicts, schema=self.schema))
        self.batches, self.dicts, self.rows = [], [], 0
        return pa.Table.from_batches(batches, schema=self.schema)


class WriteBundleShardsFn(beam.DoFn):
    """Write each bundle's rows to one staged file; emit its path when the bundle ends."""

    def __init__(self, folder: str, schema: pa.Schema, codec: str):
        self.folder, self.schema, self.codec = folder, schema, codec

    def start_bundle(self):
        self._buffer = _Buffer(self.schema)
        self._writer: Optional[_ShardWriter] = None

    def process(self, element):
        self._buffer.add(element)
        if self._buffer.rows >= ROWS_PER_GROUP:
            self._flush()

    def _flush(self) -> None:
        table = self._buffer.take()
        if table is not None:
            if self._writer is None:
                self._writer = _ShardWriter(self.folder, self.schema, self.codec)
            self._writer.write(table)

    def finish_bundle(self):
        self._flush()
        if self._writer is not None:
            path = self._writer.close()
            self._writer = None
            yield WindowedValue(path, GlobalWindow().max_timestamp(), [GlobalWindow()])


class WriteKeyedShardsFn(beam.DoFn):
    """Write one staged file per shard key (used when a fixed shard count is asked for)."""

    def __init__(self, folder: str, schema: pa.Schema, codec: str):
        self.folder, self.schema, self.codec = folder, schema, codec

    def process(self, keyed):
        _, elements = keyed
        buffer, writer = _Buffer(self.schema), None
        for element in elements:
            buffer.add(element)
            if buffer.rows >= ROWS_PER_GROUP:
                writer = writer or _ShardWriter(self.folder, self.schema, self.codec)
                writer.write(buffer.take())
        table = buffer.take()
        if table is not None:
            writer = writer or _ShardWriter(self.folder, self.schema, self.codec)
            writer.write(table)
        if writer is not None:
            yield writer.close()


def shard_key(element, shards: int) -> int:
    """A stable shard for a row batch or row dict (by its document id; no hash seed involved)."""
    doc = element["document_id"] if isinstance(element, dict) else element.column("document_id")[0].as_py()
    return zlib.crc32(doc.encode("utf-8")) % shards


class WriteShards(beam.PTransform):
    """Write record batches or row dicts of ``schema`` as staged Parquet files under ``folder``.

    Returns the PCollection of staged file paths. ``num_shards=0`` writes one file per bundle,
    inside the producing stage; ``num_shards=N`` groups rows into exactly ``N`` keyed shards
    (a shuffle; some shards may be empty and then are not written).
    """

    def __init__(self, folder: str, schema: pa.Schema, codec: str, num_shards: int = 0):
        super().__init__()
        self.folder, self.schema, self.codec, self.num_shards = folder, schema, codec, num_shards

    def expand(self, pcoll):
        if not self.num_shards:
            return pcoll | "WriteBundles" >> beam.ParDo(WriteBundleShardsFn(self.folder, self.schema, self.codec))
        return (
            pcoll
            | "KeyByShard" >> beam.Map(lambda e, n: (shard_key(e, n), e), self.num_shards)
            | "GroupShards" >> beam.GroupByKey()
            | "WriteShards" >> beam.ParDo(WriteKeyedShardsFn(self.folder, self.schema, self.codec))
        )
