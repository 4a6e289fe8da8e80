"""VectorCache: a hosted model's vectors on disk or in GCS, keyed by (model, dimensions, text).

A local folder holds one SQLite database, ``vectors.sqlite`` (WAL journal): a request's 64
vectors are stored in one transaction and looked up in one query. One small file per vector,
as the chat-answer cache keeps, cost 0.3-0.5 ms per file created on the virtual disks
measured, more than the request itself under a rate limit (bench/embed_hosted.py). Several
processes of one machine share the database; SQLite serialises their writes.

A ``gs://`` prefix holds one small JSON object per vector (through
:class:`~beam_chunking.llm.cache.ResponseCache`, the ``gcp`` extra), read and written
concurrently by the caller's threads: objects need no locking across workers.

Vectors are stored as little-endian ``float32``; an entry that cannot be read is a miss.
"""
from __future__ import annotations

import base64
import functools
import hashlib
import json
import os
import sqlite3
import threading
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from beam_chunking.llm.cache import ResponseCache

#: Keys per lookup query (SQLite allows 32766 parameters; smaller queries stay fast).
LOOKUP_BATCH = 500
#: Seconds a write waits for another process's transaction before it fails.
BUSY_SECONDS = 60.0


def vector_key(model: str, dimensions: Optional[int], text: str) -> str:
    """Hex SHA-256 naming the vector of ``text`` under a model and a requested size.

    The model and size are JSON (one line, so the newline after them ends them); the text
    follows as it is: escaping a chunk into JSON cost more than the lookup itself.
    """
    return hashlib.sha256((_head(model, dimensions) + text).encode("utf-8", "surrogatepass")).hexdigest()


@functools.lru_cache(maxsize=64)  # a job has one or two (model, size) pairs; bounded all the same
def _head(model: str, dimensions: Optional[int]) -> str:
    return json.dumps(["embeddings", model, dimensions or "model"]) + "\n"


class VectorCache:
    """Vectors stored under ``location``: a local folder or a ``gs://bucket/prefix``.

    Args:
        location: Where vectors live; created on first use.

    Example:
        >>> import tempfile
        >>> cache = VectorCache(tempfile.mkdtemp())
        >>> cache.put_many([("k", np.ones(2, np.float32))])
        >>> cache.get_many(["k", "missing"])["k"].tolist()
        [1.0, 1.0]
    """

    def __init__(self, location: str):
        self.location = location.rstrip("/")
        self.remote = self.location.startswith("gs://")
        self._objects = ResponseCache(self.location) if self.remote else None
        self._db: Optional[sqlite3.Connection] = None
        self._lock = threading.Lock()  # one connection, shared by the process's threads

    def _connection(self) -> sqlite3.Connection:
        if self._db is None:
            os.makedirs(self.location, exist_ok=True)
            db = sqlite3.connect(os.path.join(self.location, "vectors.sqlite"), timeout=BUSY_SECONDS,
                                 check_same_thread=False, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")  # WAL: a crash loses at most the last commits, never corrupts
            db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB NOT NULL)")
            self._db = db
        return self._db

    def get_many(self, keys: Sequence[str], threads=None) -> Dict[str, np.ndarray]:
        """The stored vectors of ``keys`` (only those found).

        Args:
            keys: The keys (:func:`vector_key`).
            threads: An executor to look ``gs://`` objects up concurrently; ``None``: in turn.
        """
        if not keys:
            return {}
        if self.remote:
            found = (threads.map if threads is not None else map)(self._objects.get, keys)
            return {k: v for k, v in zip(keys, map(_decoded_object, found)) if v is not None}
        out: Dict[str, np.ndarray] = {}
        with self._lock:
            db = self._connection()
            for k in range(0, len(keys), LOOKUP_BATCH):
                part = list(keys[k:k + LOOKUP_BATCH])
                rows = db.execute(f"SELECT key, vector FROM vectors WHERE key IN ({','.join('?' * len(part))})", part)
                out.update((key, np.frombuffer(blob, dtype="<f4")) for key, blob in rows)
        return {k: v for k, v in out.items() if len(v)}

    def put_many(self, items: Iterable[Tuple[str, np.ndarray]]) -> None:
        """Store ``(key, vector)`` pairs: one transaction locally, one object each on ``gs://``."""
        pairs: List[Tuple[str, bytes]] = [(k, np.asarray(v, dtype="<f4").tobytes()) for k, v in items]
        if self.remote:
            for key, data in pairs:
                self._objects.put(key, {"vector": base64.b64encode(data).decode()})
            return
        with self._lock:
            db = self._connection()
            db.execute("BEGIN IMMEDIATE")
            try:
                db.executemany("INSERT OR REPLACE INTO vectors (key, vector) VALUES (?, ?)", pairs)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    def close(self) -> None:
        """Close the database (reopened on next use)."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


def _decoded_object(value) -> Optional[np.ndarray]:
    try:
        vector = np.frombuffer(base64.b64decode(value["vector"]), dtype="<f4")
    except Exception:  # missing or damaged: a miss, asked again
        return None
    return vector if len(vector) else None
