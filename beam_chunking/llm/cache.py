"""ResponseCache: model answers on disk or in GCS, keyed by (model, prompt version, input).

One small JSON object per answer, named by the SHA-256 of its key, so concurrent writers of
the same answer write the same bytes and nothing needs locking. Local files are written to a
temporary name and renamed, so a crash never leaves half an answer that a re-run would trust.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from typing import Any, BinaryIO, Callable, Dict, Optional

from beam_chunking.errors import require_extra


def cache_key(model: str, prompt_version: str, text: str) -> str:
    """Hex SHA-256 naming the answer to ``text`` under a model and a prompt version."""
    payload = json.dumps([model, prompt_version, text], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def write_atomically(path: str, write: Callable[[BinaryIO], Any]) -> None:
    """Write ``path`` whole or not at all: ``write(file)`` fills a temporary file beside it,
    which then replaces ``path`` (readers in other processes never see half a file). The
    folder is created when missing; the temporary file is removed if ``write`` fails."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".", prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


class ResponseCache:
    """Answers stored under ``location``: a local folder or a ``gs://bucket/prefix``.

    Args:
        location: Where answers live; created on first write.
    """

    def __init__(self, location: str):
        self.location = location.rstrip("/")
        self._bucket = None
        self._prefix = ""
        if self.location.startswith("gs://"):
            storage = require_extra("google.cloud.storage", "google-cloud-storage", "gcp")
            bucket, _, prefix = self.location[len("gs://"):].partition("/")
            self._bucket = storage.Client().bucket(bucket)
            self._prefix = f"{prefix}/" if prefix else ""

    def _name(self, key: str) -> str:
        return f"{key[:2]}/{key}.json"

    def get(self, key: str) -> Optional[Dict[str, Any]]:
        """The stored answer for ``key``, or ``None`` (never stored, or unreadable)."""
        try:
            if self._bucket is not None:
                data = self._bucket.blob(self._prefix + self._name(key)).download_as_bytes()
            else:
                with open(os.path.join(self.location, self._name(key)), "rb") as f:
                    data = f.read()
            value = json.loads(data)
        except Exception:  # a missing or damaged entry is a miss: the model is asked again
            return None
        return value if isinstance(value, dict) else None

    def put(self, key: str, value: Dict[str, Any]) -> None:
        """Store ``value`` (a JSON-serialisable mapping) as the answer for ``key``."""
        data = json.dumps(value, ensure_ascii=False, sort_keys=True).encode("utf-8")
        if self._bucket is not None:
            self._bucket.blob(self._prefix + self._name(key)).upload_from_string(data, content_type="application/json")
            return
        write_atomically(os.path.join(self.location, self._name(key)), lambda f: f.write(data))
