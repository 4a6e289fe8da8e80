"""WriteToPgVector: chunks into a PostgreSQL table with a pgvector column, a document at a time.

The table mirrors the chunks Parquet table (:data:`beam_chunking.schema.CHUNKS_SCHEMA`): the
same column names, ``chunk_id`` as primary key, the reserved metadata keys as typed columns,
the other metadata as ``jsonb`` and the vector as ``vector(N)``.

The unit of writing is a whole document. Each element names one document and either its
complete new set of chunk rows (a :class:`~beam_chunking.transforms.records.ChunkedDocument`
or :class:`DocumentRows`) or its removal (:class:`DeleteDocument`); :class:`ApplyChanges` makes them from a run's
changes and chunks tables. A transaction deletes every
row of its documents and inserts their new rows, so a reader sees each document either as it
was or as it is now, never half-replaced, and chunk ids that a document no longer has go in
the same commit. One transaction holds whole documents up to ``batch_size`` rows (a larger
document gets a transaction of its own). Rows go in by binary ``COPY``:

- rows with the canonical ``"{document_id}:{start:010d}"`` ids stream into the table as their
  documents arrive, and the rows of those documents that the transaction did not write are
  deleted when it ends (PostgreSQL writes a COPY's rows in groups of 1,000 rows or 64 KB,
  whichever fills first, so rows sent as they come are written while the next documents
  are built);
- when a streamed row's id is taken (a document changed in place), that batch and the rest
  of the worker's go the delete-first way: the documents' rows are deleted, then the new
  ones copied straight in;
- rows with other ids go into a temporary table and then ``INSERT ... ON CONFLICT (chunk_id)
  DO UPDATE``.

Either way the result is an upsert by chunk id, and a retried bundle repeats the same deletes
and writes, so it leaves the same table.
"""
from __future__ import annotations

import json
import logging
import math
import operator
import re
import struct
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

import apache_beam as beam
import pyarrow as pa

from beam_chunking.errors import ChunkingError, ConfigError, require_extra
from beam_chunking.schema import CHUNKS_SCHEMA, chunk_rows, decode_metadata, metadata_kind
from beam_chunking.transforms._common import LeanDoFn, NAMESPACE
from beam_chunking.transforms.records import ChunkedDocument, Failure

COLUMNS: Tuple[str, ...] = tuple(CHUNKS_SCHEMA.names)
INDEXES = ("hnsw", "ivfflat", None)
#: pgvector operator class per distance.
METRICS = {"cosine": "vector_cosine_ops", "l2": "vector_l2_ops", "inner_product": "vector_ip_ops"}
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,40}$")
_STAGE = "beam_chunking_stage"

_LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class DocumentRows:
    """A document's complete new set of chunks-table rows; it replaces all its old rows.

    Args:
        document_id: The document; every row must carry it in ``document_id``.
        rows: Rows of the chunks table (dicts keyed by its column names). Empty removes the
            document's rows, like :class:`DeleteDocument`.
    """

    document_id: str
    rows: Tuple[Dict[str, Any], ...]


@dataclass(frozen=True)
class DeleteDocument:
    """Remove every row of a document that has disappeared (a ``deleted`` change)."""

    document_id: str


def _pg_type(field: pa.Field, dimension: Optional[int]) -> str:
    if field.name == "embedding":
        return f"vector({dimension})" if dimension else "vector"
    if field.name in ("metadata", "boxes"):
        return "jsonb"  # plain typed JSON values: an int stays a number, a list an array
    kind = field.type
    if pa.types.is_string(kind):
        return "text"
    if pa.types.is_int32(kind):
        return "integer"
    if pa.types.is_int64(kind):
        return "bigint"
    if pa.types.is_floating(kind):
        return "double precision"
    if pa.types.is_list(kind) and pa.types.is_string(kind.value_type):
        return "text[]"
    raise TypeError(f"no PostgreSQL type for chunks-table column {field.name} of type {kind}")  # pragma: no cover


def _redact(dsn: str) -> str:
    """The DSN without its password, for display data and messages."""
    dsn = re.sub(r"(password\s*=\s*)('[^']*'|\S+)", r"\1***", dsn)
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", dsn)


#: psycopg's names of the PostgreSQL types that :func:`_pg_type` gives, for binary COPY.
_COPY_TYPES = {"text": "text", "integer": "int4", "bigint": "int8", "double precision": "float8",
               "text[]": "text[]", "jsonb": "jsonb"}


