"""The parsers of single formats, by content type: every parser except the e-mail one.

The e-mail parser hands each attachment to the parser of the attachment's content type, so
it needs this mapping; :data:`beam_chunking.parsers.PARSERS` is this mapping plus the
e-mail parser. Keeping the single-format parsers here, below both, means the e-mail parser
and the package never import each other. Every parser has the signature
``parser(document, *, errors="strict", limits=ParseLimits(), keep=frozenset())`` and returns a
:class:`~beam_chunking.types.ParsedDocument`.

Example:
    >>> FORMAT_PARSERS["text/markdown"].__name__
    'parse_markdown'
"""
from __future__ import annotations

from typing import Callable, Dict

from beam_chunking.parsers.code import CONTENT_TYPES, parse_code
# EMAIL, the content type of an e-mail message: its parser is added by beam_chunking.parsers.
from beam_chunking.parsers.detect import EMAIL, EPUB, ODP, ODS, ODT, RTF, SUBRIP, WEBVTT
from beam_chunking.parsers.docx import parse_docx
from beam_chunking.parsers.epub import parse_epub
from beam_chunking.parsers.html import parse_html
from beam_chunking.parsers.markdown import parse_markdown
from beam_chunking.parsers.odf import parse_odf
from beam_chunking.parsers.pdf import parse_pdf
from beam_chunking.parsers.pptx import parse_pptx
from beam_chunking.parsers.rtf import parse_rtf
from beam_chunking.parsers.tabular import parse_delimited, parse_xlsx
from beam_chunking.parsers.text import parse_text
from beam_chunking.parsers.transcript import parse_transcript
from beam_chunking.types import ParsedDocument

#: A parser: ``parser(document, *, errors="strict", limits=ParseLimits(), keep=frozenset()) -> ParsedDocument``.
Parser = Callable[..., ParsedDocument]

#: content type -> parser, for every format but e-mail.
FORMAT_PARSERS: Dict[str, Parser] = {
    "text/plain": parse_text,
    "text/markdown": parse_markdown,
    "text/html": parse_html,
    "application/pdf": parse_pdf,
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": parse_docx,
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": parse_pptx,
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": parse_xlsx,
    EPUB: parse_epub,
    ODT: parse_odf,
    ODS: parse_odf,
    ODP: parse_odf,
    RTF: parse_rtf,
    "text/csv": parse_delimited,
    "text/tab-separated-values": parse_delimited,
    WEBVTT: parse_transcript,
    SUBRIP: parse_transcript,
    **{ctype: parse_code for ctype in CONTENT_TYPES.values()},
}

__all__ = ["EMAIL", "FORMAT_PARSERS", "Parser"]
