"""Legal template: numbered clauses and sub-clauses as headings, ``clause`` metadata."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Dict, Tuple

from beam_chunking.strategies.hierarchical import Group, HierarchicalChunker
from beam_chunking.text.headings import Pattern

#: Article/Section/§ lines, decimal clause numbers (1., 1.1, 1.1.1) and (a)/(ii) sub-clauses.
LEGAL_PATTERNS: Tuple[Pattern, ...] = (
    (r"^(?P<label>(?:ARTICLE|Article)\s+(?:\d+|[IVXLC]+))\b[.:\s\u2013\u2014-]*(?P<title>.*)$", 1),
    (r"^(?P<label>(?:SECTION|Section|§)\s*\d+(?:\.\d+)*)\b[.:\s\u2013\u2014-]*(?P<title>.*)$", 2),
    (r"^(?P<num>\d{1,3}(?:\.\d{1,3}){0,4})[.)]?\s+(?P<title>\S.*)$", 0),
    (r"^(?P<label>\((?:ii|iii|iv|vi|vii|viii|ix|xi|xii)\))\s+(?P<title>\S.*)$", 4),
    (r"^(?P<label>\([a-z]\))\s+(?P<title>\S.*)$", 3),
)
_LEADING_NUMBER = re.compile(r"^((?:Article|ARTICLE|Section|SECTION|§)\s*[\dIVXLC.]+|\d+(?:\.\d+)*|\([a-z]+\))")


@dataclass(frozen=True)
class LegalChunker(HierarchicalChunker):
    """Contracts and statutes: one chunk per clause subtree, down to ``max_depth`` 3.

    Clause headings are found in every section (``heading_detection="always"``), also when
    the clause text runs on from its number on the same line: ``Article 5``, ``Section 2.1``,
    ``§ 12``, ``1.``, ``1.1``, ``1.1.1``, ``(a)``, ``(ii)``. Each chunk carries
    ``template="legal"`` and ``clause`` (the clause's number: ``"1.1"``, ``"(a)"``,
    ``"Article 5"``). Size is unbounded, as for :class:`HierarchicalChunker`.

    Args:
        max_depth: Deepest clause level that starts a chunk. Default 3.
        heading_patterns: Clause patterns. Default :data:`LEGAL_PATTERNS`.
        heading_detection: Default ``"always"``.
        max_heading_chars: Default ``0`` (a clause line may be any length; its title is
            shortened).
    """

    name = "legal"
    template = "legal"
    join_bare_headings = False  # every clause number keeps its own chunk and ``clause``
    max_depth: int = 3
    heading_patterns: Tuple[Pattern, ...] = LEGAL_PATTERNS
    heading_detection: str = "always"
    max_heading_chars: int = 0

    def group_metadata(self, group: Group) -> Dict[str, Any]:
        """Subtree metadata plus ``template`` and ``clause``."""
        meta = super().group_metadata(group)
        clause = group.label
        if not clause and group.path:
            m = _LEADING_NUMBER.match(group.path[-1])
            clause = m.group(1) if m else ""
        if clause:
            meta["clause"] = clause
        return meta