def binary_copy_types(conn, dimension: Optional[int] = None) -> List[Any]:
    """Teach ``conn`` pgvector's binary format and return the chunks-table column types for
    ``copy.set_types`` of a ``COPY ... (FORMAT BINARY)``.

    Binary COPY sends a vector as its 4-byte floats: about 60x cheaper to encode than the
    text form (``repr`` of 384 floats takes ~140 us), and exact. Call it before opening the
    cursor that copies: a cursor takes a copy of the connection's adapters.

    Args:
        conn: An open psycopg 3 connection to a database with the ``vector`` extension.
        dimension: The vector column's length, or ``None``; it does not change the types.

    Returns:
        One psycopg type name or oid per column of :data:`COLUMNS`, in order.

    Raises:
        ConfigError: the database has no ``vector`` type.
    """
    from psycopg.adapt import Dumper
    from psycopg.pq import Format
    from psycopg.types import TypeInfo
    from psycopg.types.json import Jsonb

    info = TypeInfo.fetch(conn, "vector")
    if info is None:
        raise ConfigError("the vector type is missing: CREATE EXTENSION vector (or pass create=True)")

    class VectorDumper(Dumper):
        # pgvector's binary form: uint16 dimensions, uint16 unused, then big-endian float4s.
        format = Format.BINARY
        oid = info.oid

        def dump(self, obj):
            if isinstance(obj, bytes):  # packed already by pack_vector
                return obj
            return pack_vector(obj)

    class MetadataDumper(Dumper):
        format = Format.BINARY  # jsonb's binary form (see _jsonb)
        oid = conn.adapters.types["jsonb"].oid

        def dump(self, obj):
            if isinstance(obj, bytes):  # encoded already by jsonb_metadata
                return obj
            return _jsonb(obj.obj if isinstance(obj, Jsonb) else obj)  # a dict, or a caller's Jsonb

    text_oid = conn.adapters.types["text"].oid

    class TextArrayDumper(Dumper):
        # A one-dimensional text[] in PostgreSQL's binary array form, packed in one go.
        format = Format.BINARY
        oid = conn.adapters.types["text"].array_oid

        def dump(self, obj):
            if not obj:
                return _ARRAY_HEAD.pack(0, 0, text_oid)
            items = [None if v is None else v.encode() for v in obj]
            parts = [_ARRAY_HEAD.pack(1, int(None in items), text_oid), _ARRAY_DIM.pack(len(items), 1)]
            for item in items:
                if item is None:
                    parts.append(_NULL_LENGTH)
                else:
                    parts.append(_LENGTH.pack(len(item)))
                    parts.append(item)
            return b"".join(parts)

    # Registered by oid only, so they serve the COPY's set_types and nothing else.
    conn.adapters.register_dumper(None, VectorDumper)
    conn.adapters.register_dumper(None, MetadataDumper)
    conn.adapters.register_dumper(None, TextArrayDumper)
    return [info.oid if f.name == "embedding" else _COPY_TYPES[_pg_type(f, dimension)] for f in CHUNKS_SCHEMA]


_PACKERS: Dict[int, struct.Struct] = {}
# PostgreSQL's binary array: dimensions, has-null flag, element type; each dimension's
# length and lower bound; each element's byte length (-1 for NULL) and bytes.
_ARRAY_HEAD, _ARRAY_DIM, _LENGTH = struct.Struct(">iiI"), struct.Struct(">ii"), struct.Struct(">i")
_NULL_LENGTH = _LENGTH.pack(-1)


def pack_vector(values) -> bytes:
    """pgvector's binary form of a vector: uint16 dimensions, uint16 unused, big-endian float4s.

    Raises:
        ChunkingError: a value is not a number, or is NaN or an infinity.
    """
    n = len(values)
    packer = _PACKERS.get(n) or _PACKERS.setdefault(n, struct.Struct(f">HH{n}f"))
    try:
        packed = packer.pack(n, 0, *values)
    except struct.error as exc:
        raise ChunkingError(f"an embedding must be a list of numbers ({exc})") from None
    # pgvector refuses NaN and infinities; any of them makes the sum one (one pass).
    if not math.isfinite(sum(values, 0.0)):  # in float64: float32 values cannot overflow it
        raise ChunkingError("an embedding holds NaN or an infinity")
    return packed


