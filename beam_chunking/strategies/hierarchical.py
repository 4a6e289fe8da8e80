"""Heading-subtree chunks: one chunk per heading and everything beneath it, to ``max_depth``."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Dict, List, Optional, Sequence, Tuple

from beam_chunking.errors import ConfigError
from beam_chunking.strategies.base import Chunker, Drops, make_chunk, require_positive
from beam_chunking.text.headings import (DEFAULT_PATTERNS, MAX_HEADING_CHARS, Pattern, compile_patterns,
                                         find_headings, heading_path)
from beam_chunking.text.spans import trim_span
from beam_chunking.types import Chunk, ParsedDocument

DETECTION_MODES = ("unstructured", "always", "never")


@dataclass(frozen=True)
class Unit:
    """A run of text under one heading path: a parser section or a piece of one."""

    start: int
    end: int
    path: Tuple[str, ...]
    page: Optional[int]
    starts_heading: bool
    label: str = ""
    #: The last page the unit runs on to, when it runs over page turns (``None``: ``page``).
    page_end: Optional[int] = None


@dataclass(frozen=True)
class Group:
    """The units of one subtree chunk; ``path`` is the subtree's heading path (<= max_depth)."""

    path: Tuple[str, ...]
    units: Tuple[Unit, ...]
    label: str

    @property
    def start(self) -> int:
        return self.units[0].start

    @property
    def end(self) -> int:
        return self.units[-1].end


@dataclass(frozen=True)
class HierarchicalChunker(Chunker):
    """One chunk per heading subtree, down to ``max_depth``.

    A chunk is a heading with all the text beneath it, including deeper headings, down to
    ``max_depth`` levels of the heading path; text before the first heading is a chunk of
    its own. Headings come from the parser (Markdown, HTML, DOCX, the PDF outline) and, in
    sections the parser left without structure (``heading_detection="unstructured"``, the
    default), from ``heading_patterns`` matched against paragraph-initial lines (after a
    blank line, or after a line that ends a sentence in text written with single newlines;
    see :func:`~beam_chunking.text.headings.find_headings`). A heading with no body of its
    own (``2 Methods`` right before ``2.1 Data``) is not a chunk alone: it starts the chunk
    of its first subsection, which then carries the outer heading's path (``legal`` keeps
    one chunk per clause instead).

    **Size is ignored by design**: a subtree is as long as the document makes it, and there
    is no overlap between disjoint subtrees. Bound it with a refiner (``SemanticRefiner``)
    or use ``StructuralChunker`` when a token ceiling is needed.

    Chunks carry ``heading`` and ``section_path`` (the subtree's path), ``page``/``page_end``
    as the min/max over the merged sections that have pages (pages that exist are kept when
    paginated and unpaginated sections mix), and ``sections`` (how many units merged).

    Args:
        max_depth: Deepest heading level that starts a chunk (path length). Default 3.
        heading_patterns: ``(regex, level)`` pairs for plain-text headings (see
            :mod:`beam_chunking.text.headings`). Default: Markdown ATX (in ``text/markdown``
            documents only), numbered ("2.1 Setup") and "Chapter/Part N" lines.
        heading_detection: Where patterns run: ``"unstructured"`` (sections without a parser
            heading; default), ``"always"`` (inside every section, nested under the parser's
            heading) or ``"never"``.
        max_heading_chars: Longest line, in characters, that a pattern may take as a
            heading; 0 for no limit. Default 120.
    """

    name = "hierarchical"
    unit_template = "unbounded"
    #: Templates built on this class stamp ``template`` and name their top-level heading.
    template: ClassVar[str] = ""
    top_key: ClassVar[str] = ""
    #: Join a group that is its heading line alone to its first child subtree (legal clauses
    #: keep one chunk per clause number instead).
    join_bare_headings: ClassVar[bool] = True
    max_depth: int = 3
    heading_patterns: Tuple[Pattern, ...] = DEFAULT_PATTERNS
    heading_detection: str = "unstructured"
    max_heading_chars: int = MAX_HEADING_CHARS

    def __post_init__(self) -> None:
        owner = type(self).__name__
        require_positive(owner, "max_depth", self.max_depth)
        require_positive(owner, "max_heading_chars", self.max_heading_chars, minimum=0)
        object.__setattr__(self, "heading_patterns", tuple(tuple(p) for p in self.heading_patterns))
        object.__setattr__(self, "_compiled", compile_patterns(owner, self.heading_patterns))
        if self.heading_detection not in DETECTION_MODES:
            raise ConfigError(f"{owner}.heading_detection={self.heading_detection!r} must be one of {DETECTION_MODES}",
                              field="heading_detection")

    # -- units and groups -------------------------------------------------------------
    def units(self, doc: ParsedDocument) -> List[Unit]:
        """Split the document's sections at detected headings into :class:`Unit` s.

        Detected headings nest under the parser's path of their section. In unstructured
        sections they also carry over to the following unstructured sections (a PDF page
        without an outline entry continues the heading found on an earlier page), and a
        section's flagged running header line is skipped before looking for a heading.
        Markdown ``#`` patterns (those with a ``hashes`` group) apply to ``text/markdown``
        documents only: elsewhere a ``# `` line is a shell prompt or a comment.
        """
        compiled = self._compiled
        if doc.content_type != "text/markdown":
            compiled = tuple((regex, level) for regex, level in compiled if "hashes" not in regex.groupindex)
        text = doc.text
        out: List[Unit] = []
        carried: List[Tuple[int, str]] = []  # detected headings in force across unstructured sections
        for section in doc.sections:
            path = tuple(section.heading_path)
            # A section begins at its heading when the title is on its first line (a PDF
            # page that continues a chapter carries the path but not the heading).
            first_line = text[section.start:min(section.end, section.start + 2000)].lstrip().split("\n", 1)[0]
            starts = bool(path) and path[-1] in first_line
            structured = bool(path) or section.level > 0
            detect = self.heading_detection == "always" or (self.heading_detection == "unstructured" and not structured)
            stack: List[Tuple[int, str]] = [] if structured else list(carried)
            base = path + tuple(t for _, t in stack)
            heads = []
            header = str(section.metadata.get("page_header") or "")
            if detect:
                begin = section.start
                if header and text[section.start:section.end].lstrip().startswith(header):
                    nl = text.find("\n", section.start, section.end)
                    begin = section.end if nl < 0 else nl + 1
                heads = find_headings(text, begin, section.end, compiled, self.max_heading_chars)
            if not heads:
                out.append(Unit(section.start, section.end, base, section.page, starts,
                                page_end=section.metadata.get("page_end")))
                carried = [] if structured else stack
                continue
            cuts = [(section.start, base, starts, "")]
            for h in heads:
                here = path + heading_path(stack, h.level, h.title)
                if text[section.start:h.start].strip() in ("", header) or h.start == cuts[-1][0]:
                    cuts[-1] = (cuts[-1][0], here, True, h.label)
                else:
                    cuts.append((h.start, here, True, h.label))
            for k, (start, here, begins, label) in enumerate(cuts):
                end = cuts[k + 1][0] if k + 1 < len(cuts) else section.end
                if text[start:end].strip():
                    out.append(Unit(start, end, here, section.page, begins, label,
                                    page_end=section.metadata.get("page_end")))
            carried = [] if structured else stack
        return out

    def groups(self, doc: ParsedDocument) -> List[Group]:
        """Group units into subtrees: a new group at each heading of depth <= ``max_depth``.

        A group that is only its heading line (``2 Methods`` right before ``2.1 Setup``) joins
        the group after it when that one is its child subtree, so a heading is not a chunk on
        its own while it has a body; the joined group keeps the parent's path and label.
        """
        groups = self._subtrees(doc)
        return _join_bare_headings(doc.text, groups) if self.join_bare_headings else groups

    def _subtrees(self, doc: ParsedDocument) -> List[Group]:
        groups: List[Group] = []
        current: List[Unit] = []
        key: Tuple[str, ...] = ()
        label = ""
        for unit in self.units(doc):
            unit_key = unit.path[: self.max_depth]
            new = not current or unit_key != key or (unit.starts_heading and len(unit.path) <= self.max_depth)
            if new and current:
                groups.append(Group(key, tuple(current), label))
                current = []
            if new:
                key, label = unit_key, unit.label
            current.append(unit)
        if current:
            groups.append(Group(key, tuple(current), label))
        return groups

    # -- chunks -----------------------------------------------------------------------
    def group_metadata(self, group: Group) -> Dict[str, Any]:
        """Metadata of one subtree chunk, plus the template's ``template`` and top-level key."""
        meta = subtree_metadata(group)
        if self.template:
            meta["template"] = self.template
        if self.top_key and group.path:
            meta[self.top_key] = group.path[0]
        return meta

    def drop_reason(self, group: Group) -> Optional[str]:
        """Why a group is left out (templates override), or ``None`` to keep it."""
        return None

    def chunk_with_drops(self, doc: ParsedDocument) -> Tuple[List[Chunk], Drops]:
        """Return the subtree chunks and the groups dropped by :meth:`drop_reason`."""
        return build_chunks(doc, self.groups(doc), self.group_metadata, self.drop_reason)

    def chunk_document(self, doc: ParsedDocument) -> List[Chunk]:
        """Return one chunk per heading subtree."""
        return self.chunk_with_drops(doc)[0]


