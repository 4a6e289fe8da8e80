"""What parsers leave out of a document's sections by default, by name.

A parser drops page furniture and contents listings because they repeat words of the body
and match every query, so they crowd real passages out of retrieval. Each drop is recorded
(``ParsedDocument.dropped``, then the documents table's ``dropped`` and
``dropped_characters`` columns) and each can be switched off by name with ``keep``.

Example:
    >>> sorted(check_keep(["contents"]))
    ['contents']
"""
from __future__ import annotations

from typing import FrozenSet, Iterable

from beam_chunking.errors import ConfigError

#: Drop name -> what it leaves out. Pass names to ``keep`` to keep those parts in the text.
DROPS = {
    "page_furniture": "running headers and footers and page numbers of PDF pages "
                      "(recorded as 'running header', 'running footer', 'page number')",
    "contents": "tables of contents: dot-leader entries and contents pages of PDFs (and "
                "dot-leader indexes), contents lists (DocBook/Sphinx/MkDocs tocs, lists of "
                "same-page links) and nav elements of HTML pages (recorded as 'table of "
                "contents', 'index')",
}

#: Label recorded in ``ParsedDocument.dropped`` -> the drop name that keeps it instead.
LABELS = {
    "running header": "page_furniture",
    "running footer": "page_furniture",
    "page number": "page_furniture",
    "table of contents": "contents",
    "index": "contents",
}

#: Keep nothing that is dropped by default.
KEEP_NOTHING: FrozenSet[str] = frozenset()


def check_keep(keep: Iterable[str]) -> FrozenSet[str]:
    """Return ``keep`` as a frozenset of drop names, refusing unknown names.

    Args:
        keep: Names from :data:`DROPS` (``"page_furniture"``, ``"contents"``).

    Raises:
        ConfigError: a name that is not a drop, listing the known ones.
    """
    if isinstance(keep, str):
        keep = [keep]
    names = frozenset(keep)
    unknown = sorted(names - set(DROPS))
    if unknown:
        raise ConfigError(f"keep: unknown part {unknown[0]!r} (known: {', '.join(sorted(DROPS))})", field="keep")
    return names
