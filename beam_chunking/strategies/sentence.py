"""Sentences grouped up to a token budget, with sentence-level overlap."""
from __future__ import annotations

from dataclasses import dataclass
from typing import List

import numpy as np

from beam_chunking.sizing import Sizer
from beam_chunking.strategies.base import SectionChunker, Span, require_overlap, require_positive
from beam_chunking.strategies.token import MIN_WINDOW_TOKENS, token_sizer
from beam_chunking.text.packing import greedy_end
from beam_chunking.text.sentences import sentence_spans


@dataclass(frozen=True)
class SentenceChunker(SectionChunker):
    """Whole sentences packed up to ``max_chunk_size`` tokens, repeating trailing sentences as overlap.

    Sentences come from a rule-based segmenter that keeps "Dr. Smith", "U.S. capital", 3.14,
    v1.2.3, URLs and e-mail addresses whole and splits Chinese/Japanese on 。！？ without
    inserting anything. A chunk after the first starts with the previous chunk's last
    sentences whose tokens add up to at most ``overlap`` (none when the last sentence
    alone is larger). A sentence longer than ``max_chunk_size`` is cut into token windows.

    ``max_chunk_size`` is a hard ceiling counted on each chunk's own text, overlap included
    (and, with an embedding model's tokenizer, the special tokens the model adds).

    Args:
        max_chunk_size: Tokens per chunk, overlap and special tokens included; at least 4
            plus the tokenizer's special tokens. Default 512.
        overlap: Tokens of trailing sentences repeated, at most. Default 64.
        tokenizer: A tiktoken encoding or model name (``"cl100k_base"``, bundled);
            ``"embedder"``: the job's embedding model's own tokenizer (``embed:``); or
            ``"hf:PATH"`` to a ``tokenizer.json``. Default ``"cl100k_base"``.
        min_chunk_size: Smallest chunk kept alone, in tokens: a shorter one (a section's
            tail, a heading line) joins a neighbour, or is rebalanced with it, when the
            result fits ``max_chunk_size``; else it is kept with ``undersized=True``. At
            most a quarter of ``max_chunk_size`` applies; 0 turns it off. Default 32.

    Example:
        >>> [c.text for c in SentenceChunker(max_chunk_size=12, overlap=0).chunk(
        ...     "Dr. Smith went to Washington. He met Mrs. Jones there.")]
        ['Dr. Smith went to Washington.', 'He met Mrs. Jones there.']
    """

    name = "sentence"
    unit_template = "{tokenizer} tokens"
    max_chunk_size: int = 512
    overlap: int = 64
    tokenizer: str = "cl100k_base"
    min_chunk_size: int = 32

    def __post_init__(self) -> None:
        require_positive("SentenceChunker", "max_chunk_size", self.max_chunk_size, minimum=MIN_WINDOW_TOKENS)
        require_overlap("SentenceChunker", "max_chunk_size", self.max_chunk_size, "overlap", self.overlap)
        require_positive("SentenceChunker", "min_chunk_size", self.min_chunk_size, minimum=0)
        # Resolve (and load, offline) now; chunking then looks the encoding up by name.
        object.__setattr__(self, "_sizer", token_sizer("SentenceChunker", self.tokenizer, self.max_chunk_size))

    @property
    def sizer(self) -> Sizer:
        """The tokenizer this strategy counts with (resolved once, at construction)."""
        return self._sizer

    def span_size(self, text: str, start: int, end: int) -> int:
        """Tokens of ``text[start:end]`` encoded on its own (what the ceiling counts)."""
        return self._sizer.count(text[start:end])

    def section_spans(self, text: str, start: int, end: int) -> List[Span]:
        """Return sentence groups of ``text[start:end]`` as ``(start, end, token_count)``.

        The section is encoded once. Sentences are packed on their slice counts (tokens from
        one sentence start to the next), then each chunk's own count is computed exactly
        (see ``TokenIndex.count``) and a sentence is given back while it is over budget.
        """
        sizer = self._sizer
        budget, overlap = self.max_chunk_size, self.overlap
        sents = sentence_spans(text, start, end)
        if not sents:
            return []
        ids = sizer.encode_span(text, sents[0][0], sents[-1][1])
        if len(ids) + sizer.specials <= budget:  # the whole section is one chunk: its encoding's length
            return [(sents[0][0], sents[-1][1], len(ids) + sizer.specials)]
        tk = sizer.index(text, sents[0][0], sents[-1][1], ids)
        # Slice counts leave out the special tokens every chunk's own count includes.
        room = budget - sizer.specials
        firsts = np.searchsorted(tk.coff, [s for s, _ in sents], side="left").tolist()
        firsts.append(tk.n)
        counts = [b - a for a, b in zip(firsts, firsts[1:])]
        out: List[Span] = []
        prev_a = -1  # first sentence of the previous group, -1 when none can overlap
        i, n = 0, len(sents)
        while i < n:
            a, carried = i, 0
            if prev_a >= 0 and overlap:
                while a - 1 > prev_a and carried + counts[a - 1] <= min(overlap, room - 1):
                    a -= 1
                    carried += counts[a]
            # New sentences while the slice counts (overlap included) fit: tokens of [i, b)
            # are firsts[b] - firsts[i].
            b = greedy_end(i + 1, n, lambda end: carried + firsts[end] - firsts[i] <= room)
            own = tk.count(text, sents[a][0], sents[b - 1][1])
            while own > budget and (b - 1 > i or a < i):
                # Give back the last new sentence first, then the overlap.
                if b - 1 > i:
                    b -= 1
                else:
                    a += 1
                own = tk.count(text, sents[a][0], sents[b - 1][1])
            if own > budget:  # one sentence longer than the budget: cut it by tokens
                out.extend(sizer.windows(text, sents[i][0], sents[i][1], budget, overlap, tk))
                prev_a, i = -1, i + 1
                continue
            out.append((sents[a][0], sents[b - 1][1], own))
            prev_a, i = a, b
        return out
