"""beam-chunking: retrieval-ready document chunking at any scale, on Apache Beam.

The core (types, strategies, parsers, sizers) never imports Beam; the Beam transforms are in
:mod:`beam_chunking.transforms` and are imported lazily from here so that
``import beam_chunking`` stays light.

Layers, highest first; a module imports only its own layer and the layers below it, with no
cycles, and Beam only in ``transforms`` and ``pipelines`` (``tests/test_layers.py`` checks
every import, lazy ones included)::

    docs                       the generated blocks of the documentation
    pipelines                  options, spec, run, CLI                    (Beam)
    transforms                 ReadDocuments ... WriteChunkTable          (Beam)
    ----------------------------------------------------------------- no Beam below
    config                     JobConfig: the job the spec, CLI and ChunkFiles share
    registry                   get(name, **options), plugins
    refiners      domains      SemanticRefiner; legal, book, academic ...
    strategies                 recursive, token, sentence, structural ...
    parsers       embeddings   bytes -> sections; text -> vectors
    schema                     pyarrow schemas of the output tables
    sizing                     characters, tiktoken, tokenizer.json
    text                       spans, sentences, headings, packing, tokens
    errors   types   ids   version   values, errors and the version
"""
from __future__ import annotations

from beam_chunking.errors import (
    ChunkingError,
    ConfigError,
    DecodeError,
    OutputExistsError,
    ParseError,
    TokenizerUnavailable,
    UnsupportedContentType,
)
from beam_chunking.strategies import (
    CodeChunker,
    FixedSizeChunker,
    HierarchicalChunker,
    RecursiveChunker,
    Router,
    SentenceChunker,
    StructuralChunker,
    TokenChunker,
)
from beam_chunking.types import Chunk, Document, ParsedDocument, Section
from beam_chunking.version import __version__

# Names loaded on first use: the registry imports every strategy and template.
_LAZY = {"get": "beam_chunking.registry", "JobConfig": "beam_chunking.config"}
_TRANSFORMS = {"ReadDocuments", "ParseDocuments", "ChunkDocuments", "EmbedChunks", "WriteChunkTable", "ChunkFiles",
               "read_table", "table_files"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    if name in _TRANSFORMS:
        from beam_chunking import transforms

        return getattr(transforms, name)
    raise AttributeError(f"module 'beam_chunking' has no attribute {name!r}")


__all__ = [
    "Chunk", "Document", "ParsedDocument", "Section",
    "FixedSizeChunker", "RecursiveChunker", "TokenChunker", "SentenceChunker", "HierarchicalChunker",
    "StructuralChunker", "CodeChunker", "Router", "get", "JobConfig",
    "ChunkingError", "ConfigError", "DecodeError", "OutputExistsError", "ParseError",
    "TokenizerUnavailable", "UnsupportedContentType",
    *sorted(_TRANSFORMS),
]
