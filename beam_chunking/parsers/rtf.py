"""RTF: the text of a Rich Text Format document, paragraph by paragraph.

Read with striprtf (pure Python, one small module), which walks the control words and
groups, skips the destinations that hold no body text (font and colour tables, style
sheet, ``\\info``, headers, footers, footnotes, pictures, fields' instructions), and
decodes ``\\'hh`` bytes in the code page of ``\\ansicpg`` (or of the font's
``\\fcharset``) and ``\\uN`` escapes with their ``\\ucN`` fallbacks skipped. Around it this
module adds what striprtf leaves to its caller: the file's own bytes are decoded in the
declared code page (writers that put 8-bit bytes in the file unescaped), escapes above
U+FFFF written as two ``\\uN`` halves (UTF-16 surrogates) are joined into one character,
undecodable ``\\'hh`` bytes follow ``errors``, and bytes that are not RTF fail with one
:class:`~beam_chunking.errors.ParseError`.

A paragraph (``\\par``) or line break (``\\line``) ends a paragraph; paragraphs are joined
with a blank line into one section of kind ``text`` (RTF has headings only as
formatting, which striprtf does not report). Table cells end with ``|`` and rows with a
line break, so a row reads ``a|b|``. ``\\info``'s ``\\title`` and ``\\author`` become
``title`` and ``author`` metadata.

striprtf reads the whole file in one call that the time budget cannot interrupt, at
about 0.7 MB of RTF a second on one core, one regular-expression match per character; the
hexadecimal data of pictures (most of a Word RTF's bytes) is cut out before it, so the call
is bounded by the text, and that by the read size cap.
"""
from __future__ import annotations

import codecs
import re
from typing import Any, Dict, FrozenSet

from beam_chunking.errors import ParseError
from beam_chunking.parsers._build import HeadingSections, clean, collapse
from beam_chunking.parsers._optional import require
from beam_chunking.parsers.drops import KEEP_NOTHING
from beam_chunking.parsers.limits import DEFAULT_LIMITS, ParseLimits, check_time
from beam_chunking.types import Document, ParsedDocument

#: Every RTF file starts with these bytes (the spec's ``{\\rtf1``, any version).
RTF_MAGIC = b"{\\rtf"
_CODE_PAGE = re.compile(rb"\\ansicpg(\d{1,5})")
# A picture's data: runs of hex digits no body text has (prose has spaces and other letters).
_HEX_RUN = re.compile(r"[0-9a-fA-F\r\n]{1024,}")
_INFO_FIELD = re.compile(r"\{\\(title|author)\b ?((?:[^{}\\]|\\[^{}])*)\}")


def _code_page(head: bytes) -> str:
    """The code page ``\\ansicpg`` declares (``cp1252`` when none, or an unknown one)."""
    found = _CODE_PAGE.search(head)
    if found:
        name = f"cp{int(found.group(1))}"
        try:
            codecs.lookup(name)
            return name
        except LookupError:
            pass
    return "cp1252"


def _join_surrogates(text: str) -> str:
    # \u-10179\u-8704 is one character written as its two UTF-16 halves.
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _info(striprtf, rtf: str, code_page: str, errors: str) -> Dict[str, Any]:
    """``title`` and ``author`` from the ``\\info`` group, escapes decoded."""
    out: Dict[str, Any] = {}
    for name, value in _INFO_FIELD.findall(rtf[:1 << 20]):
        if name not in out:
            text = collapse(_join_surrogates(striprtf.rtf_to_text(
                f"{{\\rtf1\\ansi\\ansicpg{code_page[2:]} {value}}}", encoding=code_page, errors=errors)))
            if text:
                out[name] = text
    return out


def parse_rtf(doc: Document, *, errors: str = "strict", limits: ParseLimits = DEFAULT_LIMITS,
              keep: FrozenSet[str] = KEEP_NOTHING) -> ParsedDocument:
    """Parse an RTF document into its paragraphs (see the module docstring).

    Args:
        doc: The raw document.
        errors: ``"strict"`` (default): a byte the code page does not define fails the
            document; ``"replace"``: it becomes U+FFFD.
        limits: ``max_text_chars`` caps the text (default 50,000,000 characters).
        keep: Unused (nothing is dropped from this format); accepted for a uniform signature.

    Raises:
        ParseError: the bytes are not RTF, or hold a byte the code page does not define.
    """
    striprtf = require("striprtf.striprtf", "striprtf")
    if not doc.data.startswith(RTF_MAGIC):
        start = doc.data[:16]
        raise ParseError(f"RTF: the file does not start with {{\\rtf (it starts with {start!r}); it is not RTF",
                         document_id=doc.id, uri=doc.uri)
    code_page = _code_page(doc.data[:4096])
    policy = "replace" if errors == "replace" else "strict"
    try:
        rtf = doc.data.decode(code_page, policy)
        text = striprtf.rtf_to_text(_HEX_RUN.sub("", rtf), encoding=code_page, errors=policy)
    except UnicodeDecodeError as exc:
        raise ParseError(f"RTF: byte {exc.object[exc.start:exc.end]!r} is not defined in code page {code_page} "
                         "(run with --decode-errors replace to read it as U+FFFD)", document_id=doc.id, uri=doc.uri) from None
    except LookupError as exc:  # a font's \fcharset naming a codec Python lacks
        raise ParseError(f"RTF: unknown code page ({exc})", document_id=doc.id, uri=doc.uri) from None
    out = HeadingSections(max_chars=limits.max_text_chars)
    for number, line in enumerate(clean(_join_surrogates(text)).split("\n"), start=1):
        if not number % 4096:
            check_time(f"paragraph {number}")
        paragraph = collapse(line)
        if paragraph:
            out.paragraph(paragraph)
    return out.builder.build(doc, _info(striprtf, rtf, code_page, policy))