_JSONB_VERSION = b"\x01"


def jsonb_metadata(items: List[Tuple[str, Any]]) -> bytes:
    """The ``metadata`` column's binary ``jsonb`` value of ``(key, value)`` pairs.

    A :func:`~beam_chunking.schema.chunk_rows` ``encode_metadata``: the values are checked as
    the chunks table checks them, and the JSON is written once, with no typed structs
    built and read back on the way.

    Raises:
        ChunkingError: a value is not ``str | int | float | bool | None | list[str]``.
    """
    for key, value in items:
        metadata_kind(key, value)
    return _jsonb(dict(items))


def _jsonb(obj: Any) -> bytes:
    # jsonb's binary form: a version byte, then the JSON text.
    return _JSONB_VERSION + json.dumps(obj).encode()


def _copy_row(row: Dict[str, Any]) -> List[Any]:
    """A chunks-table row as COPY values: the metadata as jsonb bytes or a dict, the vector packed.

    A batch waits in memory as these lists: a packed vector is one ``bytes`` object, which
    the garbage collector never walks, where a list of floats is walked at every collection.
    """
    try:
        out = list(_ROW_VALUES(row))
    except KeyError:  # a row without some optional column
        out = [row.get(c) for c in COLUMNS]
    meta = out[_META]
    if not isinstance(meta, (bytes, dict)):  # typed structs, as read from the chunks table
        out[_META] = decode_metadata(meta)
    vector = out[_EMBEDDING]
    if vector is not None and not isinstance(vector, bytes):
        out[_EMBEDDING] = pack_vector(vector)
    return out


def _check_vectors(rows, dimension: Optional[int]) -> None:
    """Refuse a document whose vectors pgvector would refuse for their dimension, so that it
    fails alone (:func:`pack_vector` refuses the values).

    Raises:
        ChunkingError: a vector of another dimension than the table's (or, in a table of any
            dimension, than the document's other vectors).
    """
    want = dimension
    for row in rows:
        vector = row.get("embedding")
        if vector is None:
            continue
        n = int.from_bytes(vector[:2], "big") if isinstance(vector, bytes) else len(vector)  # packed: its header
        if want is None:
            want = n
        elif n != want:
            raise ChunkingError(f"chunk {row.get('chunk_id')}: a {n}-dimensional embedding, expected {want}")


_ROW_VALUES = operator.itemgetter(*COLUMNS)
_META = COLUMNS.index("metadata")
_EMBEDDING = COLUMNS.index("embedding")


@dataclass(frozen=True)
class _Config:
    dsn: str
    table: str
    create: bool
    dimension: Optional[int]
    batch_size: int
    index: Optional[str]
    metric: str
    ivfflat_lists: int


