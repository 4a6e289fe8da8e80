"""ChunkFiles: the whole job as one composite transform."""
from __future__ import annotations

import re

from typing import Any, Dict, Optional, Sequence, Union

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems

from beam_chunking.errors import ConfigError

from beam_chunking.parsers.limits import DEFAULT_LIMITS, DEFAULT_MAX_BYTES, ParseLimits
from beam_chunking.registry import DEFAULT_STRATEGY, get
from beam_chunking.strategies.base import Chunker
from beam_chunking.transforms.chunk import ChunkDocuments
from beam_chunking.transforms.embed import EmbedChunks
from beam_chunking.transforms.parse import ParseDocuments
from beam_chunking.transforms.read import ReadDocuments, normalize_pattern
from beam_chunking.transforms.write import WriteChunkTable


def _glob_regex(pattern: str) -> "re.Pattern[str]":
    """A glob as Beam's filesystems read it: ``**`` crosses folders; ``*`` and ``?`` do not on
    local disks, and do on object stores (which match with ``fnmatch``)."""
    one = "[^/]" if FileSystems.get_scheme(pattern) is None else "."
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append(one + "*")
            i += 1
        elif pattern[i] == "?":
            out.append(one)
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def refuse_output_inside_input(output: str, patterns: Sequence[str]) -> None:
    """Raise :class:`ConfigError` when an input pattern would match the files of ``output``
    (its manifest or its tables), which the next run would then read as documents."""
    out = normalize_pattern(output).rstrip("/")
    written = [f"{out}/_manifest.json", f"{out}/chunks/run-x/part-x.parquet"]
    for pattern in patterns:
        if any(_glob_regex(pattern).match(path) for path in written):
            raise ConfigError(f"output {output} is inside the input {pattern}: its tables would be read as "
                              "documents by the next run; write the output elsewhere or narrow the pattern")


class ChunkFiles(beam.PTransform):
    """Read, parse, chunk and write: ``p | ChunkFiles("docs/*", "out/")``.

    Args:
        input: File pattern (or patterns) to read.
        exclude: Patterns of matched files to leave out (``fnmatch`` on the full path).
        output: Output folder for the chunks and documents tables; it may not lie inside the
            folder an input pattern reads (its tables would be read as input next time).
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

    def __init__(self, input: Union[str, Sequence[str]], output: str, strategy: Optional[Chunker] = None, *,
                 exclude: Sequence[str] = (), overwrite: bool = False,
                 token_counter: Optional[str] = "cl100k_base", decode_errors: str = "strict",
                 compression: str = "zstd", max_bytes: int = DEFAULT_MAX_BYTES,
                 metadata: Optional[Dict[str, Any]] = None, num_shards: int = 0,
                 limits: ParseLimits = DEFAULT_LIMITS, embedder: Optional[Any] = None):
        super().__init__()
        self.strategy = strategy or get(DEFAULT_STRATEGY)
        self.read = ReadDocuments(input, max_bytes=max_bytes, metadata=metadata, exclude=exclude)
        refuse_output_inside_input(output, self.read.patterns)
        self.parse = ParseDocuments(decode_errors, limits)
        self.chunk = ChunkDocuments(self.strategy, token_counter)
        self.embed = EmbedChunks(embedder) if embedder is not None else None
        self.write = WriteChunkTable(output, overwrite=overwrite, compression=compression, num_shards=num_shards)

    def expand(self, pbegin):
        chunked = pbegin | "ReadDocuments" >> self.read | "ParseDocuments" >> self.parse | "ChunkDocuments" >> self.chunk
        if self.embed is not None:
            chunked = chunked | "EmbedChunks" >> self.embed
        return chunked | "WriteChunkTable" >> self.write
