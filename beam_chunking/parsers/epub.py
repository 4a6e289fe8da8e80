"""EPUB (2 and 3): the book's chapters in reading order, each parsed as the HTML it is.

An EPUB is a zip. ``META-INF/container.xml`` names the OPF package file; its ``spine``
lists the chapters in reading order by manifest id. Every spine item that is an XHTML or
HTML document goes through :func:`~beam_chunking.parsers.html.parse_html`, and its sections
join the book's with ``chapter`` metadata (1-based, in spine order) and ``chapter_href``
(its path in the zip), so headings come from the chapter's own ``h1``-``h6`` and no
section spans two chapters. Navigation documents are not chapters: the EPUB 3 ``nav``
document (manifest ``properties="nav"``, often in the spine too) and the EPUB 2 NCX (never
an XHTML item) are left out; spine items marked ``linear="no"`` (a cover, a notes page) are
read in spine order like the others. The book's ``dc:title`` and ``dc:creator`` (several joined with ``"; "``)
become ``title`` and ``author`` metadata; ``chapters`` counts the chapters read.

Plain :mod:`zipfile` and defusedxml, not ebooklib: the format needs three small XML files
read (container, OPF, encryption), which defusedxml parses with entity declarations
refused, whereas ebooklib parses every item of the book with lxml up front (images and
fonts included), fails on books whose NCX or nav it cannot read although neither is
needed here, and would be one more dependency for about sixty lines of work.

The zip is checked before anything is inflated (member count, total size, compression
ratios, as :mod:`beam_chunking.parsers._zipsafe` does for Office files), but its members
are not refused for declaring a DTD: EPUB 2 chapters carry the XHTML 1.1 ``DOCTYPE`` and
EPUB 3 chapters ``<!DOCTYPE html>``. That is safe here because chapters are read by an HTML
parser, which never expands entities, and the package files by defusedxml, which refuses
entity declarations. A book whose chapters are encrypted (``META-INF/encryption.xml``
naming a chapter: DRM) is refused with a :class:`~beam_chunking.errors.ParseError`.
"""
from __future__ import annotations

import posixpath
import re
import zipfile
from typing import Any, Dict, FrozenSet, List, Tuple
from urllib.parse import unquote

from beam_chunking.errors import ParseError
from beam_chunking.parsers._build import TextBuilder, collapse
from beam_chunking.parsers._optional import require
from beam_chunking.parsers._zipsafe import open_container
# EPUB, the content type of an EPUB book, is defined with the other types in detect.
from beam_chunking.parsers.detect import EPUB
from beam_chunking.parsers.drops import KEEP_NOTHING
from beam_chunking.parsers.html import parse_html
from beam_chunking.parsers.limits import DEFAULT_LIMITS, ParseLimits, check_time
from beam_chunking.types import Document, ParsedDocument

__all__ = ["EPUB", "parse_epub"]

_CONTAINER = "{urn:oasis:names:tc:opendocument:xmlns:container}"
_OPF = "{http://www.idpf.org/2007/opf}"
_DC = "{http://purl.org/dc/elements/1.1/}"
_ENC = "{http://www.w3.org/2001/04/xmlenc#}"
_CHAPTER_TYPES = frozenset({"application/xhtml+xml", "text/html", "application/xml+xhtml"})
# In HTML, a self-closed raw-text element (<title/>, as XHTML writers emit) opens an element
# that swallows the rest of the page; close it explicitly before the HTML parser sees it.
_SELF_CLOSED_RAW = re.compile(rb"<(title|script|style|textarea|iframe|noscript|xmp)(\s[^<>]*?)?/>", re.I)


class _Book:
    """One book being read: its zip (checked), its limits, and errors that name it."""

    def __init__(self, doc: Document, limits: ParseLimits, defused):
        self.doc = doc
        self.limits = limits
        self.defused = defused
        # An EPUB's XHTML chapters carry a DOCTYPE by design; the HTML parser reads them and
        # expands no entity, and the package files are read by defusedxml.
        self.archive = open_container(doc, limits, (), "EPUB", check_dtd=False)

    def fail(self, message: str) -> ParseError:
        return ParseError(f"EPUB: {message}", document_id=self.doc.id, uri=self.doc.uri)

    def read(self, name: str, missing: str) -> bytes:
        """Member ``name``'s bytes; ``missing`` says what its absence means."""
        try:
            return self.archive.read(name)
        except KeyError:
            raise self.fail(missing) from None
        except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, RuntimeError) as exc:
            raise self.fail(f"member {name} cannot be read ({exc})") from None

    def xml(self, name: str):
        """Member ``name`` parsed by defusedxml (entity declarations refused)."""
        defused = self.defused  # defusedxml.ElementTree
        data = self.read(name, f"missing {name}; the file is a zip but not an EPUB")
        try:
            return defused.fromstring(data)
        except defused.ParseError as exc:
            raise self.fail(f"{name} is not well-formed XML ({exc})") from None
        except ValueError as exc:  # defusedxml's EntitiesForbidden and kin
            raise self.fail(f"{name} declares entities ({type(exc).__name__}); refused without resolving "
                            "them") from None


