"""Structure-first splitting within a token budget."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from beam_chunking.strategies._tables import split_table, table_blocks
from beam_chunking.strategies.base import (UNDERSIZED, Chunker, join_soft_sections, make_chunk, require_positive,
                                           section_metadata)
from beam_chunking.strategies.token import MIN_WINDOW_TOKENS, token_sizer
from beam_chunking.text.fragments import effective_minimum, merge_undersized
from beam_chunking.text.headings import ends_sentence, looks_like_heading_line, scan_markdown
from beam_chunking.text.packing import balanced_groups, split_levels
from beam_chunking.text.sentences import sentence_spans
from beam_chunking.text.spans import line_starts
from beam_chunking.types import Chunk, ParsedDocument, Section

# Line-start scores, strongest first (see beam_chunking.text.packing.split_levels).
HARD, FENCE, TOP, DEDENT, BLANK, LINE = 0, 1, 2, 3, 4, 5


def _indent(line: str) -> int:
    expanded = line.expandtabs(4)
    return len(expanded) - len(expanded.lstrip())


def structure_scores(text: str, lines: List[int], markdown: bool = True
                     ) -> Tuple[List[int], List[Tuple[int, int, str]], List[Tuple[int, int]]]:
    """Score each line start; also return fenced blocks ``(first, end, info)`` and tables.

    With ``markdown`` (default ``True``), ATX headings (outside fences, found by
    :func:`~beam_chunking.text.headings.scan_markdown`) are hard boundaries; without it a
    ``# `` line is body text (a shell root prompt, a config comment). Fence and table edges
    come next, then a paragraph that starts at
    indentation 0 and brace depth 0, then a dedent or a brace depth drop, then any
    blank-line boundary, then any line. Lines inside a fence are not scored.
    """
    n = len(lines) - 1
    scores = [LINE] * n
    outline = scan_markdown(text, lines)
    headings = {h.line for h in outline.headings if not h.setext} if markdown else set()
    opening = {f.first: f.end for f in outline.fences}
    depth = 0
    prev_blank = True
    prev_indent = 0
    prev_depth = 0
    inside_until = 0  # lines before this index are inside the last fence
    for k in range(n):
        if k < inside_until:
            continue
        fence_end = opening.get(k)
        if fence_end is not None:
            scores[k] = FENCE
            if fence_end < n:  # the line after the closing fence
                scores[fence_end] = min(scores[fence_end], FENCE)
            prev_blank = False
            inside_until = fence_end
            continue
        line = text[lines[k]:lines[k + 1]].rstrip("\r\n")
        if not line.strip():
            prev_blank = True
            continue
        indent = _indent(line)
        if k in headings:
            scores[k] = HARD
        elif prev_blank and indent == 0 and depth == 0:
            scores[k] = TOP
        elif indent < prev_indent or depth < prev_depth:
            scores[k] = DEDENT
        elif prev_blank:
            scores[k] = BLANK
        prev_depth = depth
        opened = line.count("{") + line.count("[") + line.count("(")
        depth = max(0, depth + opened - line.count("}") - line.count("]") - line.count(")"))
        prev_indent = indent
        prev_blank = False
    fences = [(f.first, f.end, f.info) for f in outline.fences]
    tables = table_blocks(text, lines)
    for a, b in tables:
        scores[a] = min(scores[a], FENCE)
        if b < n:
            scores[b] = min(scores[b], FENCE)
    _bind_heading_lines(text, lines, scores, fences, tables)
    return scores, fences, tables


def _bind_heading_lines(text: str, lines: List[int], scores: List[int],
                        fences: List[Tuple[int, int, str]], tables: List[Tuple[int, int]]) -> None:
    """Keep a heading-like line with the text under it, in text without blank lines.

    A line that reads like a heading (:func:`~beam_chunking.text.headings.looks_like_heading_line`:
    ``= = Gameplay = =``, ``2.1 Setup``) right after a line that ends a sentence, followed by
    a line at least half as long again that does not read like one, starts a paragraph: its
    start scores as :data:`TOP`, and the start of the line after it as :data:`LINE`, the
    weakest, so a cut falls before the heading rather than between it and its body. (After
    a blank line a paragraph boundary is there already, and the first line of a wrapped
    paragraph often has a heading's shape.)
    """
    n = len(lines) - 1
    inside = [False] * n
    for a, b in [(f[0], f[1]) for f in fences] + list(tables):
        for k in range(a, min(b, n)):
            inside[k] = True

    def line(k: int) -> str:
        return text[lines[k]:lines[k + 1]].rstrip("\r\n")

    for k in range(1, n - 1):
        if scores[k] <= TOP or inside[k] or inside[k + 1] or scores[k + 1] <= FENCE:
            continue
        this, before, after = line(k), line(k - 1), line(k + 1)
        if (looks_like_heading_line(this) and ends_sentence(before) and after.strip()
                and not looks_like_heading_line(after) and 3 * len(this.strip()) <= 2 * len(after.strip())):
            scores[k] = TOP
            scores[k + 1] = LINE


@dataclass(frozen=True)
class StructuralChunker(Chunker):
    """Split on structure, coarsest first, within a hard token ceiling.

    Boundaries, strongest first: headings (always cut, also Markdown headings inside a
    section), code-fence and table edges, paragraphs starting at indentation 0 and brace
    depth 0 (and, in text without blank lines, a heading-like line after a sentence, which
    stays with the line under it), dedents and brace-depth drops, blank lines, then line
    breaks; a single line over the budget is cut between sentences into even parts, and only
    a sentence over the budget into token windows. Pieces are packed greedily up to ``max_chunk_size``,
    and a piece that fits is never split, so a code block, a function body or a table that
    fits stays whole. The better choice for Markdown with deep headings, HTML, config files
    and code; use the sentence or semantic strategies for prose.

    Tables: a Markdown pipe table (the parsers render HTML, DOCX and PPTX tables as one) that
    fits stays whole; one that does not is split between rows and each later piece repeats
    the header and separator lines. Such a chunk's ``start``/``end`` cover its own rows and
    its text is the repeated header plus ``document_text[start:end]``; it carries
    ``table_header_repeated=True`` (the only chunks whose text is not a plain span).

    Headings are Markdown's: ``# Title`` lines are boundaries only in ``text/markdown``
    documents (in plain text, PDF or HTML text a ``# apt-get update`` line is a shell prompt,
    not a heading). Bare text passed to :meth:`chunk` is plain text; use
    :meth:`chunk_markdown` for Markdown.

    A piece under ``min_chunk_size`` tokens (a heading whose body did not fit beside it, a
    stray closing line) joins the following piece when it is a heading or block header, else
    the previous one, then the other, when the joined chunk fits ``max_chunk_size``; joins
    never cross a heading (a hard boundary) and never touch a table piece with a repeated
    header. A piece that is still small may then join a chunk of the neighbouring section
    when both sections have the same heading path and page and nothing was left out between
    them (a table caption and its table, an HTML paragraph and the command block after it);
    one that no neighbour can take is kept with ``undersized=True``.

    Chunks fully inside a fenced block carry ``chunk_kind="code"`` and, when the fence names
    one, ``language``; table chunks carry ``chunk_kind="table"``. No overlap.

    Args:
        max_chunk_size: Hard ceiling per chunk in tokens, counted on the chunk's own text
            (with an embedding model's tokenizer, the special tokens it adds included); at
            least 4 plus those special tokens. Default 512.
        tokenizer: A tiktoken encoding or model name (``"cl100k_base"``, bundled);
            ``"embedder"``: the job's embedding model's own tokenizer (``embed:``); or
            ``"hf:PATH"`` to a ``tokenizer.json``. Default ``"cl100k_base"``.
        min_chunk_size: Smallest chunk kept alone, in tokens; at most a quarter of
            ``max_chunk_size`` applies; 0 turns it off. Default 32.
    """

    name = "structural"
    unit_template = "{tokenizer} tokens"
    max_chunk_size: int = 512
    tokenizer: str = "cl100k_base"
    min_chunk_size: int = 32

    def __post_init__(self) -> None:
        require_positive("StructuralChunker", "max_chunk_size", self.max_chunk_size, minimum=MIN_WINDOW_TOKENS)
        require_positive("StructuralChunker", "min_chunk_size", self.min_chunk_size, minimum=0)
        object.__setattr__(self, "_sizer", token_sizer("StructuralChunker", self.tokenizer, self.max_chunk_size))

    def chunk_markdown(self, text: str) -> List[Chunk]:
        """Chunk bare Markdown text (``# `` lines are headings) as one section."""
        doc = ParsedDocument(id="", uri="", content_type="text/markdown", text=text, sections=(Section(0, len(text)),))
        return self.chunk_document(doc)

    def section_chunks(self, text: str, start: int, end: int, markdown: bool = True
                       ) -> List[Tuple[int, int, Optional[str], Dict[str, Any], int]]:
        """``(start, end, prefix, metadata, tokens)`` chunks of one section (``prefix``: a
        repeated table header; ``tokens``: the chunk text's own count). ``markdown``: whether
        ``# `` lines are headings. Default ``True``."""
        if not text[start:end].strip():
            return []
        sizer = self._sizer
        budget = self.max_chunk_size
        tk = sizer.index(text, start, end)

        def measure(s: int, e: int) -> int:
            return tk.count(text, s, e)

        measure_text = sizer.count

        def windows(s: int, e: int) -> List[Tuple[int, int]]:
            return [(a, b) for a, b, _ in sizer.windows(text, s, e, budget, 0, tk)]

        def fallback(s: int, e: int) -> List[Tuple[int, int]]:
            # One line over the budget (a long paragraph written on one line) is cut between
            # sentences into even parts; only a sentence over the budget is cut into token
            # windows.
            units: List[Tuple[int, int]] = []
            for a, b in sentence_spans(text, s, e):
                units.extend(windows(a, b) if measure(a, b) > budget else [(a, b)])
            if len(units) < 2:
                return windows(s, e)
            groups = balanced_groups(len(units), lambda i, j: measure(units[i][0], units[j - 1][1]), budget)
            return [(units[i][0], units[j - 1][1]) for i, j in groups]

        lines = line_starts(text, start, end)
        scores, fences, tables = structure_scores(text, lines, markdown)
        table_spans = {}
        for a, b in tables:
            table_spans[lines[a]] = (a, b)

        def special(s: int, e: int):
            # An oversized piece that is exactly one table (after trimming) splits by rows.
            hit = table_spans.get(s)
            if hit is None:
                return None
            a, b = hit
            if text[lines[b - 1]:lines[b]].rstrip() and s + len(text[s:lines[b]].rstrip()) == e:
                return split_table(text, lines[a:b + 1], budget, measure, measure_text, fallback)
            return None

        pieces, small = self._merge_small(text, lines, scores,
                                          split_levels(text, lines, scores, budget, measure, fallback, special,
                                                       effective_minimum(self.min_chunk_size, budget)),
                                          measure)
        fence_spans = [(lines[a], lines[b], info) for a, b, info in fences]
        table_ranges = [(lines[a], lines[b]) for a, b in tables]
        out = []
        for s, e, prefix in pieces:
            meta: Dict[str, Any] = {}
            for fs, fe, info in fence_spans:
                if fs <= s and e <= fe:
                    meta["chunk_kind"] = "code"
                    if info:
                        meta["language"] = info.lower()
                    break
            else:
                if any(ts <= s and e <= te for ts, te in table_ranges):
                    meta["chunk_kind"] = "table"
            if prefix is not None:
                meta["table_header_repeated"] = True
            if (s, e) in small:
                meta[UNDERSIZED] = True
            # Counted on the section's one encode (two short encodes at most); only a piece
            # with a repeated header is encoded whole.
            n = measure(s, e) if prefix is None else measure_text(prefix + text[s:e])
            out.append((s, e, prefix, meta, n))
        return out

    def _merge_small(self, text: str, lines: List[int], scores: List[int],
                     pieces: List[Tuple[int, int, Optional[str]]], measure
                     ) -> Tuple[List[Tuple[int, int, Optional[str]]], set]:
        """Pieces after the minimum-size pass, and the ``(start, end)`` still undersized."""
        minimum = effective_minimum(self.min_chunk_size, self.max_chunk_size)
        if not minimum or not pieces:
            return pieces, set()
        # Headings are hard: a join never crosses one. A table piece with a repeated header
        # is not a plain span, so it is a run boundary and is never joined.
        hard = sorted(lines[k] for k in range(1, len(lines) - 1) if scores[k] == 0)
        out: List[Tuple[int, int, Optional[str]]] = []
        small = set()
        run: List[Tuple[int, int]] = []

        def flush() -> None:
            for a, b, flag in merge_undersized(text, run, minimum, self.max_chunk_size, measure, hard):
                out.append((a, b, None))
                if flag:
                    small.add((a, b))
            run.clear()

        for s, e, prefix in pieces:
            if prefix is not None:
                flush()
                out.append((s, e, prefix))
            else:
                run.append((s, e))
        flush()
        return out, small

    def chunk_document(self, doc: ParsedDocument) -> List[Chunk]:
        """Chunk every section; chunks carry the section's provenance."""
        chunks: List[Chunk] = []
        owners: List[int] = []
        markdown = doc.content_type == "text/markdown"
        for k, section in enumerate(doc.sections):
            base = section_metadata(doc, section)
            for s, e, prefix, extra, n in self.section_chunks(doc.text, section.start, section.end, markdown):
                chunks.append(make_chunk(doc, index=len(chunks), start=s, end=e, token_count=n,
                                         metadata=dict(base, **extra) if extra else base, prefix=prefix or ""))
                owners.append(k)
        if not any(c.metadata.get(UNDERSIZED) for c in chunks):
            return chunks
        count = self._sizer.count

        def size(s: int, e: int) -> Tuple[int, int]:
            n = count(doc.text[s:e])
            return n, n

        return join_soft_sections(doc, chunks, owners, effective_minimum(self.min_chunk_size, self.max_chunk_size),
                                  self.max_chunk_size, size)
