"""Opening zip containers (DOCX, PPTX, XLSX) safely, before any library reads them.

Checks, all from the central directory and without inflating anything but the members'
first bytes:

- the member count and the total uncompressed size;
- the compression ratio of the archive as a whole and of every member on its own: members
  whose own ratio exceeds ``max_compression_ratio`` may together inflate to at most
  :data:`RATIO_FLOOR_BYTES` (1 MiB; small members such as an empty printer-settings blob
  can have high ratios). Padding (stored or incompressible members) lowers the archive's
  ratio but not a member's, so it cannot hide a bomb split into many members;
- that the members the format needs are present (a renamed zip is not a DOCX);
- that no XML member declares a DTD. Office Open XML never uses one, and a DTD is how XML
  external entities (file or network reads) and billion-laughs expansion get in; such a
  document is refused, never resolved. Every member is looked at, whatever its name (a
  relationship can point the main part at ``word/main.bin``), in the encoding an XML parser
  would use: a byte-order mark, else the pattern of zero bytes around the first ``<``
  (UTF-16 and UTF-32 without a mark), else the ``encoding`` of the XML declaration.
"""
from __future__ import annotations

import codecs
import io
import re
import zipfile
from typing import Iterable, List, Optional

from beam_chunking.errors import ParseError
from beam_chunking.parsers.limits import MIB, ParseLimits
from beam_chunking.types import Document

