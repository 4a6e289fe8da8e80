"""The contract every strategy follows, and the per-section document loop.

A strategy is a frozen dataclass (validated at construction, picklable, comparable) with
``chunk(text)`` and ``chunk_document(doc)``. Per-section strategies implement
``section_spans`` and inherit the loop that turns spans into :class:`Chunk` objects carrying
the section's provenance (heading path, page range, section metadata). Every strategy,
template and refiner builds its chunks with :func:`make_chunk` (one span) or
:func:`make_chunks` (a section's spans), the one place that turns spans of a document into
:class:`Chunk` objects.
"""
from __future__ import annotations

import dataclasses
import operator
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from beam_chunking.embeddings.resolve import resolve_embedder
from beam_chunking.errors import ConfigError
from beam_chunking.ids import fingerprint
from beam_chunking.strategies._tables import bound_columns
from beam_chunking.strategies.regions import check_page_boundaries, locate, split_at_pages
from beam_chunking.text.fragments import effective_minimum, looks_like_header, merge_undersized
from beam_chunking.types import Chunk, ParsedDocument, Section

#: A span produced by a strategy: ``(start, end, token_count or None)``.
Span = Tuple[int, int, Optional[int]]

#: What a strategy left out on purpose: ``(label, characters)`` per dropped part.
Drops = Tuple[Tuple[str, int], ...]

#: Metadata key set to ``True`` on a chunk under its strategy's ``min_chunk_size`` that no
#: neighbour could take without breaking the ceiling or crossing a hard boundary.
UNDERSIZED = "undersized"


