"""Beam transforms. Beam code lives here and in :mod:`beam_chunking.pipelines` only."""
from beam_chunking.transforms.chunk import ChunkDocuments
from beam_chunking.transforms.compose import ChunkFiles
from beam_chunking.transforms.embed import EmbedChunks
from beam_chunking.transforms.manifest import read_table, table_files
from beam_chunking.transforms.parse import ParseDocuments
from beam_chunking.transforms.read import ReadDocuments
from beam_chunking.transforms.records import ChunkedDocument, DocumentHeader, Failure, Stage
from beam_chunking.transforms.write import WriteChunkTable

__all__ = ["ReadDocuments", "ParseDocuments", "ChunkDocuments", "EmbedChunks", "WriteChunkTable", "ChunkFiles",
           "ChunkedDocument", "DocumentHeader", "Failure", "Stage", "read_table", "table_files"]
