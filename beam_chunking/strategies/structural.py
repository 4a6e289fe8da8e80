"""Structure-first splitting within a token budget."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from beam_chunking.sizing import tiktoken_sizer
from beam_chunking.strategies._tables import split_table, table_blocks
from beam_chunking.strategies.base import Chunker, make_chunk, require_positive, section_metadata
from beam_chunking.strategies.token import MIN_WINDOW_TOKENS
from beam_chunking.text.headings import scan_markdown
from beam_chunking.text.packing import split_levels
from beam_chunking.text.spans import line_starts
from beam_chunking.text.tokens import TokenIndex, token_windows
from beam_chunking.types import Chunk, ParsedDocument

# Line-start scores, strongest first (see beam_chunking.text.packing.split_levels).
HARD, FENCE, TOP, DEDENT, BLANK, LINE = 0, 1, 2, 3, 4, 5


def _indent(line: str) -> int:
    expanded = line.expandtabs(4)
    return len(expanded) - len(expanded.lstrip())


def structure_scores(text: str, lines: List[int]) -> Tuple[List[int], List[Tuple[int, int, str]], List[Tuple[int, int]]]:
    """Score each line start; also return fenced blocks ``(first, end, info)`` and tables.

    ATX headings (outside fences, found by :func:`~beam_chunking.text.headings.scan_markdown`)
    are hard boundaries; fence and table edges come next, then a paragraph that starts at
    indentation 0 and brace depth 0, then a dedent or a brace depth drop, then any
    blank-line boundary, then any line. Lines inside a fence are not scored.
    """
    n = len(lines) - 1
    scores = [LINE] * n
    outline = scan_markdown(text, lines)
    headings = {h.line for h in outline.headings if not h.setext}
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
    return scores, fences, tables


@dataclass(frozen=True)
class StructuralChunker(Chunker):
    """Split on structure, coarsest first, within a hard token ceiling.

    Boundaries, strongest first: headings (always cut, also Markdown headings inside a
    section), code-fence and table edges, paragraphs starting at indentation 0 and brace
    depth 0, dedents and brace-depth drops, blank lines, then line breaks; a single line over
    the budget is cut into token windows. Pieces are packed greedily up to ``max_chunk_size``,
    and a piece that fits is never split, so a code block, a function body or a table that
    fits stays whole. The better choice for Markdown with deep headings, HTML, config files
    and code; use the sentence or semantic strategies for prose.

    Tables: a Markdown pipe table (the parsers render HTML, DOCX and PPTX tables as one) that
    fits stays whole; one that does not is split between rows and each later piece repeats
    the header and separator lines. Such a chunk's ``start``/``end`` cover its own rows and
    its text is the repeated header plus ``document_text[start:end]``; it carries
    ``table_header_repeated=True`` (the only chunks whose text is not a plain span).

    Chunks fully inside a fenced block carry ``chunk_kind="code"`` and, when the fence names
    one, ``language``; table chunks carry ``chunk_kind="table"``. No overlap.

    Args:
        max_chunk_size: Hard ceiling per chunk in tokens, counted on the chunk's own text; at
            least 4. Default 512.
        tokenizer: A tiktoken encoding or model name. Default ``"cl100k_base"``.
    """

    name = "structural"
    unit_template = "{tokenizer} tokens"
    max_chunk_size: int = 512
    tokenizer: str = "cl100k_base"

    def __post_init__(self) -> None:
        require_positive("StructuralChunker", "max_chunk_size", self.max_chunk_size, minimum=MIN_WINDOW_TOKENS)
        object.__setattr__(self, "_sizer", tiktoken_sizer(self.tokenizer))

    def section_chunks(self, text: str, start: int, end: int) -> List[Tuple[int, int, Optional[str], Dict[str, Any], int]]:
        """``(start, end, prefix, metadata, tokens)`` chunks of one section (``prefix``: a
        repeated table header; ``tokens``: the chunk text's own count)."""
        if not text[start:end].strip():
            return []
        enc = self._sizer.tiktoken_encoding
        budget = self.max_chunk_size
        tk = TokenIndex(enc, text, start, end)

        def measure(s: int, e: int) -> int:
            return tk.count(text, s, e)

        def measure_text(t: str) -> int:
            return len(enc.encode_ordinary(t))

        def fallback(s: int, e: int) -> List[Tuple[int, int]]:
            return [(a, b) for a, b, _ in token_windows(enc, text, s, e, budget, 0, tk)]

        lines = line_starts(text, start, end)
        scores, fences, tables = structure_scores(text, lines)
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

        pieces = split_levels(text, lines, scores, budget, measure, fallback, special)
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
            # Counted on the section's one encode (two short encodes at most); only a piece
            # with a repeated header is encoded whole.
            n = measure(s, e) if prefix is None else measure_text(prefix + text[s:e])
            out.append((s, e, prefix, meta, n))
        return out

    def chunk_document(self, doc: ParsedDocument) -> List[Chunk]:
        """Chunk every section; chunks carry the section's provenance."""
        chunks: List[Chunk] = []
        for section in doc.sections:
            base = section_metadata(doc, section)
            for s, e, prefix, extra, n in self.section_chunks(doc.text, section.start, section.end):
                chunks.append(make_chunk(doc, index=len(chunks), start=s, end=e, token_count=n,
                                         metadata=dict(base, **extra) if extra else base, prefix=prefix or ""))
        return chunks