def require_positive(owner: str, name: str, value: Any, minimum: int = 1) -> None:
    """Raise :class:`ConfigError` unless ``value`` is an int of at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"{owner}.{name} must be an integer >= {minimum}, got {value!r}", field=name)


def require_overlap(owner: str, size_name: str, size: int, overlap_name: str, overlap: Any) -> None:
    """Raise :class:`ConfigError` unless ``0 <= overlap < size``, naming both fields."""
    require_positive(owner, overlap_name, overlap, minimum=0)
    if overlap >= size:
        raise ConfigError(
            f"{owner}.{overlap_name}={overlap} must be smaller than {owner}.{size_name}={size}",
            field=overlap_name,
        )


def text_document(text: str) -> ParsedDocument:
    """Wrap bare text as a one-section document with id ``""``."""
    return ParsedDocument(id="", uri="", content_type="text/plain", text=text, sections=(Section(0, len(text)),))


def section_metadata(doc: ParsedDocument, section: Section) -> Dict[str, Any]:
    """Metadata every chunk of ``section`` inherits: document tags, then section provenance."""
    meta: Dict[str, Any] = dict(doc.metadata)
    if section.heading_path:
        meta["heading"] = section.heading_path[-1]
        meta["section_path"] = list(section.heading_path)
    if section.page is not None:
        # page and page_end are always written together (a chunk within one page).
        meta["page"] = section.page
        meta["page_end"] = section.page
    if section.kind != "text":
        meta["chunk_kind"] = section.kind  # table, code, row, slide, notes, headers ...
    meta.update(section.metadata)
    return meta


def make_chunk(doc: ParsedDocument, index: int, start: int, end: int, token_count: Optional[int],
               metadata: Mapping[str, Any], embedding: Optional[Sequence[float]] = None, ordinal: int = 0,
               prefix: str = "", rewrite: Optional[str] = None) -> Chunk:
    """Return the chunk of ``doc`` that is the span ``[start, end)`` of its text.

    Call it with keywords; the text is ``doc.text[start:end]`` (after ``prefix``), except for
    a rewrite.

    Args:
        doc: The document; gives the chunk's ``document_id`` and text.
        index: 0-based position of the chunk in its document.
        start: First code point of the span.
        end: One past the last code point.
        token_count: Tokens in the chunk's text under the strategy's tokenizer, or ``None``
            when the strategy counts characters.
        metadata: The chunk's metadata, usually :func:`section_metadata` plus the
            strategy's own keys.
        embedding: A vector the strategy computed (semantic, late), or ``None`` (default).
        ordinal: Disambiguates chunks that share a ``start``. Default 0.
        prefix: Text put before the span: a repeated table header, the one case where a
            chunk's text is not a plain span (``table_header_repeated``). Default ``""``.
        rewrite: The chunk's text when a model or a sanitiser wrote it (a proposition, a
            résumé field): ``start``/``end`` then name its source span, and the caller marks
            the chunk ``rewrite=True`` in metadata. Default ``None`` (the span's text).
    """
    if rewrite is not None:
        return Chunk(doc.id, index, start, end, rewrite, token_count, metadata, embedding, ordinal)
    text = doc.text[start:end]
    # NOTE positional, in the field order DESIGN.md fixes (tests/test_layers.py checks it): a
    # keyword call to the dataclass __init__ costs ~0.4 us more per chunk, a tenth of
    # RecursiveChunker's whole time.
    return Chunk(doc.id, index, start, end, prefix + text if prefix else text, token_count, metadata, embedding,
                 ordinal)


def make_chunks(doc: ParsedDocument, spans: Iterable[Span], metadata: Mapping[str, Any], index: int = 0) -> List[Chunk]:
    """Return the chunks of ``doc`` for spans that share one metadata mapping (a section's).

    The same chunks as :func:`make_chunk` per span, numbered from ``index``, without a call
    per chunk: the per-section strategies' fast path.

    Args:
        doc: The document; gives the chunks' ``document_id`` and text.
        spans: ``(start, end, token_count or None)`` spans in order.
        metadata: Metadata every chunk shares (one mapping, not copied).
        index: Position of the first chunk in the document. Default 0.

    Built in C when the package was installed with its extension (:data:`NATIVE_CHUNKS`):
    the same chunks, which the cycle collector then does not track. A chunk is a frozen value
    whose metadata exists before it, so it cannot be part of a reference cycle unless its
    metadata is later changed to refer to the chunk itself, which a caller must not do (such
    a cycle would never be freed).

    Raises:
        ValueError: A span lies outside the document's text.
    """
    if _native_make_chunks is not None:
        return _native_make_chunks(doc.id, doc.text, spans, metadata, index)
    text, doc_id, length = doc.text, doc.id, len(doc.text)
    out = []
    for k, (s, e, n) in enumerate(spans, index):
        s, e = operator.index(s), operator.index(e)
        if not 0 <= s <= e <= length:
            raise ValueError(f"make_chunks: span [{s}, {e}) is outside the text of {length} characters")
        out.append(Chunk.of_span(doc_id, k, s, e, text[s:e], n, metadata))
    return out


try:
    from beam_chunking.strategies._chunkbuild import builder as _native_builder
except ImportError:  # installed without a C compiler: the Python loop above serves
    _native_builder = None

#: Whether :func:`make_chunks` builds chunks in C (the same chunks, about three times faster).
NATIVE_CHUNKS = _native_builder is not None
_native_make_chunks = (_native_builder(Chunk, ("document_id", "index", "start", "end", "text", "token_count",
                                               "metadata", "embedding", "ordinal"))
                       if _native_builder is not None else None)


@dataclass(frozen=True)
class Chunker:
    """Base of all strategies. Subclasses set ``name`` and implement ``chunk_document``.

    Args:
        page_boundaries: ``"soft"`` (default): a chunk may flow over a page turn, and then
            reports both pages (``page``, ``page_end``); ``"hard"``: every page turn ends a
            chunk, so each chunk lies on one page. Only documents with pages (PDF, scans)
            are affected.
    """

    name: ClassVar[str] = ""
    page_boundaries: str = dataclasses.field(default="soft", kw_only=True)
    #: What ``max_chunk_size`` and ``overlap`` count, formatted with the strategy's fields:
    #: ``"characters"``, ``"{tokenizer} tokens"``, or ``"unbounded"`` (no size at all).
    unit_template: ClassVar[str] = "characters"

    @property
    def unit(self) -> str:
        """What this strategy's sizes count, e.g. ``"characters"`` or ``"cl100k_base tokens"``."""
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        template = self.unit_template
        tokenizer = values.get("tokenizer")
        if isinstance(tokenizer, str) and tokenizer.startswith(("hf:", "embedder")):
            # A model's tokenizer is named by its folder, with the special tokens it counts
            # ("hf:all-MiniLM-L6-v2/tokenizer.json tokens (2 special included)"), not by a path.
            template = template.replace("{tokenizer} tokens", getattr(self, "_sizer").unit.replace("{", "{{"))
        return template.format(**values)

    def setup(self) -> None:
        """Load models or other resources; a pipeline calls it once per worker process."""

    def resolve(self, doc: ParsedDocument) -> "Chunker":
        """The strategy that actually chunks ``doc`` (a router's route; itself by default)."""
        return self

    def chunk(self, text: str) -> List[Chunk]:
        """Chunk bare text as one section of a document with id ``""``."""
        return self.chunk_document(text_document(text))

    def chunk_document(self, doc: ParsedDocument) -> List[Chunk]:  # pragma: no cover - abstract
        """Return the chunks of ``doc`` in document order."""
        raise NotImplementedError

    def chunk_with_drops(self, doc: ParsedDocument) -> Tuple[List[Chunk], Drops]:
        """Return the chunks and what was dropped by design (a book's index ...).

        Strategies that drop text on purpose override this; the pipeline records the drops in
        the documents table (``dropped``, ``dropped_characters``) so no text vanishes silently.
        """
        return self.chunk_document(doc), ()

    def chunk_outcome(self, doc: ParsedDocument) -> "Outcome":
        """Return everything chunking ``doc`` gave: chunks, drops, parents and counters.

        The pipeline calls this. Strategies that make parent chunks (``parent_child``) or
        model calls (``proposition``, ``resume``) override it; the default wraps
        :meth:`chunk_with_drops`.
        """
        chunks, dropped = self.chunk_with_drops(doc)
        return Outcome(chunks, tuple(dropped))

    @property
    def fingerprint(self) -> str:
        """12 hex digits identifying this strategy's class and configuration."""
        return fingerprint(self)


class UsesEmbedder:
    """For strategies with an ``embedder`` field: the model resolved once, loaded in ``setup()``."""

    def _resolve_embedder(self, owner: str) -> None:
        object.__setattr__(self, "_model", resolve_embedder(self.embedder, owner))

    @property
    def model(self):
        """The embedder object."""
        return self._model

    def setup(self) -> None:
        """Load the embedding model (called once per worker)."""
        if hasattr(self._model, "setup"):
            self._model.setup()


@dataclass(frozen=True)
class Outcome:
    """What chunking one document gave.

    Args:
        chunks: The chunks, in document order (the chunks table).
        dropped: What was left out on purpose, ``(label, characters)`` pairs.
        parents: Parent chunks that ``chunks`` point at with ``parent_id`` (the parents
            table); empty for most strategies.
        counts: Per-document counters for the documents table, by column name
            (``llm_calls``, ``llm_prompt_tokens`` ...); empty for most strategies.
    """

    chunks: List[Chunk]
    dropped: Drops = ()
    parents: Tuple[Chunk, ...] = ()
    counts: Mapping[str, int] = dataclasses.field(default_factory=dict)


def add_counts(a: Mapping[str, int], b: Mapping[str, int]) -> Dict[str, int]:
    """Counters of two outcomes added key by key."""
    out = dict(a)
    for key, value in b.items():
        out[key] = out.get(key, 0) + value
    return out


def document_outcome(strategy: Chunker, doc: ParsedDocument) -> Outcome:
    """Chunk ``doc`` with ``strategy``; every drop is reported, the parser's first.

    What the parser left out of the sections (``doc.dropped``) and what the strategy dropped
    by design are reported together, so the documents table accounts for all of it. Chunks
    of a document with geometry get ``page``, ``page_end`` and ``boxes`` from it
    (:func:`~beam_chunking.strategies.regions.locate`). Sheet
    rows' ``columns`` metadata is kept within each chunk's ceiling
    (:func:`~beam_chunking.strategies._tables.bound_columns`).
    """
    if doc.boxes and check_page_boundaries(getattr(strategy, "page_boundaries", "soft"), strategy.name) == "hard":
        doc = split_at_pages(doc)
    outcome = strategy.chunk_outcome(doc)
    ceiling = getattr(strategy, "max_chunk_size", None)
    ceiling = ceiling if isinstance(ceiling, int) and not isinstance(ceiling, bool) else None
    chunks = bound_columns(doc.text, outcome.chunks, ceiling)
    parents = bound_columns(doc.text, outcome.parents, None)
    if doc.boxes:
        chunks, parents = locate(doc, chunks), locate(doc, parents)
    if chunks is not outcome.chunks or parents is not outcome.parents:
        outcome = dataclasses.replace(outcome, chunks=list(chunks), parents=tuple(parents))
    if not doc.dropped:
        return outcome
    return dataclasses.replace(outcome, dropped=tuple(doc.dropped) + tuple(outcome.dropped))


def chunk_recording_drops(strategy: Chunker, doc: ParsedDocument) -> Tuple[List[Chunk], Drops]:
    """The chunks of :func:`document_outcome` and all its drops."""
    outcome = document_outcome(strategy, doc)
    return outcome.chunks, outcome.dropped


def _length(start: int, end: int) -> int:
    return end - start


@dataclass(frozen=True)
class SectionChunker(Chunker):
    """A strategy that cuts each section on its own; implement :meth:`section_spans`.

    When the subclass has ``min_chunk_size`` and ``max_chunk_size`` fields, each section's
    spans go through :func:`~beam_chunking.text.fragments.merge_undersized`: a span under
    the minimum (at most a quarter of the ceiling) joins a neighbour in the same section
    when the joined span fits ``max_chunk_size``, and is otherwise kept with
    ``undersized=True`` in its metadata. A section's last chunk that stays undersized is
    first rebalanced with the chunk before it: the strategy cuts the two again with the
    smallest ceiling that still gives two chunks, and the result is kept when both reach
    the minimum. A chunk still undersized may then join a chunk of the neighbouring section
    across a soft boundary (:func:`join_soft_sections`). Sizes are measured by
    :meth:`span_size`.
    """

    def section_spans(self, text: str, start: int, end: int) -> Iterable[Span]:  # pragma: no cover
        """Yield ``(start, end, token_count)`` spans of ``text[start:end]`` in order."""
        raise NotImplementedError

    def span_size(self, text: str, start: int, end: int) -> Optional[int]:
        """Size of ``text[start:end]`` in the strategy's unit; ``None`` for character
        strategies, whose spans carry no token count (their size is ``end - start``)."""
        return None

    def minimum_size(self) -> int:
        """The minimum chunk size applied, in the strategy's unit; 0 when off."""
        return effective_minimum(getattr(self, "min_chunk_size", 0), getattr(self, "max_chunk_size", 0))

    def sized_spans(self, text: str, start: int, end: int) -> Tuple[List[Span], Set[int]]:
        """The section's spans after the minimum-size pass, and the indices still undersized."""
        spans = self.section_spans(text, start, end)
        if not isinstance(spans, list):
            spans = list(spans)
        minimum = self.minimum_size()
        if not minimum:
            return spans, set()
        # Fast path, the common case: nothing to join (a plain loop: a generator costs more
        # than the whole check on a small document).
        for s, e, n in spans:
            if (e - s if n is None else n) < minimum:
                break
        else:
            return spans, set()
        known = {(s, e): n for s, e, n in spans}

        def count(s: int, e: int) -> Optional[int]:
            if (s, e) in known:
                return known[(s, e)]
            return self.span_size(text, s, e)

        def measure(s: int, e: int) -> int:
            n = count(s, e)
            return e - s if n is None else n

        if type(self).span_size is SectionChunker.span_size:  # characters: no lookups needed
            merged = merge_undersized(text, [(s, e) for s, e, _ in spans], minimum, self.max_chunk_size, _length)
            out: List[Span] = [(s, e, None) for s, e, _ in merged]
        else:
            merged = merge_undersized(text, [(s, e) for s, e, _ in spans], minimum, self.max_chunk_size, measure)
            out = [(s, e, count(s, e)) for s, e, _ in merged]
        small = {k for k, (_, _, flag) in enumerate(merged) if flag}
        last = len(out) - 1
        if last >= 1 and last in small and last - 1 not in small:
            pair = self._rebalance(text, out[-2][0], out[-1][1], minimum, measure)
            if pair is not None:
                out[-2:] = pair
                small.discard(last)
        return out, small

    def _rebalance(self, text: str, lo: int, hi: int, minimum: int, measure: Callable[[int, int], int]
                   ) -> Optional[List[Span]]:
        """Cut ``[lo, hi)`` (a full chunk and an undersized tail) again into two chunks of
        similar size, both at least ``minimum``, or return ``None`` when that fails.

        The strategy itself re-cuts the range with the smallest ceiling that still gives two
        chunks, so its boundary rules (whitespace, sentences, token pieces) and overlap hold.
        """
        ceiling = self.max_chunk_size
        overlap = getattr(self, "overlap", 0)
        floor = max(overlap + 1, (measure(lo, hi) + overlap) // 2, 1)

        def cut(size: int) -> Optional[List[Span]]:
            try:
                clone = dataclasses.replace(self, max_chunk_size=size, min_chunk_size=0)
            except ConfigError:  # a size the strategy refuses (below its token minimum)
                return None
            return list(clone.section_spans(text, lo, hi))

        # The smallest ceiling giving at most two chunks: the most even cut (binary search).
        a, b, best = floor, ceiling, None
        while a <= b:
            mid = (a + b) // 2
            spans = cut(mid)
            if spans is not None and len(spans) <= 2:
                best, b = spans, mid - 1
            else:
                a = mid + 1
        # The re-cut may only drop whitespace at the ends (a token window's leading space).
        if (best is None or len(best) != 2 or text[lo:best[0][0]].strip() or text[best[1][1]:hi].strip()
                or best[1][0] <= best[0][0]):
            return None
        sizes = [measure(s, e) if n is None else n for s, e, n in best]
        if min(sizes) < minimum or max(sizes) > ceiling:
            return None
        return best

    def chunk_document(self, doc: ParsedDocument) -> List[Chunk]:
        """Chunk every section and number the chunks across the document."""
        # Sections do not overlap and spans start strictly later within a section, so starts
        # are unique and every chunk id is f"{doc.id}:{start:010d}" with no ordinal needed.
        chunks: List[Chunk] = []
        owners: List[int] = []  # the section index of each chunk
        flagged_any = False
        for k, section in enumerate(doc.sections):
            spans, small = self.sized_spans(doc.text, section.start, section.end)
            meta = section_metadata(doc, section)
            owners.extend([k] * len(spans))
            if not small:
                chunks.extend(make_chunks(doc, spans, metadata=meta, index=len(chunks)))
                continue
            flagged_any = True
            flagged = dict(meta, **{UNDERSIZED: True})
            for j, (s, e, n) in enumerate(spans):
                chunks.append(make_chunk(doc, index=len(chunks), start=s, end=e, token_count=n,
                                         metadata=flagged if j in small else meta))
        if not flagged_any:
            return chunks

        def size(s: int, e: int) -> Tuple[int, Optional[int]]:
            n = self.span_size(doc.text, s, e)
            return (e - s if n is None else n), n

        return join_soft_sections(doc, chunks, owners, self.minimum_size(), self.max_chunk_size, size)


#: Section kinds whose blocks may share a chunk under one heading. Others (slides and their
#: notes, e-mail headers and body, sheet rows, transcript cues) are parts a parser keeps apart
#: on purpose, so that they can be routed, dropped or cited on their own.
JOINABLE_KINDS = frozenset({"text", "table", "code"})


def soft_boundary(doc: ParsedDocument, a: Section, b: Section, end: int, start: int) -> bool:
    """Whether a chunk ending at ``end`` in section ``a`` may join one starting at ``start`` in
    the next section ``b``: the same heading path (or ``b`` under ``a``'s heading), the same
    page or the next one, both of a joinable kind (:data:`JOINABLE_KINDS`), and nothing left
    out between them (the parser's table, code and paragraph blocks under one heading; a page
    turn with no furniture dropped between). Other headings are hard boundaries."""
    # Section metadata (element_path, kind) may differ: a caption and its table, a sentence and
    # the command it introduces are still one topic under one heading.
    # A section may also flow into its first subsection: a heading with no body of its own
    # belongs with what comes under it.
    # Text flows over a page turn: a joined chunk reports both pages (page, page_end).
    pages_flow = a.page == b.page or (a.page is not None and b.page is not None and b.page == a.page + 1)
    return (b.heading_path[:len(a.heading_path)] == a.heading_path and pages_flow and a.kind in JOINABLE_KINDS
            and b.kind in JOINABLE_KINDS and not doc.text[end:start].strip())


def join_soft_sections(doc: ParsedDocument, chunks: List[Chunk], owners: Sequence[int], minimum: int,
                       ceiling: int, size: Callable[[int, int], Tuple[int, Optional[int]]]) -> List[Chunk]:
    """Join ``undersized`` chunks across soft section boundaries (:func:`soft_boundary`).

    A small chunk that looks like a header (a caption, a heading line) waits for the chunk
    after it, and joins the one before it under the same heading when it cannot join that
    one; any other small chunk joins the one before it; a join happens only when the
    joined span's size fits ``ceiling``. The joined chunk keeps the metadata of the longer
    of the two (its section's provenance) and is flagged again if it is still small.

    Args:
        doc: The document.
        chunks: Its chunks in order; plain spans (``text == doc.text[start:end]``) may join.
        owners: The index in ``doc.sections`` of each chunk's section.
        minimum: The strategy's minimum size, in its unit.
        ceiling: The hard ceiling, in the same unit.
        size: ``size(start, end) -> (size, token_count or None)`` of a span.

    Returns:
        The chunks, renumbered; unchanged when none is undersized.
    """
    text = doc.text

    def join(prev: Chunk, chunk: Chunk) -> Optional[Chunk]:
        # Plain spans only, within the ceiling; the longer one's provenance is kept.
        if prev.text != text[prev.start:prev.end] or chunk.text != text[chunk.start:chunk.end]:
            return None
        joined, n = size(prev.start, chunk.end)
        if joined > ceiling:
            return None
        keep = prev if len(prev.text) >= len(chunk.text) else chunk
        meta = {k: v for k, v in keep.metadata.items() if k != UNDERSIZED}
        if prev.metadata.get("page") is not None and chunk.metadata.get("page") is not None:
            meta["page"] = min(prev.metadata["page"], chunk.metadata["page"])
            meta["page_end"] = max(prev.metadata.get("page_end", prev.metadata["page"]),
                                   chunk.metadata.get("page_end", chunk.metadata["page"]))
        if joined < minimum:
            meta[UNDERSIZED] = True
        return make_chunk(doc, index=0, start=prev.start, end=chunk.end, token_count=n, metadata=meta)

    out: List[Chunk] = []
    out_owner: List[int] = []
    for chunk, owner in zip(chunks, owners):
        if out:
            prev = out[-1]
            small_prev = bool(prev.metadata.get(UNDERSIZED))
            small_cur = bool(chunk.metadata.get(UNDERSIZED))
            header = small_cur and looks_like_header(text, chunk.start, chunk.end)
            if ((small_prev or (small_cur and not header)) and out_owner[-1] != owner
                    and soft_boundary(doc, doc.sections[out_owner[-1]], doc.sections[owner], prev.end, chunk.start)):
                both = join(prev, chunk)
                if both is not None:
                    out[-1] = both
                    out_owner[-1] = owner
                    continue
        out.append(chunk)
        out_owner.append(owner)
    # A small chunk that looked like a header but could not join the chunk after it (another
    # heading follows, or the join would pass the ceiling) joins the one before it instead:
    # a command line closing its section (``# apt-get update`` read as a Markdown heading),
    # a caption whose table fills its own chunk.
    k = 1
    while k < len(out):
        prev, chunk = out[k - 1], out[k]
        a, b = doc.sections[out_owner[k - 1]], doc.sections[out_owner[k]]
        # Under the same heading only: a heading of its own never ends the chunk before it.
        if (chunk.metadata.get(UNDERSIZED) and out_owner[k - 1] != out_owner[k]
                and a.heading_path == b.heading_path and looks_like_header(text, chunk.start, chunk.end)
                and soft_boundary(doc, a, b, prev.end, chunk.start)):
            both = join(prev, chunk)
            if both is not None:
                out[k - 1] = both
                del out[k], out_owner[k]
                continue
        k += 1
    return [c if c.index == k else dataclasses.replace(c, index=k) for k, c in enumerate(out)]
