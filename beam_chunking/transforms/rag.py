"""Our chunks as Beam's RAG items (``apache_beam.ml.rag.types.EmbeddableItem``) and back.

Beam 2.77 names its item ``EmbeddableItem`` (``Chunk`` is kept as an alias): ``content.text``,
``id``, ``index``, a ``metadata`` dict and an ``Embedding`` with ``dense_embedding``. With
:class:`ToEmbeddableItems` our chunks go through Beam's own embedding transforms
(``apache_beam.ml.rag.embeddings``) and vector-store writers (``apache_beam.ml.rag.ingestion``:
Qdrant, Milvus, BigQuery, AlloyDB / Cloud SQL / PostgreSQL, Spanner); with
:class:`FromEmbeddableItems` their output comes back as our ``Chunk`` objects or chunks-table rows.

An item's ``id`` is the chunk's deterministic id (``"{document_id}:{start:010d}"``), never a
random uuid, so a retried bundle or a re-run overwrites the same points. Stores that accept
only UUIDs or integers as ids (Qdrant) get ``id="uuid5"``: a UUID derived from the chunk id,
equally stable. ``metadata`` holds plain, typed values, flat so that stores can filter on them:

- ``chunk_id``, ``document_id``, ``chunk_index``, ``start``, ``end`` and ``token_count`` (when
  known); the index is also the item's ``index``, but not every writer stores that;
- for a chunked document or a chunks-table row also ``uri``, ``content_type``, ``strategy``,
  ``strategy_fingerprint`` and ``chunk_count``;
- every key of the chunk's own metadata (``page``, ``heading``, ``section_path`` ... and the
  caller's tags), with its value unchanged.

- with ``text_key``, the chunk's text, for writers that store only the metadata beside the
  vector (Beam's Qdrant writer keeps ``metadata`` as the point's payload and drops the text).

The chunk's vector is the item's dense embedding.
"""
from __future__ import annotations

import uuid
from typing import Any, Dict, Iterable, Optional

import apache_beam as beam
from apache_beam.ml.rag.types import Content, EmbeddableItem, Embedding

from beam_chunking.errors import ChunkingError, ConfigError
from beam_chunking.schema import RESERVED_TYPES, chunk_rows, decode_metadata
from beam_chunking.transforms._common import LeanDoFn, NAMESPACE
from beam_chunking.transforms.records import ChunkedDocument, Failure
from beam_chunking.types import Chunk

#: Item metadata keys that hold the chunk's own fields.
CHUNK_FIELDS = ("chunk_id", "document_id", "chunk_index", "start", "end", "token_count")
#: Item metadata keys that hold its document's fields (absent for a bare ``Chunk``).
DOCUMENT_FIELDS = ("uri", "content_type", "strategy", "strategy_fingerprint", "chunk_count")
ID_MODES = ("chunk_id", "uuid5")
#: Namespace of ``id="uuid5"`` ids; fixed forever, or the ids of existing points would change.
ID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "beam-chunking:chunk")
_OWN = frozenset(CHUNK_FIELDS + DOCUMENT_FIELDS)


def item_id(chunk_id: str, mode: str = "chunk_id") -> str:
    """The item id of a chunk: the chunk id itself, or ``uuid5(ID_NAMESPACE, chunk_id)``."""
    return chunk_id if mode == "chunk_id" else str(uuid.uuid5(ID_NAMESPACE, chunk_id))


def chunk_to_item(chunk: Chunk, document: Optional[Dict[str, Any]] = None, mode: str = "chunk_id",
                  text_key: Optional[str] = None) -> EmbeddableItem:
    """Convert one chunk; ``document`` adds the :data:`DOCUMENT_FIELDS` it holds, and
    ``text_key`` (default ``None``: not copied) the text to the metadata under that key.

    Raises:
        ChunkingError: a key of the chunk's metadata is one of the item's own fields.
    """
    clash = _OWN.union([text_key] if text_key else []).intersection(chunk.metadata)
    if clash:
        raise ChunkingError(f"chunk {chunk.id} has metadata keys {sorted(clash)}, which Beam items use for the "
                            "chunk's own fields; rename them", document_id=chunk.document_id)
    meta: Dict[str, Any] = {"chunk_id": chunk.id, "document_id": chunk.document_id, "chunk_index": chunk.index,
                            "start": chunk.start, "end": chunk.end}
    if chunk.token_count is not None:
        meta["token_count"] = chunk.token_count
    meta.update((k, v) for k, v in (document or {}).items() if v is not None)
    meta.update(chunk.metadata)
    if text_key:
        meta[text_key] = chunk.text
    vector = None if chunk.embedding is None else Embedding(dense_embedding=[float(x) for x in chunk.embedding])
    return EmbeddableItem(content=Content(text=chunk.text), id=item_id(chunk.id, mode), index=chunk.index,
                          metadata=meta, embedding=vector)