def _join_bare_headings(text: str, groups: List[Group]) -> List[Group]:
    out: List[Group] = []
    for group in groups:
        prev = out[-1] if out else None
        if (prev is not None and prev.path and len(group.path) > len(prev.path)
                and group.path[:len(prev.path)] == prev.path and "\n" not in text[prev.start:prev.end].strip()):
            out[-1] = Group(prev.path, prev.units + group.units, prev.label)
            continue
        out.append(group)
    return out


def subtree_metadata(group: Group) -> Dict[str, Any]:
    """``heading``/``section_path`` of a group, its unit count, and ``page``/``page_end`` as the
    min/max over the units that have pages (mixed paginated and unpaginated units keep theirs)."""
    meta: Dict[str, Any] = {"sections": len(group.units)}
    if group.path:
        meta["heading"] = group.path[-1]
        meta["section_path"] = list(group.path)
    pages = [u.page for u in group.units if u.page is not None]
    if pages:
        ends = [u.page_end or u.page for u in group.units if u.page is not None]
        meta["page"], meta["page_end"] = min(pages), max(ends)
    return meta


def build_chunks(doc: ParsedDocument, groups: Sequence[Group], metadata: Callable[[Group], Dict[str, Any]],
                 drop: Callable[[Group], Optional[str]]) -> Tuple[List[Chunk], Drops]:
    """Turn groups into exact-span chunks (trimmed of whitespace), skipping dropped ones."""
    chunks: List[Chunk] = []
    dropped: List[Tuple[str, int]] = []
    for group in groups:
        start, end = trim_span(doc.text, group.start, group.end)
        if start == end:
            continue
        reason = drop(group)
        if reason is not None:
            dropped.append((reason, end - start))
            continue
        meta = dict(doc.metadata)
        meta.update(metadata(group))
        chunks.append(make_chunk(doc, index=len(chunks), start=start, end=end, token_count=None, metadata=meta))
    return chunks, tuple(dropped)