class _WriteFn(LeanDoFn):
    def __init__(self, config: _Config):
        self.config = config
        self.rows_written = beam.metrics.Metrics.counter(NAMESPACE, "pgvector_rows_upserted")
        self.replaced = beam.metrics.Metrics.counter(NAMESPACE, "pgvector_documents_replaced")
        self.deleted = beam.metrics.Metrics.counter(NAMESPACE, "pgvector_documents_deleted")
        self.skipped = beam.metrics.Metrics.counter(NAMESPACE, "pgvector_failures_skipped")
        self.refused = beam.metrics.Metrics.counter(NAMESPACE, "pgvector_documents_refused")

    # -- connection ----------------------------------------------------------------------
    def setup(self):
        self.psycopg = require_extra("psycopg", "psycopg[binary]", "pgvector")
        from psycopg import sql

        self.sql = sql
        parts = self.config.table.split(".")
        self.target = sql.Identifier(*parts)
        self.name = parts[-1]
        self.conn = None
        self.stream: Optional[_Stream] = None
        # Rows stream into an open COPY until a new row's id is found taken (see _end_stream).
        self.streaming = True
        self._connect()

    def _connect(self):
        # autocommit: every write is an explicit `with conn.transaction()` block.
        self.conn = self.psycopg.connect(self.config.dsn, autocommit=True)
        if self.config.create:
            self._create()
        self._check_table()
        self.types = binary_copy_types(self.conn, self.config.dimension)
        self.conn.execute(self.sql.SQL(
            "CREATE TEMP TABLE IF NOT EXISTS {} (LIKE {} INCLUDING DEFAULTS) ON COMMIT DELETE ROWS"
        ).format(self.sql.Identifier(_STAGE), self.target))

    def _create(self):
        sql, cfg = self.sql, self.config
        columns = sql.SQL(", ").join(
            sql.SQL("{} {}{}").format(sql.Identifier(f.name), sql.SQL(_pg_type(f, cfg.dimension)),
                                      sql.SQL(" PRIMARY KEY" if f.name == "chunk_id" else
                                              "" if f.nullable else " NOT NULL"))
            for f in CHUNKS_SCHEMA)
        with self.conn.transaction():
            # Workers set up at once: the lock makes one create and the others find it made.
            self.conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [cfg.table])
            if not self.conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
                self.conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            self.conn.execute(sql.SQL("CREATE TABLE IF NOT EXISTS {} ({})").format(self.target, columns))
            self.conn.execute(sql.SQL("CREATE INDEX IF NOT EXISTS {} ON {} (document_id)").format(
                sql.Identifier(f"{self.name}_document_id_idx"), self.target))
            if cfg.index:
                using = sql.SQL(f"USING {cfg.index} (embedding {METRICS[cfg.metric]})")
                if cfg.index == "ivfflat":
                    using += sql.SQL(" WITH (lists = {})").format(sql.Literal(cfg.ivfflat_lists))
                self.conn.execute(sql.SQL("CREATE INDEX IF NOT EXISTS {} ON {} {}").format(
                    sql.Identifier(f"{self.name}_embedding_{cfg.index}_idx"), self.target, using))

    def _check_table(self):
        found = self.conn.execute(
            "SELECT a.attname, a.atttypmod FROM pg_attribute a WHERE a.attrelid = to_regclass(%s) "
            "AND a.attnum > 0 AND NOT a.attisdropped", [self.target.as_string(self.conn)]).fetchall()
        if not found:
            raise ConfigError(f"table {self.config.table} does not exist in {_redact(self.config.dsn)}; "
                              "pass create=True (with dimension=N) to create it", field="table")
        have = dict(found)
        missing = [c for c in COLUMNS if c not in have]
        if missing:
            raise ConfigError(f"table {self.config.table} lacks the chunks-table columns {missing}", field="table")
        # pgvector keeps a vector(N) column's N as its type modifier (-1: any dimension).
        table_dim = have["embedding"] if have["embedding"] > 0 else None
        self.table_dim = table_dim or self.config.dimension
        if self.config.dimension and table_dim and table_dim != self.config.dimension:
            raise ConfigError(f"table {self.config.table} has vector({table_dim}) embeddings but "
                              f"dimension={self.config.dimension}", field="dimension")

    def teardown(self):
        if getattr(self, "stream", None) is not None:
            self.stream.abandon()
            self.stream = None
        if getattr(self, "conn", None) is not None:
            self.conn.close()
            self.conn = None

    # -- batching ------------------------------------------------------------------------
    def start_bundle(self):
        if self.stream is not None:  # left open by a bundle that failed: its retry writes it again
            self.stream.abandon()
            self.stream = None
        if self.conn is None or self.conn.closed or self.conn.broken:
            self._connect()  # the server restarted or dropped us since the last bundle
        # document id -> (its rows as COPY values, whether all their chunk ids are canonical)
        self.pending: Dict[str, Tuple[List[List[Any]], bool]] = {}
        self.count = 0

    def process(self, element):
        if isinstance(element, Failure):
            # A document that failed this run keeps what the table has; the documents table
            # records the failure.
            self.skipped.inc()
            return
        try:
            document_id, rows = _document(element)
            values = [_copy_row(r) for r in rows]
            _check_vectors(rows, self.table_dim)
        except ChunkingError as exc:
            # One bad document must not roll back the batch of good ones it would share.
            self.refused.inc()
            _LOG.warning("pgvector table %s: document %s not written (the table keeps its earlier rows): %s",
                         self.config.table, getattr(element, "document_id", "?"), exc)
            return
        canonical = all(_canonical(r) for r in rows)
        n = max(1, len(rows))
        if self.streaming and canonical:
            self._stream(document_id, values, n)
            return
        self._end_stream()  # batches commit in order
        if document_id in self.pending:  # a later version in the same bundle wins
            self.count -= max(1, len(self.pending.pop(document_id)[0]))
        if self.pending and self.count + n > self.config.batch_size:
            self._flush()
        self.pending[document_id] = (values, canonical)
        self.count += n

    def finish_bundle(self):
        self._end_stream()
        self._flush()

    # -- streaming: rows go into the open COPY as their documents arrive ------------------
    def _stream(self, document_id: str, values: List[List[Any]], n: int):
        """Send a document's rows into the batch being streamed, starting one when needed.

        PostgreSQL's COPY buffers rows (1,000 rows or 64 KB, whichever fills first) before it
        writes them to the table and its indexes, so a batch sent whole writes most of its
        rows after the last one arrives, while this worker waits. Sent as each document arrives, the rows are written while
        the next documents are chunked and packed. The stale rows of the batch's documents
        are deleted when the batch ends, in the same transaction (see :class:`_Stream`).
        """
        stream = self.stream
        if stream is not None and (document_id in stream.pending or stream.count + n > self.config.batch_size):
            # A document twice in one batch would keep both versions' rows: the first
            # version's batch commits first, and the second's delete removes them.
            self._end_stream()
            stream = None
        if stream is None:
            self._flush()  # documents waiting on the delete-first path go before
            stream = self.stream = _Stream(self)
        stream.add(document_id, values, n)

    def _end_stream(self):
        stream, self.stream = self.stream, None
        if stream is None:
            return
        try:
            stream.commit()
        except self.psycopg.errors.UniqueViolation:
            # A new row has the id of a row already in the table (a changed document whose
            # chunk starts did not move): this batch goes again the delete-first way, and so
            # does the rest of this worker's writing, which is likely re-ingestion.
            self.streaming = False
            self._write_batch(stream.pending)
            return
        self._count(stream.pending)

    def _count(self, pending: Dict[str, Tuple[List[List[Any]], bool]]):
        self.rows_written.inc(sum(len(r) for r, _ in pending.values()))
        self.replaced.inc(sum(1 for r, _ in pending.values() if r))
        self.deleted.inc(sum(1 for r, _ in pending.values() if not r))

    def _flush(self):
        pending, self.pending, self.count = self.pending, {}, 0
        if pending:
            self._write_batch(pending)

    def _write_batch(self, pending: Dict[str, Tuple[List[List[Any]], bool]]):
        """Write whole documents in one transaction, deleting their rows first."""
        rows = [r for doc_rows, _ in pending.values() for r in doc_rows]
        # Canonical ids ("{document_id}:{start:010d}[#k]") name their document, so once the
        # batch's documents are deleted none can collide with a row left in the table: the
        # rows go straight in. Other ids take the upsert through the temporary table.
        direct = all(canonical for _, canonical in pending.values())
        try:
            self._apply(pending, rows, direct)
        except self.psycopg.errors.UniqueViolation:
            if not direct:
                raise
            self._apply(pending, rows, direct=False)  # a row written under a foreign id is in the way
        self._count(pending)

    def _apply(self, pending: Dict[str, Tuple[List[List[Any]], bool]], rows: List[List[Any]], direct: bool):
        """One transaction: delete the documents' rows, then write the new ones."""
        sql, cols, stage = self.sql, sql_columns(self.sql), self.sql.Identifier(_STAGE)
        try:
            with self.conn.transaction(), self.conn.cursor() as cur:
                # Delete first: an error later in the block must roll the deletes back too.
                # The delete goes by the document_id index whatever the planner guesses: on a
                # table not analysed yet (a first load) it expects thousands of rows per id
                # and would scan the whole table once per batch, a load quadratic in its
                # size. Nothing else in the transaction has an index to prefer.
                cur.execute("SET LOCAL enable_seqscan = off")
                cur.execute(sql.SQL("DELETE FROM {} WHERE document_id = ANY(%s)").format(self.target), [list(pending)])
                if rows:
                    into = self.target if direct else stage
                    with cur.copy(sql.SQL("COPY {} ({}) FROM STDIN (FORMAT BINARY)").format(into, cols)) as copy:
                        copy.set_types(self.types)
                        for row in rows:
                            copy.write_row(row)
                    if not direct:
                        cur.execute(sql.SQL(
                            "INSERT INTO {t} ({c}) SELECT {c} FROM {s} ON CONFLICT (chunk_id) DO UPDATE SET {u}"
                        ).format(t=self.target, c=cols, s=stage, u=sql.SQL(", ").join(
                            sql.SQL("{0} = EXCLUDED.{0}").format(sql.Identifier(c)) for c in COLUMNS[1:])))
        except self.psycopg.errors.UniqueViolation:
            raise
        except Exception as exc:  # whatever failed, the block rolled back: say so, and which documents
            raise _rolled_back(self.config.table, len(rows), pending, exc) from exc


