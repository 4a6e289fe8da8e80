"""Parsers from a document's bytes to text and sections, registered by content type.

``parse(document)`` picks the parser for ``document.content_type``; an unsupported type
(a zip, an executable, an image) raises
:class:`~beam_chunking.errors.UnsupportedContentType` and is never read as text. Every
parser has the signature ``parser(document, *, errors="strict", limits=ParseLimits(), keep=frozenset())``.
Parsers of binary formats import their library lazily: without the ``parsers`` extra they
fail the document with an error naming it. ``detect_content_type`` types a file from its
bytes and name; ``check_content_types`` validates the types a job forces by pattern.
"""
from __future__ import annotations

import dataclasses
import difflib
import hashlib
from typing import Dict, FrozenSet, Iterable, Mapping, Tuple, Union

from beam_chunking.errors import ConfigError, LimitExceeded, ParseError, UnsupportedContentType
from beam_chunking.parsers.detect import detect_content_type
from beam_chunking.parsers.drops import KEEP_NOTHING, check_keep
from beam_chunking.parsers.formats import EMAIL, FORMAT_PARSERS, Parser
from beam_chunking.parsers.limits import DEFAULT_LIMITS, ParseLimits, parse_budget
from beam_chunking.parsers.mail import parse_email
from beam_chunking.parsers.outlook import OUTLOOK, parse_outlook
from beam_chunking.types import Document, ParsedDocument

#: content type -> parser: the single-format parsers and the e-mail parsers (.eml, Outlook .msg).
PARSERS: Dict[str, Parser] = {**FORMAT_PARSERS, EMAIL: parse_email, OUTLOOK: parse_outlook}


def parse(document: Document, *, decode_errors: str = "strict", limits: ParseLimits = DEFAULT_LIMITS,
          keep: FrozenSet[str] = KEEP_NOTHING) -> ParsedDocument:
    """Parse ``document`` with the parser registered for its content type.

    Args:
        document: Raw document.
        decode_errors: ``"strict"`` (default) or ``"replace"``; see
            :func:`beam_chunking.parsers.decode.decode_text`.
        limits: Safety caps (see :class:`ParseLimits`), ``max_parse_seconds`` included: the
            parse runs under that time budget.
        keep: Parts that parsers drop by default to keep instead (names of
            :data:`~beam_chunking.parsers.drops.DROPS`). Default none: drop them all.

    Raises:
        UnsupportedContentType: no parser for the content type.
        ParseError: the parser rejected the bytes (the message says why).
        LimitExceeded: a cap of ``limits`` was reached (the message names it).
        MissingExtra: the format's library is not installed (names the extra).
    """
    keep = check_keep(keep)
    parser = PARSERS.get(document.content_type)
    if parser is None:
        raise UnsupportedContentType(
            f"content type {document.content_type!r} has no parser (supported: "
            f"{', '.join(sorted(PARSERS))})",
            document_id=document.id,
            uri=document.uri,
        )
    try:
        with parse_budget(limits):
            parsed = parser(document, errors=decode_errors, limits=limits, keep=keep)
    except LimitExceeded as exc:
        if exc.uri is None and exc.document_id is None:
            raise LimitExceeded(str(exc), limit=exc.limit, document_id=document.id, uri=document.uri) from None
        raise
    except ParseError as exc:
        if exc.uri is None and exc.document_id is None:  # raised below the parser, unnamed
            raise ParseError(str(exc), document_id=document.id, uri=document.uri) from None
        raise
    return dataclasses.replace(
        parsed, size_bytes=len(document.data), sha256=hashlib.sha256(document.data).hexdigest()
    )


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


__all__ = ["PARSERS", "ParseLimits", "check_content_types", "closest_content_type", "detect_content_type", "parse"]