def _package_path(book: _Book) -> str:
    root = book.xml("META-INF/container.xml")
    for rootfile in root.iter(f"{_CONTAINER}rootfile"):
        path = rootfile.get("full-path")
        if path and rootfile.get("media-type", "application/oebps-package+xml") == "application/oebps-package+xml":
            return path
    raise book.fail("META-INF/container.xml names no package file (rootfile full-path)")


def _metadata(package) -> Dict[str, Any]:
    meta = package.find(f"{_OPF}metadata")
    if meta is None:
        return {}
    out: Dict[str, Any] = {}
    titles = [collapse("".join(t.itertext())) for t in meta.iter(f"{_DC}title")]
    creators = [collapse("".join(c.itertext())) for c in meta.iter(f"{_DC}creator")]
    if any(titles):
        out["title"] = next(t for t in titles if t)
    if any(creators):
        out["author"] = "; ".join(c for c in creators if c)
    return out


def _spine(book: _Book, package, base: str) -> List[str]:
    """Zip member names of the chapters, in reading order (navigation left out)."""
    manifest: Dict[str, Tuple[str, str, str]] = {}
    for item in package.iter(f"{_OPF}item"):
        href = item.get("href")
        if item.get("id") and href:
            path = posixpath.normpath(posixpath.join(base, unquote(href.split("#", 1)[0])))
            manifest[item.get("id")] = (path, item.get("media-type", ""), item.get("properties", ""))
    spine = package.find(f"{_OPF}spine")
    if spine is None:
        raise book.fail("the package file has no spine (reading order)")
    chapters = []
    for ref in spine.iter(f"{_OPF}itemref"):
        entry = manifest.get(ref.get("idref", ""))
        if entry is None:
            continue  # a dangling reference: readers skip it too
        path, media_type, properties = entry
        if media_type in _CHAPTER_TYPES and "nav" not in properties.split():
            chapters.append(path)
    return chapters


def _encrypted(book: _Book) -> FrozenSet[str]:
    if "META-INF/encryption.xml" not in book.archive.namelist():
        return frozenset()
    root = book.xml("META-INF/encryption.xml")
    refs = (ref.get("URI", "") for ref in root.iter(f"{_ENC}CipherReference"))
    return frozenset(posixpath.normpath(unquote(uri)) for uri in refs if uri)


def _chapter(book: _Book, path: str, errors: str, keep: FrozenSet[str]) -> ParsedDocument:
    data = book.read(path, f"chapter {path} is listed in the spine but missing from the zip")
    data = _SELF_CLOSED_RAW.sub(rb"<\1\2></\1>", data)
    sub = Document(book.doc.id, f"{book.doc.uri}#{path}", data, "text/html", {})
    return parse_html(sub, errors=errors, limits=book.limits, keep=keep)


def parse_epub(doc: Document, *, errors: str = "strict", limits: ParseLimits = DEFAULT_LIMITS,
               keep: FrozenSet[str] = KEEP_NOTHING) -> ParsedDocument:
    """Parse an EPUB book into its chapters' sections (see the module docstring).

    Args:
        doc: The raw document.
        errors: Decoding policy of each chapter's HTML, ``"strict"`` (default) or ``"replace"``.
        limits: Zip container caps (``max_zip_members``, ``max_uncompressed_bytes``,
            ``max_compression_ratio``), ``max_pages`` (chapters, default 5,000) and the HTML
            parser's caps for each chapter.
        keep: Names of :data:`~beam_chunking.parsers.drops.DROPS` kept instead of dropped in
            the chapters (a ``nav`` inside a chapter). Default none.

    Raises:
        ParseError: not a zip, not an EPUB (no container or package file, no spine), a cap
            exceeded, an encrypted chapter, or a chapter that cannot be decoded.
    """
    # Both libraries up front: a missing one names the extra before any byte is read.
    require("selectolax.lexbor", "selectolax")
    book = _Book(doc, limits, require("defusedxml.ElementTree", "defusedxml"))
    try:
        package_path = _package_path(book)
        package = book.xml(package_path)
        chapters = _spine(book, package, posixpath.dirname(package_path))
        if len(chapters) > limits.max_pages:
            raise book.fail(f"{len(chapters)} chapters exceed max_pages={limits.max_pages}; raise the limit "
                            "to parse it")
        locked = _encrypted(book).intersection(chapters)
        if locked:
            raise book.fail(f"chapter {sorted(locked)[0]} is encrypted (DRM); remove the protection to parse it")
        builder = TextBuilder(max_chars=limits.max_text_chars)
        for number, path in enumerate(chapters, start=1):
            check_time(f"chapter {number} of {len(chapters)}")
            parsed = _chapter(book, path, errors, keep)
            builder.add_drops(parsed.dropped)
            for s in parsed.sections:
                builder.add(parsed.text[s.start:s.end], level=s.level, heading_path=s.heading_path, kind=s.kind,
                            metadata=dict(s.metadata, chapter=number, chapter_href=path))
    finally:
        book.archive.close()
    return builder.build(doc, dict(_metadata(package), chapters=len(chapters)))
