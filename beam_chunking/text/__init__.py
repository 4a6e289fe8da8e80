"""The text toolkit: exact-span helpers shared by the parsers, strategies, templates and refiners.

Every function here maps ``(text, start, end)`` to spans of the same ``text`` (Python
``str`` code-point offsets, ``end`` exclusive), so whatever is built on it keeps the
invariant ``chunk.text == text[start:end]``. Nothing here imports a higher layer
(parsers, strategies, Beam), and nothing here holds state beyond per-process caches of
tokenizer tables.

Modules:
    :mod:`~beam_chunking.text.spans`: whitespace trimming, line starts, grapheme-safe cuts.
    :mod:`~beam_chunking.text.sentences`: the rule-based sentence segmenter.
    :mod:`~beam_chunking.text.headings`: the Markdown heading and fence scanner,
        plain-text heading patterns and heading paths.
    :mod:`~beam_chunking.text.packing`: greedy packing of consecutive spans under a size,
        and budgeted splitting at scored line boundaries.
    :mod:`~beam_chunking.text.fragments`: the minimum chunk size: undersized spans joined
        to a neighbour within the ceiling, and what looks like a block header or heading.
    :mod:`~beam_chunking.text.tokens`: a text encoded once with tiktoken, exact token
        counts of its spans, and token windows.
"""
from __future__ import annotations
