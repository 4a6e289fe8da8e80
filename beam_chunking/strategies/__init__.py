"""Chunking strategies and their registry.

``get(name, **options)`` builds a strategy by registry name; the mapping is explicit (no
decorator side effects), so the registry is exactly what this module lists.
"""
from __future__ import annotations

from typing import Any, Dict, Type

from beam_chunking.errors import ConfigError
from beam_chunking.strategies.base import Chunker, SectionChunker
from beam_chunking.strategies.code import CodeChunker
from beam_chunking.strategies.fixed import FixedSizeChunker
from beam_chunking.strategies.hierarchical import HierarchicalChunker
from beam_chunking.strategies.late import LateChunker
from beam_chunking.strategies.recursive import RecursiveChunker
from beam_chunking.strategies.router import Router
from beam_chunking.strategies.semantic import SemanticChunker
from beam_chunking.strategies.sentence import SentenceChunker
from beam_chunking.strategies.structural import StructuralChunker
from beam_chunking.strategies.token import TokenChunker


def _registry() -> Dict[str, Type[Chunker]]:
    # The domain templates build on the strategies, so they are imported after them.
    from beam_chunking.domains import AcademicChunker, BookChunker, EmailChunker, LegalChunker, QAPairsChunker

    return {
        "fixed": FixedSizeChunker,
        "recursive": RecursiveChunker,
        "token": TokenChunker,
        "sentence": SentenceChunker,
        "hierarchical": HierarchicalChunker,
        "structural": StructuralChunker,
        "code": CodeChunker,
        "semantic": SemanticChunker,
        "late": LateChunker,
        "legal": LegalChunker,
        "book": BookChunker,
        "academic": AcademicChunker,
        "qa_pairs": QAPairsChunker,
        "email": EmailChunker,
    }


REGISTRY: Dict[str, Type[Chunker]] = _registry()

DEFAULT_STRATEGY = "recursive"


def get(name: str, **options: Any) -> Chunker:
    """Build the strategy registered as ``name`` with ``options``.

    Raises:
        ConfigError: unknown name, unknown option, or an invalid option value.
    """
    cls = REGISTRY.get(name)
    if cls is None:
        raise ConfigError(f"strategy {name!r} is not registered; choose one of {', '.join(sorted(REGISTRY))}")
    try:
        return cls(**options)
    except TypeError as exc:
        raise ConfigError(f"strategy {name!r}: {exc}") from None


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
    "LateChunker",
    "Router",
    "REGISTRY",
    "DEFAULT_STRATEGY",
    "get",
]
