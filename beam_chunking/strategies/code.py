"""Source code cut at syntax boundaries: class, then function/method, then statement, then line."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from beam_chunking.errors import ConfigError
from beam_chunking.parsers.code import CONTENT_TYPES, LANGUAGES
from beam_chunking.strategies._code_outline import GRAMMARS, Outline, outline
from beam_chunking.strategies.base import (UNDERSIZED, Chunker, make_chunk, require_overlap, require_positive,
                                           section_metadata)
from beam_chunking.strategies.fixed import FixedSizeChunker
from beam_chunking.text.fragments import effective_minimum, merge_undersized
from beam_chunking.text.packing import split_levels
from beam_chunking.types import Chunk, ParsedDocument

PARSERS = ("auto", "tree-sitter", "heuristic")
_BY_CONTENT_TYPE = {ctype: lang for lang, ctype in CONTENT_TYPES.items()}


@dataclass(frozen=True)
class CodeChunker(Chunker):
    """Code split at the highest syntax boundary that helps (parsed, not guessed).

    The file is outlined by a real parser where one is available offline: Python's own
    ``ast``, and tree-sitter with the language's grammar wheel for javascript, typescript,
    java, go, rust, ruby, csharp, cpp/c, php and swift (``pip install
    "beam-chunking[code]"``). Without one, per-language definition-line patterns and
    indentation are used (there a ``def`` inside a string can mislead; the
    parsers are never misled). Top-level definitions are the strongest boundaries, then
    methods, then statements inside functions, then blank lines, then lines; a single line
    over the budget is cut at its last whitespace before the budget (a grapheme boundary when
    there is none).

    Consecutive pieces are packed greedily, and a piece that fits is never split: a function
    or method of at most ``max_chunk_size - overlap`` characters always lands whole in one
    chunk. ``max_chunk_size`` is a hard ceiling with the overlap included.

    A piece under ``min_chunk_size`` characters joins a neighbour when the joined chunk
    still fits ``max_chunk_size - overlap``: the following piece for a block header whose
    body did not fit beside it (``try:``, ``for x in y:``, ``class X(Base):``, a line
    ending in ``{``), else the previous one, then the other. One that no neighbour can take
    is kept with ``undersized=True``.

    The language comes from ``language``, else the section's ``language`` metadata (set by
    the code parser from the extension), else the content type; an unknown language uses
    generic boundaries (blank lines, then lines). Chunks carry ``language``, ``scope`` (the
    innermost definition holding the chunk, e.g. ``"Parser.parse_args"``, or the first one it
    starts), ``symbols`` (definitions wholly inside the chunk), ``parser`` (``ast``,
    ``tree-sitter`` or ``heuristic``) and ``chunk_kind="code"``. Offsets are code points,
    also for non-ASCII source (syntax trees are only asked for line numbers).

    Args:
        max_chunk_size: Ceiling per chunk, in characters, overlap included. Default 1500.
        overlap: Characters of whole trailing lines of the previous chunk repeated, at most.
            Default 0 (overlap rarely helps code retrieval).
        language: Force a language (``"python"``...); default ``None`` (detect).
        parser: ``"auto"`` (default), ``"tree-sitter"`` (also for Python) or ``"heuristic"``.
        min_chunk_size: Smallest chunk kept alone, in characters; at most a quarter of
            ``max_chunk_size`` applies; 0 turns it off. Default 100 (a block header and a
            short statement or two).
    """

    name = "code"
    max_chunk_size: int = 1500
    overlap: int = 0
    language: Optional[str] = None
    parser: str = "auto"
    min_chunk_size: int = 100

    def __post_init__(self) -> None:
        require_positive("CodeChunker", "max_chunk_size", self.max_chunk_size)
        require_overlap("CodeChunker", "max_chunk_size", self.max_chunk_size, "overlap", self.overlap)
        require_positive("CodeChunker", "min_chunk_size", self.min_chunk_size, minimum=0)
        if self.parser not in PARSERS:
            raise ConfigError(f"CodeChunker.parser={self.parser!r} must be one of {PARSERS}", field="parser")
        known = set(LANGUAGES.values())
        if self.language is not None and self.language not in known:
            raise ConfigError(f"CodeChunker.language={self.language!r} is not one of {', '.join(sorted(known))}",
                              field="language")

    def language_of(self, doc: ParsedDocument, section_meta: Dict[str, Any]) -> str:
        """The language to outline with (``"generic"`` when unknown)."""
        return (self.language or section_meta.get("language") or _BY_CONTENT_TYPE.get(doc.content_type)
                or "generic")

    def spans(self, text: str, start: int, end: int, language: str) -> Tuple[List[Tuple[int, int]], Outline]:
        """``(start, end)`` chunks of one section and the outline they were cut on."""
        pieces, shape, _ = self.sized_spans(text, start, end, language)
        return pieces, shape

    def sized_spans(self, text: str, start: int, end: int, language: str
                    ) -> Tuple[List[Tuple[int, int]], Outline, set]:
        """Like :meth:`spans`, plus the ``(start, end)`` chunks still under the minimum."""
        shape = outline(language, text, start, end, self.parser)
        budget = self.max_chunk_size - self.overlap

        def measure(s: int, e: int) -> int:
            return e - s

        def fallback(s: int, e: int) -> List[Tuple[int, int]]:  # one line over the budget
            return [(a, b) for a, b, _ in FixedSizeChunker(max_chunk_size=budget, overlap=0).section_spans(text, s, e)]

        minimum = effective_minimum(self.min_chunk_size, self.max_chunk_size)
        pieces = [(s, e) for s, e, _ in split_levels(text, shape.lines, shape.scores, budget, measure, fallback,
                                                     min_size=minimum)]
        # Joined before the overlap is added, against the same budget, so the ceiling holds.
        merged = merge_undersized(text, pieces, minimum, budget, measure)
        pieces = [(s, e) for s, e, _ in merged]
        flagged = [small for _, _, small in merged]
        if self.overlap:
            pieces = self._with_overlap(text, start, pieces)
        return pieces, shape, {p for p, small in zip(pieces, flagged) if small}

    def _with_overlap(self, text: str, floor: int, pieces: List[Tuple[int, int]]) -> List[Tuple[int, int]]:
        out = pieces[:1]
        for (s, e) in pieces[1:]:
            begin = s
            while True:  # take whole lines back while they fit the overlap and the ceiling
                prev = text.rfind("\n", floor, max(floor, begin - 1))
                candidate = prev + 1 if prev >= 0 else floor
                if (candidate >= begin or candidate <= out[-1][0] or s - candidate > self.overlap
                        or e - candidate > self.max_chunk_size):
                    break  # starts stay strictly increasing, so chunk ids stay unique
                begin = candidate
                if candidate == floor:
                    break
            while begin < s and text[begin].isspace():
                begin += 1
            out.append((begin, e))
        return out

    def chunk_document(self, doc: ParsedDocument) -> List[Chunk]:
        """Chunk every section at its syntax boundaries."""
        chunks: List[Chunk] = []
        for section in doc.sections:
            base = section_metadata(doc, section)
            language = self.language_of(doc, base)
            pieces, shape, small = self.sized_spans(doc.text, section.start, section.end, language)
            for s, e in pieces:
                meta = dict(base, chunk_kind="code", parser=shape.parser)
                if (s, e) in small:
                    meta[UNDERSIZED] = True
                if language != "generic":
                    meta["language"] = language
                scope, symbols = _scope(shape.definitions, s, e)
                if scope:
                    meta["scope"] = scope
                if symbols:
                    meta["symbols"] = symbols
                chunks.append(make_chunk(doc, index=len(chunks), start=s, end=e, token_count=None, metadata=meta))
        return chunks


def _scope(defs: List[Tuple[int, int, str]], s: int, e: int) -> Tuple[str, List[str]]:
    """The innermost definition holding ``[s, e)`` (else the first starting in it), and those inside it."""
    holding = ""
    inside: List[str] = []
    first = ""
    for ds, de, name in defs:
        if ds <= s and e <= de:
            holding = name  # definitions come in start order, so the last holder is the innermost
        elif s <= ds and de <= e:
            inside.append(name)
        if not first and s <= ds < e:
            first = name
    return holding or first, inside[:50]


def available_grammars() -> List[str]:
    """Languages whose tree-sitter grammar is installed (Python always has ``ast``)."""
    from beam_chunking.strategies._code_outline import _ts_parser

    return [lang for lang in sorted(GRAMMARS) if _ts_parser(lang) is not None]
