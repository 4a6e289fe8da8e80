"""Opening zip containers (DOCX, PPTX, XLSX) safely, before any library reads them.

Checks, all from the central directory and without inflating anything:
- the member count, the total uncompressed size and the compression ratio (zip bombs);
- that the members the format needs are present (a renamed zip is not a DOCX);
- that no XML member declares a DTD. Office Open XML never uses one, and a DTD is how XML
  external entities (file or network reads) and billion-laughs expansion get in; such a
  document is refused, never resolved.
"""
from __future__ import annotations

import io
import re
import zipfile
from typing import Iterable

from beam_chunking.errors import ParseError
from beam_chunking.parsers.limits import MIB, ParseLimits
from beam_chunking.types import Document

#: Longest XML prolog (everything before the root element) accepted, in bytes.
_MAX_PROLOG_BYTES = MIB
_ROOT = re.compile(r"<[A-Za-z_]")
# Comments and processing instructions may hold "<x" without it being the root element.
_NOT_MARKUP = re.compile(r"<!--.*?(?:-->|$)|<\?.*?(?:\?>|$)", re.S)


def _declares_dtd(f) -> bool:
    """Whether an XML stream's prolog declares a DTD; reads only up to the root element."""
    head = b""
    while len(head) <= _MAX_PROLOG_BYTES:
        block = f.read(65536)
        head += block
        if head.startswith((b"\xff\xfe", b"\xfe\xff")):
            text = head[: len(head) // 2 * 2].decode("utf-16", errors="replace")
        else:
            text = head.decode("latin-1")  # every byte maps; the markup is ASCII
        text = _NOT_MARKUP.sub("", text)
        root = _ROOT.search(text)
        prolog = text[: root.start()] if root else text
        if "<!DOCTYPE" in prolog or "<!ENTITY" in prolog:
            return True
        if root or not block:
            return False
    return True  # a prolog this long only serves to hide something


def open_container(doc: Document, limits: ParseLimits, required: Iterable[str], kind: str) -> zipfile.ZipFile:
    """Return a ``ZipFile`` over ``doc.data`` once every safety check passes.

    Args:
        doc: The document (for error messages).
        limits: The caps to enforce.
        required: Member names the format must contain.
        kind: Format name for messages (``"DOCX"``).

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
    packed = max(1, sum(m.compress_size for m in members))
    ratios = [(total / packed, "the archive")]
    ratios += [(m.file_size / max(1, m.compress_size), m.filename) for m in members if m.file_size > MIB]
    for ratio, what in ratios:
        if ratio > limits.max_compression_ratio:
            raise fail(
                f"{what} has compression ratio {ratio:.0f}:1, over max_compression_ratio="
                f"{limits.max_compression_ratio:g} (a zip bomb); refused before inflating"
            )
    names = {m.filename for m in members}
    for name in required:
        if name not in names:
            raise fail(f"missing {name}; the file is a zip but not a {kind}")
    for m in members:
        if m.filename.endswith((".xml", ".rels")):
            try:
                with archive.open(m) as f:
                    bad = _declares_dtd(f)
            except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, RuntimeError) as exc:
                raise fail(f"member {m.filename} cannot be read ({exc})") from None
            if bad:
                raise fail(
                    f"member {m.filename} declares a DTD or entities (XML external entity or "
                    "entity-expansion attack); refused without resolving it"
                )
    return archive