def row_to_chunk(row: Dict[str, Any]) -> Chunk:
    """The ``Chunk`` of a chunks-table row (its document fields left out)."""
    meta = {k: row[k] for k in RESERVED_TYPES if row.get(k) is not None}
    meta.update(decode_metadata(row.get("metadata")))
    return _stored_chunk(row["chunk_id"], row["document_id"], row["chunk_index"], row["start"], row["end"],
                         row["text"], row.get("token_count"), meta, row.get("embedding"))


def _stored_chunk(chunk_id: str, document_id: str, index: int, start: int, end: int, text: str,
                  token_count: Optional[int], metadata: Dict[str, Any], embedding) -> Chunk:
    """Rebuild a chunk that a strategy made (with ``make_chunk``) and a store gave back.

    The one place besides ``make_chunk`` that calls ``Chunk(...)``: there is no document text
    to cut here, the text is what was stored. The id must be the one the fields give.
    """
    return Chunk(document_id, index, start, end, text, token_count, metadata, embedding,
                 _ordinal(chunk_id, {"document_id": document_id, "start": start}))


def _ordinal(chunk_id: str, fields: Dict[str, Any]) -> int:
    base = f"{fields['document_id']}:{fields['start']:010d}"
    if chunk_id == base:
        return 0
    if chunk_id.startswith(base + "#") and chunk_id[len(base) + 1:].isdigit():
        return int(chunk_id[len(base) + 1:])
    raise ChunkingError(f"chunk id {chunk_id!r} does not match its document_id and start ({base!r})",
                        document_id=fields["document_id"])


def item_to_chunk(item: EmbeddableItem, text_key: Optional[str] = None) -> Chunk:
    """Convert an item made by :func:`chunk_to_item` back (document fields are dropped);
    ``text_key`` names the metadata key that holds the text, if one does.

    Raises:
        ChunkingError: the item lacks ``document_id``, ``start`` or ``end`` in its metadata.
    """
    meta = dict(item.metadata)
    missing = [k for k in ("document_id", "start", "end") if k not in meta]
    if missing:
        raise ChunkingError(f"item {item.id} has no {missing} in its metadata; FromEmbeddableItems reads items "
                            "made by ToEmbeddableItems")
    own = {k: meta.pop(k) for k in CHUNK_FIELDS + DOCUMENT_FIELDS if k in meta}
    text = meta.pop(text_key) if text_key and text_key in meta else None
    if item.content.text is not None:
        text = item.content.text
    chunk_id = own.get("chunk_id", item.id)
    vector = item.dense_embedding
    return _stored_chunk(chunk_id, own["document_id"], own.get("chunk_index", item.index), own["start"], own["end"],
                         text or "", own.get("token_count"), meta, None if vector is None else list(vector))


def item_to_row(item: EmbeddableItem, text_key: Optional[str] = None) -> Dict[str, Any]:
    """Convert an item to a chunks-table row; missing document fields become ``None`` (``""``
    for the required ``strategy`` and ``strategy_fingerprint``)."""
    doc = item.metadata
    row = chunk_rows([item_to_chunk(item, text_key)], strategy=doc.get("strategy") or "",
                     fingerprint=doc.get("strategy_fingerprint") or "", content_type=doc.get("content_type"),
                     uri=doc.get("uri"))[0]
    row["chunk_count"] = doc.get("chunk_count", row["chunk_count"])
    return row


def _document_fields(element: ChunkedDocument) -> Dict[str, Any]:
    return {"uri": element.uri, "content_type": element.content_type, "strategy": element.strategy,
            "strategy_fingerprint": element.strategy_fingerprint, "chunk_count": len(element.chunks)}


