"""Parsers from a document's bytes to text and sections, registered by content type.

``parse(document)`` picks the parser for ``document.content_type``; an unsupported type
(a zip, an executable, a GIF) raises
:class:`~beam_chunking.errors.UnsupportedContentType` and is never read as text. Every
parser has the signature ``parser(document, *, errors="strict", limits=ParseLimits(), keep=frozenset())``; the parsers
that read text by OCR (images, PDF pages without a text layer) also take ``ocr`` (see
:data:`~beam_chunking.parsers.ocr.OCR_MODES`), and only they are given it.
Parsers of binary formats import their library lazily: without the ``parsers`` extra they
fail the document with an error naming it. ``detect_content_type`` types a file from its
bytes and name; ``check_content_types`` validates the types a job forces by pattern.

The formats whose library calls cannot be interrupted (DOCX, PPTX, XLSX, PDF, e-mail, images) are
parsed in a watchdog-guarded child process that is killed when the document's time budget
runs out (:mod:`beam_chunking.parsers.watchdog`; ``ParseLimits(watchdog=False)`` parses
them here); ``parse_in_process`` always parses here.
"""
from __future__ import annotations

import difflib
from typing import FrozenSet, Iterable, Mapping, Tuple, Union

from beam_chunking.errors import ConfigError
from beam_chunking.parsers import watchdog
from beam_chunking.parsers.detect import detect_content_type
from beam_chunking.parsers.dispatch import PARSERS, parse_in_process
from beam_chunking.parsers.drops import KEEP_NOTHING, check_keep
from beam_chunking.parsers.limits import DEFAULT_LIMITS, ParseLimits
from beam_chunking.parsers.ocr import DEFAULT_OCR, check_ocr
from beam_chunking.types import Document, ParsedDocument


def parse(document: Document, *, decode_errors: str = "strict", limits: ParseLimits = DEFAULT_LIMITS,
          keep: FrozenSet[str] = KEEP_NOTHING, ocr: str = DEFAULT_OCR) -> ParsedDocument:
    """Parse ``document`` with the parser registered for its content type.

    Args:
        document: Raw document.
        decode_errors: ``"strict"`` (default) or ``"replace"``; see
            :func:`beam_chunking.parsers.decode.decode`.
        limits: Safety caps (see :class:`ParseLimits`), ``max_parse_seconds`` included: the
            parse runs under that time budget, in a child process killed when it runs out
            for :data:`~beam_chunking.parsers.watchdog.ISOLATED_TYPES` while
            ``limits.watchdog`` is on (the default).
        keep: Parts that parsers drop by default to keep instead (names of
            :data:`~beam_chunking.parsers.drops.DROPS`). Default none: drop them all.
        ocr: ``"auto"`` (default: OCR what has no text layer, images and PDF pages without
            text, when the ``ocr`` extra is installed), ``"always"`` (every PDF page too) or
            ``"never"`` (an image document then fails); see :mod:`beam_chunking.parsers.ocr`.

    Raises:
        UnsupportedContentType: no parser for the content type.
        ParseError: the parser rejected the bytes (the message says why), or its child
            process died (the message names the exit status).
        LimitExceeded: a cap of ``limits`` was reached (the message names it).
        MissingExtra: the format's library is not installed (names the extra).
        ConfigError: ``ocr`` is not one of the modes.
    """
    keep = check_keep(keep)
    check_ocr(ocr)
    if limits.watchdog and watchdog.isolates(document.content_type):
        return watchdog.parse_isolated(document, decode_errors=decode_errors, limits=limits, keep=keep, ocr=ocr)
    return parse_in_process(document, decode_errors=decode_errors, limits=limits, keep=keep, ocr=ocr)


def closest_content_type(ctype: str) -> str:
    """A hint naming the parsed content type closest to ``ctype`` (``"; did you mean
    'text/plain'?"``), or listing them all when none is close."""
    close = difflib.get_close_matches(ctype, sorted(PARSERS), n=1)
    return f"; did you mean {close[0]!r}?" if close else f"; known: {', '.join(sorted(PARSERS))}"


def check_content_types(content_types: Union[Mapping[str, str], Iterable[Tuple[str, str]], None]
                        ) -> Tuple[Tuple[str, str], ...]:
    """Validate the content types a job forces by file pattern (``{"*.log": "text/plain"}``).

    Args:
        content_types: Pattern -> content type, as a mapping or ``(pattern, type)`` pairs;
            ``None`` for none.

    Returns:
        The ``(pattern, content type)`` pairs in the order given.

    Raises:
        ConfigError: a pattern that is not a non-empty string, or a type without a parser
            (naming the closest known type), e.g. ``content_types.*.log: 'text/plane' has no
            parser; did you mean 'text/plain'?``.
    """
    items = content_types.items() if isinstance(content_types, Mapping) else (content_types or ())
    pairs = []
    for item in items:
        pattern, ctype = item if isinstance(item, (tuple, list)) and len(item) == 2 else (item, None)
        if not isinstance(pattern, str) or not pattern:
            raise ConfigError(f"content_types: expected file patterns such as '*.log' as keys, got {pattern!r}",
                              field="content_types")
        if not isinstance(ctype, str) or ctype not in PARSERS:
            hint = closest_content_type(ctype) if isinstance(ctype, str) else f"; known: {', '.join(sorted(PARSERS))}"
            raise ConfigError(f"content_types.{pattern}: {ctype!r} has no parser{hint}", field="content_types")
        pairs.append((pattern, ctype))
    return tuple(pairs)


__all__ = ["PARSERS", "ParseLimits", "check_content_types", "closest_content_type", "detect_content_type", "parse",
           "parse_in_process"]