class _Stream:
    """One batch streamed into the table: an open transaction whose COPY takes each document's
    rows as it arrives.

    Its end deletes the rows of its documents that this transaction did not write
    (``age(xmin) <> 0``: a row carries the id of the transaction that wrote it) and commits,
    so the batch's documents are replaced whole, as on the delete-first path. A new row whose
    chunk id is taken by an old row fails the COPY; the transaction then rolls back and the
    caller writes the batch the delete-first way. The transaction has no savepoint, so every
    row it writes carries its own id.
    """

    def __init__(self, fn: "_WriteFn"):
        self.fn = fn
        self.pending: Dict[str, Tuple[List[List[Any]], bool]] = {}
        self.count = 0
        self.tx = fn.conn.transaction()
        self.tx.__enter__()
        self.copying = None
        try:
            self.cur = fn.conn.cursor()
            # The delete at the end goes by the document_id index (see _WriteFn._apply). The
            # COPY stays open while the next documents are made, waiting on this worker, not
            # on the server: a server's statement_timeout would cancel it.
            self.cur.execute("SET LOCAL enable_seqscan = off")
            self.cur.execute("SET LOCAL statement_timeout = 0")
            self.copying = self.cur.copy(
                fn.sql.SQL("COPY {} ({}) FROM STDIN (FORMAT BINARY)").format(fn.target, sql_columns(fn.sql)))
            copy = self.copying.__enter__()
            copy.set_types(fn.types)
            self.write = copy.write_row
        except BaseException as exc:
            self._end(exc)
            raise

    def add(self, document_id: str, values: List[List[Any]], n: int) -> None:
        """Send one document's rows.

        Raises:
            ChunkingError: a row could not be sent; the batch is rolled back.
        """
        self.pending[document_id] = (values, True)
        self.count += n
        write = self.write
        try:
            for row in values:
                write(row)
        except Exception as exc:
            self._end(exc)
            raise _rolled_back(self.fn.config.table, self.count, self.pending, exc) from exc

    def commit(self) -> None:
        """End the COPY (PostgreSQL writes its last rows), delete the stale rows, commit.

        Raises:
            psycopg.errors.UniqueViolation: a new row's chunk id is taken; rolled back.
            ChunkingError: anything else failed; rolled back.
        """
        fn = self.fn
        try:
            copying, self.copying = self.copying, None
            copying.__exit__(None, None, None)
            self.cur.execute(fn.sql.SQL("DELETE FROM {} WHERE document_id = ANY(%s) AND age(xmin) <> 0").format(
                fn.target), [list(self.pending)])
            self.cur.close()
            tx, self.tx = self.tx, None
            tx.__exit__(None, None, None)
        except fn.psycopg.errors.UniqueViolation as exc:
            self._end(exc)
            raise
        except Exception as exc:
            self._end(exc)
            raise _rolled_back(fn.config.table, self.count, self.pending, exc) from exc

    def abandon(self) -> None:
        """Roll the open transaction back: the bundle that wrote it failed."""
        self._end(ChunkingError("the bundle failed before this batch was committed"))

    def _end(self, exc: BaseException) -> None:
        # End what is still open with the error: the COPY fails, the transaction rolls back.
        for part in ("copying", "tx"):
            cm = getattr(self, part)
            setattr(self, part, None)
            if cm is not None:
                try:
                    cm.__exit__(type(exc), exc, exc.__traceback__)
                except Exception:  # noqa: BLE001 - a broken connection has nothing left to end
                    pass


