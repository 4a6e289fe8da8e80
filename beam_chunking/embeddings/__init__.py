"""Embedders: text -> L2-normalised float32 vectors, and text -> per-token vectors with offsets.

Models run locally on onnxruntime with HF ``tokenizers``; nothing downloads at run time. The
default model (``minilm()``) is all-MiniLM-L6-v2 as int8 ONNX from the ``minilm`` extra.
:class:`HostedEmbedder` calls a server over the OpenAI-compatible ``/v1/embeddings`` protocol
(the ``llm`` extra).
"""
from beam_chunking.embeddings.base import Embedder, TokenEmbedder
from beam_chunking.embeddings.hosted import HostedEmbedder
from beam_chunking.embeddings.minilm import minilm, minilm_paths
from beam_chunking.embeddings.onnx import OnnxEmbedder, ProviderUnavailable
from beam_chunking.embeddings.resolve import resolve_embedder

__all__ = ["Embedder", "TokenEmbedder", "HostedEmbedder", "OnnxEmbedder", "ProviderUnavailable", "minilm", "minilm_paths",
           "resolve_embedder"]
