"""Book template: chapters, with the table of contents and the index left out."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Tuple

from beam_chunking.strategies.hierarchical import Group, HierarchicalChunker
from beam_chunking.text.headings import DEFAULT_PATTERNS, Pattern

#: Front and back matter names, chapters and parts (not their table-of-contents entries),
#: Markdown and numbered headings.
BOOK_PATTERNS: Tuple[Pattern, ...] = (
    (r"^(?P<title>(?:Table of )?Contents|CONTENTS|TABLE OF CONTENTS|Index|INDEX|Foreword|FOREWORD|Preface|PREFACE|"
     r"Prologue|Epilogue|Introduction|Acknowledge?ments|Afterword|Glossary|Bibliography|Appendix(?: [A-Z\d]+)?)$", 1),
    *DEFAULT_PATTERNS,
)
_NUMBERING = re.compile(r"^(?:(?i:chapter|part)\s+)?(?:\d+(?:\.\d+)*|[IVXLC]+)(?:[.:\u2013\u2014-]\s*|\s+)")
_TOC = re.compile(r"^(?:table of )?contents$", re.I)
_INDEX = re.compile(r"^(?:general |subject |name )?index$", re.I)
_FOREWORD = re.compile(r"^(?:foreword|preface|prologue)$", re.I)


def _bare(title: str) -> str:
    return _NUMBERING.sub("", title).strip() or title


@dataclass(frozen=True)
class BookChunker(HierarchicalChunker):
    """Books: one chunk per chapter (and per section, ``max_depth`` 2).

    The table of contents and the index are dropped (they only repeat the book's words and
    match every query); the foreword/preface is kept unless ``keep_foreword=False``. What is
    dropped is reported in the documents table (``dropped``, ``dropped_characters``). Each
    chunk carries ``template="book"`` and ``chapter`` (its top-level heading).

    Args:
        max_depth: Default 2.
        heading_patterns: Default :data:`BOOK_PATTERNS` (front/back matter names,
            ``Chapter N``, ``Part N``, numbered headings, Markdown).
        drop_toc: Drop the table of contents. Default ``True``.
        drop_index: Drop the index. Default ``True``.
        keep_foreword: Keep the foreword, preface or prologue. Default ``True``.
    """

    name = "book"
    template = "book"
    top_key = "chapter"
    max_depth: int = 2
    heading_patterns: Tuple[Pattern, ...] = BOOK_PATTERNS
    drop_toc: bool = True
    drop_index: bool = True
    keep_foreword: bool = True

    def drop_reason(self, group: Group) -> Optional[str]:
        """``"table of contents"``, ``"index"`` or ``"foreword"`` when dropped, else ``None``."""
        if not group.path:
            return None
        top = _bare(group.path[0])
        if self.drop_toc and _TOC.match(top):
            return "table of contents"
        if self.drop_index and _INDEX.match(top):
            return "index"
        if not self.keep_foreword and _FOREWORD.match(top):
            return "foreword"
        return None
