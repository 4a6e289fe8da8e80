"""ChunkFiles: the whole job as one composite transform."""
from __future__ import annotations

from typing import Any, Dict, Optional

import apache_beam as beam

from beam_chunking.parsers.limits import DEFAULT_LIMITS, DEFAULT_MAX_BYTES, ParseLimits
from beam_chunking.registry import DEFAULT_STRATEGY, get
from beam_chunking.strategies.base import Chunker
from beam_chunking.transforms.chunk import ChunkDocuments
from beam_chunking.transforms.embed import EmbedChunks
from beam_chunking.transforms.parse import ParseDocuments
from beam_chunking.transforms.read import ReadDocuments
from beam_chunking.transforms.write import WriteChunkTable


class ChunkFiles(beam.PTransform):
    """Read, parse, chunk and write: ``p | ChunkFiles("docs/*", "out/")``.

    Args:
        input: File pattern to read.
        output: Output folder for the chunks and documents tables.
        strategy: A strategy or Router; default ``RecursiveChunker()`` (512/50 characters).
        overwrite: Replace an existing output. Default ``False``.
        token_counter: Sizer spec for ``token_count`` of character strategies. Default ``"cl100k_base"``.
        decode_errors: ``"strict"`` (default) or ``"replace"``.
        compression: Parquet codec. Default ``"zstd"``.
        max_bytes: Largest document read, in bytes. Default 256 MiB.
        metadata: Tags copied onto every chunk.
        num_shards: Fixed number of output files per table; 0 (default) lets the runner decide.
        limits: Parser safety caps (pages, rows, zip sizes); default ``ParseLimits()``.
        embedder: Embed the chunks with this model (``"minilm"`` or an embedder); default
            ``None`` (no embedding stage).
    """

    def __init__(self, input: str, output: str, strategy: Optional[Chunker] = None, *, overwrite: bool = False,
                 token_counter: Optional[str] = "cl100k_base", decode_errors: str = "strict",
                 compression: str = "zstd", max_bytes: int = DEFAULT_MAX_BYTES,
                 metadata: Optional[Dict[str, Any]] = None, num_shards: int = 0,
                 limits: ParseLimits = DEFAULT_LIMITS, embedder: Optional[Any] = None):
        super().__init__()
        self.strategy = strategy or get(DEFAULT_STRATEGY)
        self.read = ReadDocuments(input, max_bytes=max_bytes, metadata=metadata)
        self.parse = ParseDocuments(decode_errors, limits)
        self.chunk = ChunkDocuments(self.strategy, token_counter)
        self.embed = EmbedChunks(embedder) if embedder is not None else None
        self.write = WriteChunkTable(output, overwrite=overwrite, compression=compression, num_shards=num_shards)

    def expand(self, pbegin):
        chunked = pbegin | "ReadDocuments" >> self.read | "ParseDocuments" >> self.parse | "ChunkDocuments" >> self.chunk
        if self.embed is not None:
            chunked = chunked | "EmbedChunks" >> self.embed
        return chunked | "WriteChunkTable" >> self.write