class _ToItemsFn(LeanDoFn):
    def __init__(self, mode: str, text_key: Optional[str]):
        self.mode, self.text_key = mode, text_key
        self.skipped = beam.metrics.Metrics.counter(NAMESPACE, "rag_failures_skipped")

    def process(self, element) -> Iterable[EmbeddableItem]:
        if isinstance(element, Failure):
            self.skipped.inc()  # no chunks to give; the documents table records the failure
        elif isinstance(element, ChunkedDocument):
            doc = _document_fields(element)
            for chunk in element.chunks:
                yield chunk_to_item(chunk, doc, self.mode, self.text_key)
        elif isinstance(element, Chunk):
            yield chunk_to_item(element, None, self.mode, self.text_key)
        elif isinstance(element, dict):
            doc = {k: element.get(k) for k in DOCUMENT_FIELDS}
            yield chunk_to_item(row_to_chunk(element), doc, self.mode, self.text_key)
        else:
            raise ChunkingError(f"ToEmbeddableItems takes ChunkedDocument, Chunk or chunks-table row (dict) "
                                f"elements, got {type(element).__name__}")


class ToEmbeddableItems(beam.PTransform):
    """Turn chunked documents, chunks or chunks-table rows into Beam ``EmbeddableItem``s.

    One item per chunk, with the deterministic chunk id, flat typed metadata (see the module
    docstring) and the vector when the chunk has one. ``Failure`` records are skipped and
    counted (``rag_failures_skipped``).

    Args:
        id: ``"chunk_id"`` (default): the item id is the chunk id. ``"uuid5"``: a UUID derived
            from it, for stores that take only UUIDs (Qdrant); ``metadata["chunk_id"]`` still
            holds the chunk id and :class:`FromEmbeddableItems` restores it.
        text_key: Also copy the text into ``metadata[text_key]``, for writers that store only
            the metadata with the vector (Beam's Qdrant writer). Default ``None``.

    Example:
        >>> items = docs | ToEmbeddableItems(id="uuid5", text_key="text")   # doctest: +SKIP
        >>> items | VectorDatabaseWriteTransform(QdrantWriteConfig(...))
    """

    def __init__(self, id: str = "chunk_id", text_key: Optional[str] = None):  # noqa: A002 - the item field
        super().__init__()
        if id not in ID_MODES:
            raise ConfigError(f"ToEmbeddableItems.id={id!r} must be one of {ID_MODES}", field="id")
        _check_text_key("ToEmbeddableItems", text_key)
        self.mode, self.text_key = id, text_key

    def expand(self, pcoll):
        return pcoll | "ToEmbeddableItems" >> beam.ParDo(_ToItemsFn(self.mode, self.text_key))

    def display_data(self):
        return {"id": self.mode, "text_key": self.text_key or ""}


def _check_text_key(owner: str, text_key: Optional[str]) -> None:
    if text_key is not None and (not isinstance(text_key, str) or not text_key or text_key in _OWN):
        raise ConfigError(f"{owner}.text_key={text_key!r} must be a non-empty key other than {sorted(_OWN)}",
                          field="text_key")


class FromEmbeddableItems(beam.PTransform):
    """Turn ``EmbeddableItem``s made by :class:`ToEmbeddableItems` back into our chunks.

    Args:
        as_rows: ``False`` (default) gives ``Chunk`` objects (document fields such as ``uri``
            are not part of a ``Chunk`` and are dropped); ``True`` gives chunks-table rows that
            keep them, ready for :func:`beam_chunking.schema.chunk_batch`.
        text_key: The metadata key that holds the text when the items' content has none (as
            after a store that keeps only metadata). Default ``None``.
    """

    def __init__(self, as_rows: bool = False, text_key: Optional[str] = None):
        super().__init__()
        _check_text_key("FromEmbeddableItems", text_key)
        self.as_rows, self.text_key = bool(as_rows), text_key

    def expand(self, pcoll):
        convert = item_to_row if self.as_rows else item_to_chunk
        return pcoll | "FromEmbeddableItems" >> beam.Map(convert, self.text_key)

    def display_data(self):
        return {"as_rows": self.as_rows, "text_key": self.text_key or ""}
