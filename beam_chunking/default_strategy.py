"""The strategy a job uses when it names none: one per kind of document, chosen by measurement.

Each content type goes to the strategy that served it best on documents nobody here wrote,
every candidate at the same size (``bench/choose_strategy.py``; the figures are in the
README's "Choosing a strategy"):

- source code and data files (``text/x-python``, ``application/json`` ...): ``code``, which
  cuts at syntax boundaries, so a function that fits is never cut in two;
- transcripts (``text/vtt``, ``application/x-subrip``): ``transcript``, which groups cues into
  time windows; the others leave one short chunk per cue;
- everything else (prose, Markdown, HTML, PDF, Office, OpenDocument, EPUB, RTF, e-mail, scans,
  tables): :data:`~beam_chunking.registry.DEFAULT_STRATEGY`, ``structural``, which keeps
  headings with their text and paragraphs, lists, tables and code blocks whole within a hard
  token ceiling.

Each route uses its strategy's own defaults. Naming a strategy (``--strategy``, ``strategy:``
in the spec, ``JobConfig(strategy=...)``) uses it for every document; ``routes:`` in the spec
replaces single routes.
"""
from __future__ import annotations

from typing import Dict

from beam_chunking.parsers.code import CONTENT_TYPES as CODE_TYPES
from beam_chunking.parsers.sniff import SUBRIP, WEBVTT
from beam_chunking.registry import DEFAULT_STRATEGY, get
from beam_chunking.strategies import Router

#: Content type -> strategy name, for the documents that :data:`DEFAULT_STRATEGY` does not serve best.
DEFAULT_ROUTES: Dict[str, str] = {
    **{ctype: "code" for ctype in sorted(CODE_TYPES.values())},
    WEBVTT: "transcript",
    SUBRIP: "transcript",
}


def default_strategy() -> Router:
    """The job's strategy when it names none: :data:`DEFAULT_ROUTES`, then
    :data:`~beam_chunking.registry.DEFAULT_STRATEGY` (``structural``) for every other type,
    each with its defaults."""
    return Router({ctype: get(name) for ctype, name in DEFAULT_ROUTES.items()}, default=get(DEFAULT_STRATEGY))
