"""Academic paper template: the abstract kept, the reference list dropped (both switchable)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Tuple

from beam_chunking.strategies.hierarchical import Group, HierarchicalChunker
from beam_chunking.text.headings import DEFAULT_PATTERNS, Pattern

_NAMES = (r"Abstract|Introduction|Background|Related Work|Preliminaries|Methods?|Methodology|Approach|"
          r"Experiments?|Experimental Setup|Evaluation|Results|Discussion|Limitations|Conclusions?|Future Work|"
          r"Acknowledge?ments|References|Bibliography|Works Cited|Appendix(?: [A-Z\d]+)?")

#: Known section names (alone, or "Abstract—" with the text on the same line), IEEE-style
#: roman numerals ("II. RELATED WORK"), and the default numbered headings.
ACADEMIC_PATTERNS: Tuple[Pattern, ...] = (
    (rf"^(?P<title>(?:{_NAMES}))(?:\s*[.:\u2013\u2014-]\s*\S.*)?$", 1),
    (rf"^(?P<title>(?:{_NAMES.upper()}))(?:\s*[.:\u2013\u2014-]\s*\S.*)?$", 1),
    (r"^(?P<label>[IVX]{1,5})\.\s+(?P<title>[A-Z][A-Z ,:&-]{2,80})$", 1),
    *DEFAULT_PATTERNS,
)
_NUMBERING = re.compile(r"^(?:\d+(?:\.\d+)*|[IVX]+)(?:\.\s*|\s+)")
_ABSTRACT = re.compile(r"^abstract$", re.I)
_REFERENCES = re.compile(r"^(?:references|bibliography|works cited)$", re.I)


@dataclass(frozen=True)
class AcademicChunker(HierarchicalChunker):
    """Papers: one chunk per section and subsection (``max_depth`` 2).

    The abstract is kept (``include_abstract``) and the reference list dropped
    (``include_references=False``): references match many queries and answer none. Drops
    are reported in the documents table. Each chunk carries ``template="academic"`` and
    ``section`` (its top-level section's name).

    Args:
        max_depth: Default 2.
        heading_patterns: Default :data:`ACADEMIC_PATTERNS`.
        include_abstract: Keep the abstract. Default ``True``.
        include_references: Keep the reference list. Default ``False``.
    """

    name = "academic"
    template = "academic"
    top_key = "section"
    max_depth: int = 2
    heading_patterns: Tuple[Pattern, ...] = ACADEMIC_PATTERNS
    include_abstract: bool = True
    include_references: bool = False

    def drop_reason(self, group: Group) -> Optional[str]:
        """``"abstract"`` or ``"references"`` when switched off, else ``None``."""
        if not group.path:
            return None
        top = _NUMBERING.sub("", group.path[0]).strip()
        if not self.include_abstract and _ABSTRACT.match(top):
            return "abstract"
        if not self.include_references and _REFERENCES.match(top):
            return "references"
        return None