def _rolled_back(table: str, rows: int, documents, exc: BaseException) -> ChunkingError:
    """The error of a transaction that was rolled back, naming the first documents."""
    shown = ", ".join(list(documents)[:3]) + (" ..." if len(documents) > 3 else "")
    return ChunkingError(f"writing {rows} rows of {len(documents)} documents ({shown}) to {table} failed and was "
                         f"rolled back: {exc}")


def _canonical(row: Dict[str, Any]) -> bool:
    """Whether a row's chunk id is the one :attr:`Chunk.id` gives its document and start."""
    chunk_id, base = row["chunk_id"], f"{row['document_id']}:{row['start']:010d}"
    return chunk_id == base or (chunk_id.startswith(base + "#") and chunk_id[len(base) + 1:].isdigit())


def sql_columns(sql) -> Any:
    """The chunks-table columns as a comma-separated SQL identifier list."""
    return sql.SQL(", ").join(sql.Identifier(c) for c in COLUMNS)


def _document(element) -> Tuple[str, Tuple[Dict[str, Any], ...]]:
    """The document an element names and its new rows (``()`` to remove it)."""
    if isinstance(element, DeleteDocument):
        return element.document_id, ()
    if isinstance(element, ChunkedDocument):
        return element.document_id, tuple(chunk_rows(
            list(element.chunks), strategy=element.strategy, fingerprint=element.strategy_fingerprint,
            content_type=element.content_type, uri=element.uri, encode_vector=pack_vector,
            encode_metadata=jsonb_metadata))
    if isinstance(element, DocumentRows):
        stray = [r.get("chunk_id") for r in element.rows if r.get("document_id") != element.document_id]
        if stray:
            # A pipeline wired wrong, not a bad document: it must stop the job.
            raise ValueError(f"rows {stray[:3]} do not belong to the document {element.document_id} they were "
                             "grouped under")
        # Unique chunk ids: ON CONFLICT cannot touch one row twice in one statement.
        return element.document_id, tuple({r["chunk_id"]: r for r in element.rows}.values())
    raise TypeError(f"WriteToPgVector takes ChunkedDocument, DocumentRows or DeleteDocument elements, "
                    f"got {type(element).__name__}; group chunk rows by document with GroupChunkRows() first")