#: Longest XML prolog (everything before the root element) accepted, in bytes.
_MAX_PROLOG_BYTES = MIB
#: Most bytes that members over ``max_compression_ratio`` may inflate to, all together (1 MiB).
RATIO_FLOOR_BYTES = MIB
# A root element starts with "<" and a name character; "<!" and "<?" open other markup.
_ROOT = re.compile(r"<[^!?/\s]")
# Comments and processing instructions may hold "<x" without it being the root element.
_NOT_MARKUP = re.compile(r"<!--.*?(?:-->|$)|<\?.*?(?:\?>|$)", re.S)
_DECLARED = re.compile(rb"^\s*<\?xml[^>]*?encoding\s*=\s*[\"']([A-Za-z0-9._:-]+)[\"']")
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"),
         (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
# XML 1.0 Appendix F: without a byte-order mark, the first character ("<" or white space)
# of a wide encoding shows in which of the first bytes are zero.
_WIDE = (((True, True, True, False), "utf-32-be"), ((False, True, True, True), "utf-32-le"),
         ((True, False), "utf-16-be"), ((False, True), "utf-16-le"))
# Encodings in which "<!DOCTYPE" is the same ASCII bytes, so the Latin-1 view covers them.
_ASCII_LIKE = re.compile(r"^(utf-?8|us-ascii|ascii|iso[-_]?8859-\d+|latin-?1|(windows|cp)-?125\d)$", re.I)
_EBCDIC_XML = b"\x4c\x6f\xa7\x94"  # "<?xm" in EBCDIC


class UncheckedEncoding(ValueError):
    """A member is XML in an encoding whose prolog cannot be checked (EBCDIC, or a declared
    encoding Python does not know)."""


def views(head: bytes) -> List[str]:
    """The first bytes of a member as text, in every encoding an XML parser might read them in.

    A byte-order mark, else the zero bytes of a wide encoding, decide alone. An
    ASCII-compatible start is read as Latin-1 (every byte maps and the markup is ASCII)
    and, when its XML declaration names an encoding that is not ASCII-compatible (UTF-7,
    UTF-16 declared over 8-bit bytes), in that encoding too.

    Raises:
        UncheckedEncoding: EBCDIC, or a declared encoding that Python does not know.
    """
    if head.startswith(codecs.BOM_UTF8):  # then as without it: a declaration may still follow
        head = head[len(codecs.BOM_UTF8):]
    for bom, name in _BOMS:
        if head.startswith(bom):
            return [head[len(bom):].decode(name, errors="replace")]
    for zeros, name in _WIDE:
        if len(head) >= len(zeros) and tuple(b == 0 for b in head[:len(zeros)]) == zeros:
            return [head.decode(name, errors="replace")]
    if head.startswith(_EBCDIC_XML):
        raise UncheckedEncoding("EBCDIC")
    out = [head.decode("latin-1")]
    declared = _DECLARED.match(head)
    if declared and not _ASCII_LIKE.match(declared.group(1).decode("ascii")):
        name = declared.group(1).decode("ascii")
        try:  # bytes.decode also refuses the codecs that are no text encoding (hex, zlib)
            out.append(head.decode(name, errors="replace"))
        except (LookupError, UnicodeError, ValueError):
            raise UncheckedEncoding(name) from None
    return out


def _verdict(text: str) -> Optional[bool]:
    """``True``: a DTD; ``False``: the root element (or no XML at all); ``None``: read on."""
    text = text.lstrip(" \t\r\n\ufeff")
    if not text:
        return None
    if not text.startswith("<"):
        return False  # no parser reads this as XML (an image, a font)
    text = _NOT_MARKUP.sub("", text)
    root = _ROOT.search(text)
    prolog = text[: root.start()] if root else text
    if "<!DOCTYPE" in prolog or "<!ENTITY" in prolog:
        return True
    return False if root else None


def declares_dtd(f) -> bool:
    """Whether a member read as XML would declare a DTD; reads only up to the root element.

    Args:
        f: The member, open for reading.

    Raises:
        UncheckedEncoding: it is in an encoding that cannot be checked.
    """
    head = b""
    block_size = 512  # most members are told apart by their first bytes
    while len(head) <= _MAX_PROLOG_BYTES:
        block = f.read(block_size)
        block_size = 65536
        head += block
        verdicts = [_verdict(text) for text in views(head)]
        if True in verdicts:
            return True
        if None not in verdicts or not block:
            return False
    return True  # a prolog this long only serves to hide something


def _check_ratios(members, limits: ParseLimits, fail) -> None:
    total = sum(m.file_size for m in members)
    packed = max(1, sum(m.compress_size for m in members))
    if total > RATIO_FLOOR_BYTES and total / packed > limits.max_compression_ratio:
        raise fail(f"the archive has compression ratio {total / packed:.0f}:1, over max_compression_ratio="
                   f"{limits.max_compression_ratio:g} (a zip bomb); refused before inflating")
    over = [m for m in members if m.file_size > limits.max_compression_ratio * max(1, m.compress_size)]
    inflated = sum(m.file_size for m in over)
    if inflated > RATIO_FLOOR_BYTES:
        worst = max(over, key=lambda m: m.file_size / max(1, m.compress_size))
        raise fail(
            f"{len(over)} member(s) over max_compression_ratio={limits.max_compression_ratio:g} inflate to "
            f"{inflated} bytes, over {RATIO_FLOOR_BYTES} (worst: {worst.filename}, "
            f"{worst.file_size / max(1, worst.compress_size):.0f}:1; a zip bomb); refused before inflating")


def open_container(doc: Document, limits: ParseLimits, required: Iterable[str], kind: str,
                   check_dtd: bool = True) -> zipfile.ZipFile:
    """Return a ``ZipFile`` over ``doc.data`` once every safety check passes.

    Args:
        doc: The document (for error messages).
        limits: The caps to enforce.
        required: Member names the format must contain.
        kind: Format name for messages (``"DOCX"``).
        check_dtd: Refuse members that declare a DTD (default ``True``). ``False`` for
            formats whose members carry a harmless DOCTYPE by design (an EPUB's XHTML) and
            whose parser resolves no entity itself.

    Raises:
        ParseError: not a zip, a cap exceeded, a required member missing, or a DTD found.
    """

    def fail(message: str) -> ParseError:
        return ParseError(f"{kind}: {message}", document_id=doc.id, uri=doc.uri)

    try:
        archive = zipfile.ZipFile(io.BytesIO(doc.data))
        members = archive.infolist()
    except (zipfile.BadZipFile, EOFError, ValueError, OSError) as exc:
        raise fail(f"not a valid zip container ({exc}); the file is truncated or not a {kind}") from None
    if len(members) > limits.max_zip_members:
        raise fail(f"{len(members)} zip members exceed max_zip_members={limits.max_zip_members}")
    total = sum(m.file_size for m in members)
    if total > limits.max_uncompressed_bytes:
        raise fail(
            f"members inflate to {total} bytes, over max_uncompressed_bytes="
            f"{limits.max_uncompressed_bytes} (a zip bomb or an oversized file; raise the limit if it is genuine)"
        )
    _check_ratios(members, limits, fail)
    names = {m.filename for m in members}
    for name in required:
        if name not in names:
            raise fail(f"missing {name}; the file is a zip but not a {kind}")
    for m in members:
        if not check_dtd or m.is_dir() or m.file_size == 0:
            continue
        try:
            with archive.open(m) as f:
                bad = declares_dtd(f)
        except UncheckedEncoding as exc:
            raise fail(f"member {m.filename} is XML in encoding {exc}, which Office files never use and "
                       "whose prolog cannot be checked for a DTD; refused") from None
        except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, RuntimeError) as exc:
            raise fail(f"member {m.filename} cannot be read ({exc})") from None
        if bad:
            raise fail(
                f"member {m.filename} declares a DTD or entities (XML external entity or "
                "entity-expansion attack); refused without resolving it"
            )
    return archive
