"""Where a model's files come from: local copies of ``gs://`` models, and its published window.

A model on ``gs://`` (``pip install "beam-chunking[gcp]"``) is copied once per worker process
into a local cache folder before onnxruntime opens it: onnxruntime and ``tokenizers`` read
local files only. The copy is written under a temporary name and renamed, so two processes on
one machine copying the same model never see half a file, and a file already in the cache with
the size the bucket reports is not copied again. This module uses google-cloud-storage
directly (as the chat answer cache does), not Beam, so the embeddings package stays free of
Beam.

Example:
    >>> configured_max_tokens(["/nowhere"])
    (None, None)
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from typing import Dict, Iterable, Optional, Sequence, Tuple

from beam_chunking.errors import ConfigError, require_extra
from beam_chunking.llm.cache import write_atomically

#: The configuration files read next to a model, in the order :func:`configured_max_tokens`
#: trusts them, each with the key that gives the model's window in tokens.
CONFIG_FILES = (("sentence_bert_config.json", "max_seq_length"),  # what sentence-transformers embeds with
                ("tokenizer_config.json", "model_max_length"),
                ("config.json", "max_position_embeddings"))
#: ``model_max_length`` values at or above this are the "no limit" sentinel (1e30) that
#: ``transformers`` writes when a tokenizer does not know its model's window.
_NO_LIMIT = 1_000_000
#: Model types whose position table holds two entries more than the usable window
#: (positions start after the padding index): the window is ``max_position_embeddings - 2``.
_OFFSET_POSITIONS = {"roberta", "xlm-roberta", "camembert", "longformer", "mpnet", "data2vec-text"}

_LOCK = threading.Lock()
#: ``gs://`` URI -> local copy, per process (a handful of entries: one per model file).
_COPIES: Dict[str, str] = {}


def is_remote(path: Optional[str]) -> bool:
    """Whether ``path`` is a ``gs://`` URI (copied to a local file before use)."""
    return bool(path) and str(path).startswith("gs://")


def default_cache_dir() -> str:
    """``$TMPDIR/beam-chunking-models``: where ``gs://`` models are copied by default."""
    return os.path.join(tempfile.gettempdir(), "beam-chunking-models")


def local_copy(uri: str, cache_dir: Optional[str] = None, siblings: Sequence[str] = ()) -> str:
    """The local path of ``uri``: itself when local, else a copy made once per process.

    Args:
        uri: A local path or a ``gs://bucket/path`` URI.
        cache_dir: Folder of the copies; default :func:`default_cache_dir`. Each URI's
            folder gets its own sub-folder (named by a hash of the folder's URI), so files
            keep their names and the ones beside a model stay beside it.
        siblings: File names also copied from the URI's folder (and its parent, where
            Hugging Face repositories keep configuration next to an ``onnx/`` folder) when
            they exist: configuration files, or an ONNX model's external data. Each lands
            beside the model's copy, the folder's own file preferred to the parent's.

    Returns:
        The local path of the file.

    Raises:
        MissingExtra: a ``gs://`` URI without the gcp extra.
        ConfigError: the object does not exist or cannot be read.
    """
    if not is_remote(uri):
        return uri
    with _LOCK:
        found = _COPIES.get(uri)
        if found is not None and os.path.isfile(found):
            return found
        storage = require_extra("google.cloud.storage", "google-cloud-storage", "gcp")
        client = storage.Client()
        folder = uri.rpartition("/")[0]
        parent = folder.rpartition("/")[0]
        target = _local_name(uri, cache_dir)
        _copy(client, uri, target, required=True)
        for sibling in siblings:
            # The parent's file lands beside the model too, so the local folder alone
            # answers :func:`configured_max_tokens`; the model's own folder wins.
            for where in (folder, parent) if parent.count("/") >= 2 else (folder,):
                if _copy(client, f"{where}/{sibling}", os.path.join(os.path.dirname(target), sibling), False):
                    break
        _COPIES[uri] = target
        return target


def _local_name(uri: str, cache_dir: Optional[str]) -> str:
    folder, _, name = uri.rpartition("/")
    digest = hashlib.sha256(folder.encode("utf-8")).hexdigest()[:16]
    return os.path.join(cache_dir or default_cache_dir(), digest, name)


def _copy(client, uri: str, target: str, required: bool) -> Optional[str]:
    """Copy one object to ``target``; ``None`` when it is missing and not ``required``."""
    bucket, _, key = uri[len("gs://"):].partition("/")
    try:
        blob = client.bucket(bucket).get_blob(key)
    except Exception as exc:
        raise ConfigError(f"{uri}: cannot read the model file ({' '.join(str(exc).split())[:200]})",
                          field="model_path") from None
    if blob is None:
        if required:
            raise ConfigError(f"{uri}: no such object; check the bucket and path", field="model_path")
        return None
    # Which version of the object the copy is: a model re-exported to the same path has
    # another generation and checksum, very often the same size.
    version = f"{blob.generation}:{blob.md5_hash or blob.crc32c}:{blob.size}".encode()
    marker = target + ".version"
    if os.path.isfile(target) and os.path.isfile(marker) and open(marker, "rb").read() == version:
        return target  # another process on this machine copied this version already
    write_atomically(target, blob.download_to_file)
    write_atomically(marker, lambda f: f.write(version))
    return target


def configured_max_tokens(folders: Iterable[str]) -> Tuple[Optional[int], Optional[str]]:
    """The model's window in tokens as its published configuration states it.

    Looks in each folder in turn for the files of :data:`CONFIG_FILES`, trusted in that
    order: ``sentence_bert_config.json`` ``max_seq_length`` (the length sentence-transformers
    embeds with), ``tokenizer_config.json`` ``model_max_length`` (ignored when it is the
    "no limit" sentinel), then ``config.json`` ``max_position_embeddings`` (less 2 for
    RoBERTa-style models, whose first positions are reserved).

    Args:
        folders: Folders to search (the tokenizer's, the model's, the model's parent).

    Returns:
        ``(tokens, path of the file that said so)``, or ``(None, None)`` when no file does.
    """
    folders = list(dict.fromkeys(f for f in folders if f))
    for name, key in CONFIG_FILES:
        for folder in folders:
            path = os.path.join(folder, name)
            try:
                with open(path, encoding="utf-8") as f:
                    data = json.load(f)
            except (OSError, ValueError):
                continue
            value = data.get(key) if isinstance(data, dict) else None
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < _NO_LIMIT:
                continue
            value = int(value)
            if name == "config.json" and data.get("model_type") in _OFFSET_POSITIONS:
                value -= 2
            return value, path
    return None, None