class GroupChunkRows(beam.PTransform):
    """Group chunks-table rows (dicts, e.g. read from the Parquet table) into :class:`DocumentRows`.

    The input must hold every row of each document it names: the group replaces the
    document's rows in the store.
    """

    def expand(self, rows):
        return (rows
                | "KeyByDocument" >> beam.Map(lambda r: (r["document_id"], r))
                | "GroupByDocument" >> beam.GroupByKey()
                | "ToDocumentRows" >> beam.MapTuple(
                    lambda doc, rs: DocumentRows(doc, tuple(sorted(rs, key=lambda r: (r["start"], r["chunk_id"]))))))


def _sink_inputs(item):
    document_id, grouped = item
    changes = list(grouped["changes"])
    if not changes:  # an unchanged document: the store has its rows already
        return
    if changes[0]["change"] == "deleted":
        yield DeleteDocument(document_id)
    else:  # new or changed: its rows now (none for a document that is empty or failed now)
        yield DocumentRows(document_id, tuple(sorted(grouped["chunks"], key=lambda r: (r["start"], r["chunk_id"]))))


class ApplyChanges(beam.PTransform):
    """Turn a run's changes table and chunks table into :class:`WriteToPgVector`'s inputs,
    so a store fed from the previous run catches up with this one.

    Applied to ``(changes, chunks)``, two PCollections of rows (dicts) of the output's
    ``changes`` and ``chunks`` tables. Per document: ``deleted`` gives a
    :class:`DeleteDocument`; ``new`` and ``changed`` give :class:`DocumentRows` with all its
    current chunks (which replace all its old rows in one transaction, so the changes
    table's ``delete_chunk_ids`` are deleted with them); ``unchanged`` gives nothing. After a
    run that was not incremental every document is ``new``: the whole output is upserted,
    and documents that left the corpus stay in the store.

    Example:
        >>> from beam_chunking.transforms import table_files      # doctest: +SKIP
        >>> changes = p | "Changes" >> beam.Create(table_files("out", "changes")) | "C" >> ReadAllFromParquet()
        >>> chunks = p | "Chunks" >> beam.Create(table_files("out", "chunks")) | "K" >> ReadAllFromParquet()
        >>> (changes, chunks) | ApplyChanges() | WriteToPgVector(dsn, "chunks")
    """

    def expand(self, pcolls):
        changes, chunks = pcolls
        return ({"changes": changes | "KeyChanges" >> beam.Map(lambda r: (r["document_id"], r))
                                    | "NotUnchanged" >> beam.Filter(lambda kv: kv[1]["change"] != "unchanged"),
                 "chunks": chunks | "KeyChunks" >> beam.Map(lambda r: (r["document_id"], r))}
                | "ByDocument" >> beam.CoGroupByKey()
                | "SinkInputs" >> beam.FlatMap(_sink_inputs))


