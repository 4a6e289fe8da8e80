"""Routing documents to strategies by content type."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional

from beam_chunking.errors import ConfigError, UnsupportedContentType
from beam_chunking.strategies.base import Chunker
from beam_chunking.types import Chunk, ParsedDocument


@dataclass(frozen=True)
class Router(Chunker):
    """Pick a strategy per document by its content type.

    Lookup order: the exact type (``"text/markdown"``), then its family wildcard
    (``"text/*"``), then ``default``. With no default and no match the document fails with
    :class:`UnsupportedContentType` naming the type and the routes: no silent fallback.

    Args:
        routes: Content type (or ``"family/*"``) to strategy.
        default: Strategy for everything else, or ``None`` to fail unmatched documents.

    Example:
        >>> from beam_chunking.registry import get
        >>> router = Router({"text/markdown": get("sentence")}, default=get("recursive"))
    """

    name = "router"
    routes: Mapping[str, Chunker] = field(default_factory=dict)
    default: Optional[Chunker] = None

    def __post_init__(self) -> None:
        for key, strategy in self.routes.items():
            if not isinstance(key, str) or "/" not in key:
                raise ConfigError(f"Router.routes key {key!r} must be a content type like 'text/markdown'")
            if not isinstance(strategy, Chunker):
                raise ConfigError(f"Router.routes[{key!r}] must be a strategy, got {type(strategy).__name__}")
        if self.default is not None and not isinstance(self.default, Chunker):
            raise ConfigError(f"Router.default must be a strategy, got {type(self.default).__name__}")
        object.__setattr__(self, "routes", dict(self.routes))

    def select(self, doc: ParsedDocument) -> Chunker:
        """Return the strategy for ``doc``.

        Raises:
            UnsupportedContentType: no route matches and there is no default.
        """
        ctype = doc.content_type
        strategy = self.routes.get(ctype) or self.routes.get(ctype.split("/", 1)[0] + "/*") or self.default
        if strategy is None:
            raise UnsupportedContentType(
                f"no chunking strategy is routed for content type {ctype!r} (routes: "
                f"{', '.join(sorted(self.routes)) or 'none'}; no default)",
                document_id=doc.id,
                uri=doc.uri,
            )
        return strategy

    def chunk_document(self, doc: ParsedDocument) -> List[Chunk]:
        """Chunk ``doc`` with the strategy routed for its content type."""
        return self.select(doc).chunk_document(doc)

    def resolve(self, doc: ParsedDocument) -> Chunker:
        """The routed strategy for ``doc`` (see :meth:`select`)."""
        return self.select(doc).resolve(doc)

    def setup(self) -> None:
        """Set up every routed strategy (models load once per worker)."""
        for strategy in self.strategies().values():
            strategy.setup()

    def chunk_with_drops(self, doc: ParsedDocument):
        """Chunk ``doc`` with its routed strategy, reporting that strategy's drops."""
        return self.select(doc).chunk_with_drops(doc)

    def chunk_outcome(self, doc: ParsedDocument):
        """The routed strategy's outcome for ``doc``."""
        return self.select(doc).chunk_outcome(doc)

    def strategies(self) -> Dict[str, Chunker]:
        """All routes, with ``"*"`` for the default."""
        out = dict(self.routes)
        if self.default is not None:
            out["*"] = self.default
        return out
