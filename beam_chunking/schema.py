"""The Parquet schemas of the output tables (chunks, documents, parents, changes), and the
conversion of values into rows.

One ``pyarrow.Schema`` object per table is the single source of truth. Reserved metadata
keys become typed columns; every other key goes into the ``metadata`` map, whose values are
a struct with one typed field per kind, so an int written is an int read back (and a float
stays a float, a bool a bool, a list of strings a list).
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import pyarrow as pa

from beam_chunking.errors import ChunkingError
from beam_chunking.types import RESERVED_KEYS, Chunk

METADATA_VALUE = pa.struct(
    [
        pa.field("str", pa.string()),
        pa.field("int", pa.int64()),
        pa.field("float", pa.float64()),
        pa.field("bool", pa.bool_()),
        pa.field("list", pa.list_(pa.string())),
    ]
)

#: Types of the reserved metadata keys that become columns.
RESERVED_TYPES: Dict[str, pa.DataType] = {
    "heading": pa.string(),
    "section_path": pa.list_(pa.string()),
    "page": pa.int32(),
    "page_end": pa.int32(),
    # One rectangle per block of lines and page, in PDF points from the page's top-left
    # corner (pixels for images): what a viewer highlights.
    "boxes": pa.list_(pa.struct([pa.field("page", pa.int32()), pa.field("x0", pa.float32()),
                                 pa.field("y0", pa.float32()), pa.field("x1", pa.float32()),
                                 pa.field("y1", pa.float32())])),
    "slide": pa.int32(),
    "sheet": pa.string(),
    "row": pa.int64(),
    "element_path": pa.string(),
    "language": pa.string(),
    "chunk_kind": pa.string(),
    "template": pa.string(),
    "parent_id": pa.string(),
}
assert tuple(RESERVED_TYPES) == RESERVED_KEYS

#: Documents-table counters of chat-model calls, one per column (int64, null when no call
#: was made): calls answered, of which from the cache, calls that failed after their retries,
#: prompt and completion tokens the server reported, and units emitted as their source text
#: because the answer was unusable or the call failed.
LLM_COLUMNS = ("llm_calls", "llm_cached_calls", "llm_failed_calls", "llm_prompt_tokens", "llm_completion_tokens",
               "llm_fallbacks")

#: Documents-table counters of a hosted embedding model (int64, null when the embedding
#: stage used a local model or none): chunk texts embedded, of which answered from the
#: vector cache (or by an identical text in the same call), HTTP requests sent for them (a
#: request shared by several documents counts for the first), and the input tokens the
#: server reported (a shared request's tokens split by the texts' UTF-8 sizes, so they add
#: up).
EMBED_COLUMNS = ("embed_texts", "embed_cached_texts", "embed_requests", "embed_tokens")

#: Every per-document counter a stage may report (:data:`LLM_COLUMNS`, :data:`EMBED_COLUMNS`).
COUNTER_COLUMNS = LLM_COLUMNS + EMBED_COLUMNS

CHUNKS_SCHEMA = pa.schema(
    [
        pa.field("chunk_id", pa.string(), nullable=False),
        pa.field("document_id", pa.string(), nullable=False),
        pa.field("chunk_index", pa.int32(), nullable=False),
        pa.field("chunk_count", pa.int32(), nullable=False),
        pa.field("text", pa.string(), nullable=False),
        pa.field("start", pa.int64(), nullable=False),
        pa.field("end", pa.int64(), nullable=False),
        pa.field("token_count", pa.int32()),
        pa.field("strategy", pa.string(), nullable=False),
        pa.field("strategy_fingerprint", pa.string(), nullable=False),
        pa.field("content_type", pa.string()),
        pa.field("uri", pa.string()),
        *[pa.field(k, t) for k, t in RESERVED_TYPES.items()],
        pa.field("metadata", pa.map_(pa.string(), METADATA_VALUE)),
        pa.field("embedding", pa.list_(pa.float32())),
    ]
)

DOCUMENTS_SCHEMA = pa.schema(
    [
        pa.field("document_id", pa.string(), nullable=False),
        pa.field("uri", pa.string()),
        pa.field("content_type", pa.string()),
        pa.field("size_bytes", pa.int64()),
        pa.field("sha256", pa.string()),
        pa.field("status", pa.string(), nullable=False),
        pa.field("stage", pa.string()),
        pa.field("error_type", pa.string()),
        pa.field("error_message", pa.string()),
        pa.field("section_count", pa.int32()),
        pa.field("chunk_count", pa.int32()),
        pa.field("strategy", pa.string()),
        pa.field("strategy_fingerprint", pa.string()),
        pa.field("encoding", pa.string()),
        pa.field("encoding_confidence", pa.float64()),
        pa.field("decode_replacements", pa.int64()),
        pa.field("dropped", pa.list_(pa.string())),
        pa.field("dropped_characters", pa.int64()),
        *[pa.field(name, pa.int64()) for name in COUNTER_COLUMNS],
    ]
)

#: What happened to a document since the previous run, the changes table's ``change``:
#: ``new`` (no previous row), ``changed`` (processed again: its bytes, content type, strategy
#: fingerprint or the job's options differ, or it failed last time), ``unchanged`` (its rows
#: were copied from the previous run) or ``deleted`` (in the previous run, matched no more).
CHANGES = ("new", "changed", "unchanged", "deleted")

#: One row per document of this run or the previous one: what a store fed from the previous
#: run must do. ``delete_chunk_ids`` lists the previous run's chunk ids of a ``changed`` or
#: ``deleted`` document (empty for the others); delete them, then write the document's
#: current chunks.
CHANGES_SCHEMA = pa.schema(
    [
        pa.field("document_id", pa.string(), nullable=False),
        pa.field("uri", pa.string()),
        pa.field("change", pa.string(), nullable=False),
        pa.field("delete_chunk_ids", pa.list_(pa.string())),
    ]
)

#: Parquet codecs the writer accepts.
COMPRESSIONS = ("zstd", "snappy", "gzip", "none")

_INT64 = (-(2**63), 2**63 - 1)


def metadata_kind(key: str, value: Any) -> Optional[str]:
    """The typed-struct field that holds ``value``: ``"str"``, ``"int"``, ``"float"``,
    ``"bool"`` or ``"list"``; ``None`` for ``None``.

    Raises:
        ChunkingError: the value is not ``str | int | float | bool | None | list[str]``.
    """
    if value is None:
        return None
    kind = _KINDS.get(type(value))
    if kind is None:  # a subclass (an IntEnum, a str subclass)
        kind = next((k for t, k in _KINDS.items() if isinstance(value, t)), None)
    if kind == "int":
        if not _INT64[0] <= value <= _INT64[1]:
            raise ChunkingError(f"metadata[{key!r}]={value} does not fit a 64-bit integer")
    elif kind is None or (kind == "list" and not all(isinstance(v, str) for v in value)):
        raise ChunkingError(
            f"metadata[{key!r}] has type {type(value).__name__}; metadata values must be "
            "str, int, float, bool, None or a list of str"
        )
    return kind


# bool before int: a bool is an int to isinstance.
_KINDS = {bool: "bool", str: "str", int: "int", float: "float", list: "list", tuple: "list"}


def encode_metadata_value(key: str, value: Any) -> Dict[str, Any]:
    """Return the typed struct for one metadata value.

    Raises:
        ChunkingError: the value is not ``str | int | float | bool | None | list[str]``.
    """
    slot = _EMPTY_SLOT.copy()
    if value is None:
        return slot
    kind = _KINDS.get(type(value))
    if kind is None or kind == "int" or kind == "list":  # the checks of metadata_kind
        kind = metadata_kind(key, value)
    slot[kind] = list(value) if kind == "list" else value
    return slot


_EMPTY_SLOT: Dict[str, Any] = {"str": None, "int": None, "float": None, "bool": None, "list": None}


def typed_metadata(items: List[Tuple[str, Any]]) -> List[Tuple[str, Dict[str, Any]]]:
    """The ``metadata`` cell of the chunks table: ``(key, typed struct)`` pairs, in order.

    Raises:
        ChunkingError: a value is not ``str | int | float | bool | None | list[str]``.
    """
    return [(k, encode_metadata_value(k, v)) for k, v in items]


def decode_metadata(entries: Optional[List[Any]]) -> Dict[str, Any]:
    """Turn a ``metadata`` cell read back with pyarrow into a plain typed dict."""
    out: Dict[str, Any] = {}
    for key, slot in entries or []:
        value = None
        for kind in ("str", "int", "float", "bool", "list"):
            if slot.get(kind) is not None:
                value = slot[kind]
                break
        out[key] = value
    return out


_NO_RESERVED: Dict[str, None] = dict.fromkeys(RESERVED_KEYS)


def _reserved(key: str, value: Any) -> Any:
    if value is None:
        return None
    kind = _RESERVED_KIND[key]
    if kind == "int":
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif kind == "boxes":
        ok = isinstance(value, (list, tuple)) and all(isinstance(v, dict) for v in value)
        value = list(value) if ok else value
    elif kind == "list":
        ok = isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)
        value = list(value) if ok else value
    else:
        ok = isinstance(value, str)
    if not ok:
        raise ChunkingError(f"metadata[{key!r}]={value!r} must be of type {RESERVED_TYPES[key]}")
    return value


# The check each reserved key's column needs, worked out once.
_RESERVED_KIND = {k: "int" if pa.types.is_integer(t) else "boxes" if k == "boxes"
                  else "list" if pa.types.is_list(t) else "str" for k, t in RESERVED_TYPES.items()}


def _float_list(vector: Sequence[float]) -> List[float]:
    return [float(x) for x in vector]


def chunk_rows(
    chunks: List[Chunk], *, strategy: str, fingerprint: str, content_type: str, uri: str,
    encode_vector: Callable[[Sequence[float]], Any] = _float_list,
    encode_metadata: Callable[[List[Tuple[str, Any]]], Any] = typed_metadata,
) -> List[Dict[str, Any]]:
    """Return one chunks-table row per chunk (``chunk_count`` is the document's total).

    Args:
        chunks: The document's chunks, in order.
        strategy, fingerprint, content_type, uri: The document's values of those columns.
        encode_vector: Turns a chunk's embedding into its ``embedding`` cell. Default: a
            list of Python floats (what the Parquet table takes). A sink with its own wire
            form passes its encoder, so no list of floats is made per row.
        encode_metadata: Turns the metadata that is not a reserved column, ``(key, value)``
            pairs in key order, into the ``metadata`` cell; it must reject what
            :func:`typed_metadata` (the default, the Parquet table's typed structs) rejects.
    """
    total = len(chunks)
    rows = []
    for c in chunks:
        meta: Mapping[str, Any] = c.metadata
        row: Dict[str, Any] = {
            "chunk_id": c.id,
            "document_id": c.document_id,
            "chunk_index": c.index,
            "chunk_count": total,
            "text": c.text,
            "start": c.start,
            "end": c.end,
            "token_count": c.token_count,
            "strategy": strategy,
            "strategy_fingerprint": fingerprint,
            "content_type": content_type,
            "uri": uri,
        }
        # Every reserved column, in schema order; only the keys a chunk has are checked.
        row.update(_NO_RESERVED)
        other = []
        for k, v in sorted(meta.items()):
            if k in RESERVED_TYPES:
                row[k] = _reserved(k, v)
            else:
                other.append((k, v))
        row["metadata"] = encode_metadata(other)
        row["embedding"] = None if c.embedding is None else encode_vector(c.embedding)
        rows.append(row)
    return rows


def chunk_batch(rows: List[Dict[str, Any]]) -> pa.RecordBatch:
    """Convert rows to a record batch of :data:`CHUNKS_SCHEMA`, validating every value.

    Raises:
        ChunkingError: a value does not fit its column (the message says which).
    """
    try:
        return pa.RecordBatch.from_pylist(rows, schema=CHUNKS_SCHEMA)
    except (pa.ArrowException, UnicodeError, TypeError, ValueError, OverflowError) as exc:
        raise ChunkingError(f"chunk rows do not fit the chunks table schema: {exc}") from None


def document_row(
    *,
    document_id: str,
    uri: str,
    content_type: Optional[str],
    size_bytes: Optional[int],
    sha256: Optional[str],
    status: str,
    stage: Optional[str] = None,
    error_type: Optional[str] = None,
    error_message: Optional[str] = None,
    section_count: Optional[int] = None,
    chunk_count: Optional[int] = None,
    strategy: Optional[str] = None,
    strategy_fingerprint: Optional[str] = None,
    encoding: Optional[str] = None,
    encoding_confidence: Optional[float] = None,
    decode_replacements: Optional[int] = None,
    dropped: Optional[List[str]] = None,
    dropped_characters: Optional[int] = None,
    **counts: Optional[int],
) -> Dict[str, Any]:
    """Return one documents-table row; ``status`` is ``ok``, ``empty`` or ``failed``.

    ``strategy_fingerprint`` is the fingerprint of the strategy that chunked the document
    (``None`` for a failed one); an incremental run compares it. ``encoding`` is the Python
    codec the text was decoded with (``utf-8``, ``cp1252``, ``gb18030`` ...) and
    ``encoding_confidence`` how sure its detection was, in [0, 1] (1.0 for UTF-8); both
    ``None`` where no parser decoded the file as text. ``counts`` are the
    :data:`LLM_COLUMNS` of a strategy that called a chat model and the :data:`EMBED_COLUMNS`
    of a hosted embedding model.

    Raises:
        ChunkingError: a counter that is not a documents-table column.
    """
    unknown = sorted(set(counts) - set(COUNTER_COLUMNS))
    if unknown:
        raise ChunkingError(f"{unknown[0]!r} is not a documents-table counter (counters: {', '.join(COUNTER_COLUMNS)})")
    return {
        "document_id": document_id,
        "uri": uri,
        "content_type": content_type,
        "size_bytes": size_bytes,
        "sha256": sha256,
        "status": status,
        "stage": stage,
        "error_type": error_type,
        "error_message": error_message,
        "section_count": section_count,
        "chunk_count": chunk_count,
        "strategy": strategy,
        "strategy_fingerprint": strategy_fingerprint,
        "encoding": encoding,
        "encoding_confidence": encoding_confidence,
        "decode_replacements": decode_replacements,
        "dropped": dropped,
        "dropped_characters": dropped_characters,
        **{name: counts.get(name) for name in COUNTER_COLUMNS},
    }


def change_row(document_id: str, uri: Optional[str], change: str,
               delete_chunk_ids: Optional[List[str]] = None) -> Dict[str, Any]:
    """Return one changes-table row; ``change`` is one of :data:`CHANGES`.

    Raises:
        ChunkingError: ``change`` is not one of :data:`CHANGES`.
    """
    if change not in CHANGES:
        raise ChunkingError(f"change={change!r} must be one of {CHANGES}")
    return {"document_id": document_id, "uri": uri, "change": change,
            "delete_chunk_ids": sorted(delete_chunk_ids or [])}