class WriteToPgVector(beam.PTransform):
    """Upsert chunks into a PostgreSQL + pgvector table, replacing and deleting whole documents.

    Input elements: :class:`~beam_chunking.transforms.records.ChunkedDocument` (the output of
    ``ChunkDocuments`` or ``EmbedChunks``) and :class:`DocumentRows` replace a document's rows;
    :class:`DeleteDocument` removes them; ``Failure`` records are skipped, leaving the
    document's previous rows in place. Each worker opens one connection in ``setup()``.

    Args:
        dsn: A libpq connection string or URI (``"postgresql://user@host/db"``).
        table: Table name, optionally ``schema.table``.
        create: Create the ``vector`` extension (if missing), the table and its indexes when
            they do not exist. Default ``False``: the table must exist.
        dimension: Vector length N of the ``vector(N)`` column; required with ``create``, and
            checked against an existing table otherwise. Default ``None``.
        batch_size: Rows per transaction, at most (whole documents: a document with more rows
            gets a transaction of its own). Default 5,000: few commits per worker, while the
            rows of a streamed batch reach the table as their documents arrive whatever its
            size (PostgreSQL writes a COPY's rows every 1,000 rows or 64 KB).
        index: Vector index made with ``create``: ``"hnsw"`` (default), ``"ivfflat"`` (better
            built after loading, since its lists are fit to the rows present) or ``None``. A
            btree index on ``document_id`` is always made.
        metric: Distance of the vector index: ``"cosine"`` (default), ``"l2"`` or
            ``"inner_product"``.
        ivfflat_lists: ``lists`` of an IVFFlat index. Default 100.

    Raises:
        ConfigError: an option is invalid (at construction) or the table is missing or does
            not fit (when the workers start).

    Example:
        >>> docs | EmbedChunks("minilm") | WriteToPgVector(       # doctest: +SKIP
        ...     "postgresql://app@db/rag", "chunks", create=True, dimension=384)
    """

    def __init__(self, dsn: str, table: str, *, create: bool = False, dimension: Optional[int] = None,
                 batch_size: int = 5000, index: Optional[str] = "hnsw", metric: str = "cosine",
                 ivfflat_lists: int = 100):
        super().__init__()
        if not isinstance(dsn, str) or not dsn.strip():
            raise ConfigError(f"WriteToPgVector.dsn must be a connection string, got {dsn!r}", field="dsn")
        if not isinstance(table, str) or not all(_NAME.match(p) for p in table.split(".")) or table.count(".") > 1:
            raise ConfigError(f"WriteToPgVector.table={table!r} must be a name or schema.name of letters, digits "
                              "and underscores (at most 41 characters each)", field="table")
        for name, value in (("batch_size", batch_size), ("ivfflat_lists", ivfflat_lists)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"WriteToPgVector.{name} must be an integer >= 1, got {value!r}", field=name)
        if dimension is not None and (isinstance(dimension, bool) or not isinstance(dimension, int)
                                      or not 1 <= dimension <= 16000):
            raise ConfigError(f"WriteToPgVector.dimension must be an integer in [1, 16000], got {dimension!r}",
                              field="dimension")
        if create and dimension is None:
            raise ConfigError("WriteToPgVector(create=True) needs dimension=N for the vector(N) column "
                              "and its index", field="dimension")
        if index not in INDEXES:
            raise ConfigError(f"WriteToPgVector.index={index!r} must be one of {INDEXES}", field="index")
        if metric not in METRICS:
            raise ConfigError(f"WriteToPgVector.metric={metric!r} must be one of {tuple(METRICS)}", field="metric")
        self.config = _Config(dsn, table, bool(create), dimension, batch_size, index, metric, ivfflat_lists)

    def expand(self, pcoll):
        return pcoll | "WriteToPgVector" >> beam.ParDo(_WriteFn(self.config))

    def display_data(self):
        cfg = self.config
        return {"dsn": _redact(cfg.dsn), "table": cfg.table, "create": cfg.create, "dimension": cfg.dimension or 0,
                "batch_size": cfg.batch_size, "index": cfg.index or "none", "metric": cfg.metric}
