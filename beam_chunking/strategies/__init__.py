"""Chunking strategies: plain, picklable dataclasses that map text to spans.

The registry of names (``get(name, **options)``) is :mod:`beam_chunking.registry`, above
this package and the domain templates.
"""
from __future__ import annotations

from beam_chunking.strategies.base import Chunker, SectionChunker
from beam_chunking.strategies.cluster import ClusterSemanticChunker
from beam_chunking.strategies.code import CodeChunker
from beam_chunking.strategies.fixed import FixedSizeChunker
from beam_chunking.strategies.hierarchical import HierarchicalChunker
from beam_chunking.strategies.late import LateChunker
from beam_chunking.strategies.parent_child import ParentChildChunker
from beam_chunking.strategies.proposition import PropositionChunker
from beam_chunking.strategies.recursive import RecursiveChunker
from beam_chunking.strategies.router import Router
from beam_chunking.strategies.semantic import SemanticChunker
from beam_chunking.strategies.sentence import SentenceChunker
from beam_chunking.strategies.structural import StructuralChunker
from beam_chunking.strategies.token import TokenChunker
from beam_chunking.strategies.transcript import TranscriptChunker


__all__ = [
    "Chunker",
    "SectionChunker",
    "FixedSizeChunker",
    "RecursiveChunker",
    "TokenChunker",
    "SentenceChunker",
    "HierarchicalChunker",
    "StructuralChunker",
    "CodeChunker",
    "SemanticChunker",
    "ClusterSemanticChunker",
    "LateChunker",
    "PropositionChunker",
    "ParentChildChunker",
    "TranscriptChunker",
    "Router",
]
