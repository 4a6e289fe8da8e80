"""Content-type detection from the file name and the first bytes, and types forced by pattern.

In order:

1. Magic bytes win over the name for binary formats, so a PDF or an executable renamed to
   ``.txt`` is never read as text, and a file whose first 8 KiB hold more than a few
   control bytes (:func:`looks_binary`, the rule of ``file(1)``) is binary whatever its name.
2. A known extension (:data:`EXTENSIONS`, the code languages of
   :data:`~beam_chunking.parsers.code.LANGUAGES`) or file name (``Dockerfile``) names the type.
3. A file whose name says nothing (no extension, an unknown one, ``.txt`` or ``.text``) is
   sniffed: its first 8 KiB are matched, conservatively, against an HTML page, an XML
   document, an RFC 822 e-mail, JSON, a YAML document and a ``#!`` script line
   (:func:`beam_chunking.parsers.sniff.sniff_text`); anything else is ``text/plain``.

A job may force the type of the files matching a pattern (``content_types``); see
:func:`detect_content_type`.

Example:
    >>> detect_content_type("notes", b"From: a@example.com\\nSubject: hi\\n\\nHello")
    'message/rfc822'
    >>> detect_content_type("notes.txt", b"Note: buy milk")
    'text/plain'
"""
from __future__ import annotations

import fnmatch
import posixpath
import re
from typing import Iterable, Mapping, Optional, Sequence, Tuple, Union

from beam_chunking.errors import ParseError
from beam_chunking.ids import normalize_uri
from beam_chunking.parsers.code import CONTENT_TYPES, DATA_FORMATS, FILE_NAMES, LANGUAGES
from beam_chunking.parsers.sniff import EMAIL, HTML, MBOX, OUTLOOK, PLAIN, SNIFF_BYTES, SUBRIP, WEBVTT, sniff_text

OCTET_STREAM = "application/octet-stream"
EPUB = "application/epub+zip"
ODT = "application/vnd.oasis.opendocument.text"
ODS = "application/vnd.oasis.opendocument.spreadsheet"
ODP = "application/vnd.oasis.opendocument.presentation"
RTF = "application/rtf"

EXTENSIONS = {
    ".txt": PLAIN,
    ".text": PLAIN,
    ".log": PLAIN,
    ".rst": PLAIN,
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".mdown": "text/markdown",
    ".mkd": "text/markdown",
    ".pdf": "application/pdf",
    ".html": HTML,
    ".htm": HTML,
    ".xhtml": HTML,
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ".csv": "text/csv",
    ".tsv": "text/tab-separated-values",
    ".eml": EMAIL,
    ".mbox": MBOX,
    ".msg": OUTLOOK,
    ".vtt": WEBVTT,
    ".srt": SUBRIP,
    ".epub": EPUB,
    ".odt": ODT,
    ".ods": ODS,
    ".odp": ODP,
    ".rtf": RTF,
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".tif": "image/tiff",
    ".tiff": "image/tiff",
    ".zip": "application/zip",
    ".gz": "application/gzip",
}
EXTENSIONS.update({ext: CONTENT_TYPES[lang] for ext, lang in LANGUAGES.items()})

#: Content types whose parsers decode the bytes as text: a binary file never gets one.
TEXT_TYPES = frozenset({ctype for ctype in EXTENSIONS.values() if ctype.startswith("text/")}
                       | {EMAIL, MBOX, SUBRIP, *DATA_FORMATS.values()})

# (prefix, content type) for binary formats that must never be read as text.
MAGIC = (
    (b"%PDF-", "application/pdf"),
    (b"PK\x03\x04", "application/zip"),
    (b"PK\x05\x06", "application/zip"),
    (b"\x1f\x8b", "application/gzip"),
    (b"\x7fELF", "application/x-executable"),
    (b"MZ", "application/x-msdownload"),
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF8", "image/gif"),
    (b"II*\x00", "image/tiff"),  # little-endian TIFF
    (b"MM\x00*", "image/tiff"),  # big-endian TIFF
    (b"\xca\xfe\xba\xbe", "application/x-mach-binary"),
    (b"\xcf\xfa\xed\xfe", "application/x-mach-binary"),
    (b"7z\xbc\xaf\x27\x1c", "application/x-7z-compressed"),
    (b"Rar!", "application/vnd.rar"),
    # OLE2 compound files: Outlook .msg, but also legacy .doc, .xls and .ppt, which have no parser.
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "application/x-ole-storage"),
)

_ZIP_CONTAINERS = {".docx", ".pptx", ".xlsx", ".epub", ".odt", ".ods", ".odp", ".zip"}
#: Types an EPUB or OpenDocument zip names in its ``mimetype`` member, which wins over the file name.
ZIP_MIMETYPES = frozenset({EPUB, ODT, ODS, ODP})
# UTF-8, UTF-16 and UTF-32 byte-order marks (UTF-32 LE's starts like UTF-16 LE's).
_TEXT_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")
#: Most control bytes (see :func:`looks_binary`) a text file's first :data:`SNIFF_BYTES` may
#: hold, as a share of them: 1%, some 80 bytes in 8 KiB.
MAX_CONTROL_SHARE = 0.01
# Control bytes that text does not hold: those below 0x20 but file(1)'s text characters (BEL,
# BS, TAB, LF, VT, FF, CR, and ESC for terminal colours), and DEL.
_CONTROLS = bytes(sorted(set(range(0x20)) - set(b"\a\b\t\n\v\f\r\x1b"))) + b"\x7f"
# GNU Info: \x1f and a newline open each node and the tag table, whose lines mark offsets with DEL.
_INFO_NODE = re.compile(rb"\x1f\r?\n(?:File:|Tag Table:|Indirect:)")
_INFO_CONTROLS = _CONTROLS.replace(b"\x1f", b"").replace(b"\x7f", b"")
# ISO-2022-KR (and -JP) text designates its character sets with an escape sequence; KR then
# shifts in and out of Korean with SO and SI on every word.
_ISO2022 = re.compile(rb"\x1b(?:\$\)C|\$[@B]|\([BJ])")
_ISO2022_CONTROLS = _CONTROLS.replace(b"\x0e", b"").replace(b"\x0f", b"")
#: Extensions that say no more than "text": such files are sniffed like names without one.
_SNIFFED = {".txt", ".text"}

#: ``(pattern, content type)`` pairs; the first pattern that matches a file's path gives its type.
ContentTypes = Tuple[Tuple[str, str], ...]


def extension(uri: str) -> str:
    """Return the lower-cased extension of ``uri``'s last path component (``""`` if none)."""
    return posixpath.splitext(_name(uri))[1].lower()


def _name(uri: str) -> str:
    return uri.rstrip("/").rsplit("/", 1)[-1]


def looks_binary(data: bytes) -> bool:
    """Whether ``data`` is binary rather than text, judged on its first :data:`SNIFF_BYTES`.

    The rule of ``file(1)``, with room for a few stray bytes: a head that starts with a
    UTF-8, UTF-16 or UTF-32 byte-order mark is text. Otherwise it is binary when more than
    :data:`MAX_CONTROL_SHARE` (1%) of its bytes, and more than one, are control bytes: NUL,
    the other bytes below 0x20 except BEL, BS, TAB, LF, VT, FF, CR and ESC (``file``'s text
    characters), and DEL; in a GNU Info file (a ``\\x1f`` line opening a node) its
    separators ``\\x1f`` and ``DEL`` are not counted, nor SO and SI after an ISO-2022
    escape sequence (ISO-2022-KR e-mail). A head with NUL bytes under that share
    is text only if the rest decodes as UTF-8 (a character cut by the window's end aside):
    stray NULs in a log or an Info index are text, UTF-16 without a byte-order mark (a NUL
    in every other byte) and binary formats are not. Bytes 0x80 and above count as text
    (``file``'s extended ASCII: legacy encodings). Random or compressed bytes hold about 10%
    control bytes, executables and images more.
    """
    head = data[:SNIFF_BYTES]
    if head.startswith(_TEXT_BOMS):
        return False
    controls = (_INFO_CONTROLS if _INFO_NODE.search(head) else
                _ISO2022_CONTROLS if _ISO2022.search(head) else _CONTROLS)
    # One stray byte is allowed whatever the size: a short DOS file's end-of-file mark (^Z).
    if len(head) - len(head.translate(None, controls)) > max(1.0, MAX_CONTROL_SHARE * len(head)):
        return True
    return b"\x00" in head and not _utf8_head(head)


def _utf8_head(head: bytes) -> bool:
    """Whether ``head`` is UTF-8 but maybe for a character cut at its end."""
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.reason == "unexpected end of data" and exc.start >= len(head) - 3
    return True


def _binary_kind(ext: str, data: bytes) -> Optional[str]:
    """The binary format ``data`` starts with (by magic bytes), or ``None``."""
    for magic, kind in MAGIC:
        if data.startswith(magic):
            if kind == "application/zip" and (declared := _zip_mimetype(data)) is not None:
                return declared
            if kind == "application/zip" and ext in _ZIP_CONTAINERS:
                return EXTENSIONS[ext]
            if kind == "application/x-ole-storage" and ext == ".msg":
                return OUTLOOK
            if kind == "application/x-msdownload" and not looks_binary(data):
                return None  # "MZ" is also how plain text may start
            return kind
    return None


def _zip_mimetype(data: bytes) -> Optional[str]:
    """The type an EPUB or OpenDocument zip declares in its first member, ``mimetype``
    (stored uncompressed, as both specs require, so it is readable at byte 38), if it is
    one of :data:`ZIP_MIMETYPES`."""
    # Local file header: method at 8, compressed size at 18, name length at 26, extra at 28.
    if data[30:38] != b"mimetype" or int.from_bytes(data[26:28], "little") != 8 or data[8:10] != b"\0\0":
        return None
    start = 38 + int.from_bytes(data[28:30], "little")
    declared = data[start:start + min(int.from_bytes(data[18:22], "little"), 100)].strip()
    return declared.decode("latin-1") if declared.decode("latin-1") in ZIP_MIMETYPES else None


def _detect(uri: str, data: bytes) -> str:
    ext = extension(uri)
    kind = _binary_kind(ext, data)
    if kind is not None:
        return kind
    if data.startswith(b"{\\rtf"):  # whatever the name: RTF is 7-bit text that no sniffer claims
        return RTF
    by_file_name = FILE_NAMES.get(_name(uri).lower())
    by_name = CONTENT_TYPES[by_file_name] if by_file_name else EXTENSIONS.get(ext)
    if looks_binary(data):
        return OCTET_STREAM if by_name is None or by_name in TEXT_TYPES else by_name
    if by_name is not None and (by_file_name or ext not in _SNIFFED):
        return by_name
    return sniff_text(data)


def path_pattern(pattern: str) -> str:
    """A file pattern as matched against absolute paths and URIs: one that starts with a
    wildcard (``*.log``, ``*/drafts/*``), an absolute path or a URI stays as it is; a
    relative path (``docs/drafts/*``) is made absolute like an input pattern."""
    if pattern[:1] in "*?[/" or normalize_uri(pattern) == pattern:
        return pattern
    return normalize_uri(pattern)


def content_type_pairs(content_types: Union[Mapping[str, str], Iterable[Tuple[str, str]], None]) -> ContentTypes:
    """``content_types`` as ``(pattern, content type)`` pairs, patterns made absolute with
    :func:`path_pattern`, in the order given."""
    items = content_types.items() if isinstance(content_types, Mapping) else (content_types or ())
    return tuple((path_pattern(pattern), ctype) for pattern, ctype in items)


def forced_content_type(paths: Sequence[str], content_types: ContentTypes) -> Optional[Tuple[str, str]]:
    """The first ``(pattern, content type)`` whose pattern matches one of ``paths``
    (``fnmatch``, so ``*`` crosses ``/``, as for ``exclude``), or ``None``."""
    for pattern, ctype in content_types:
        if any(fnmatch.fnmatchcase(path, pattern) for path in paths):
            return pattern, ctype
    return None


def detect_content_type(uri: str, data: bytes, content_types: ContentTypes = (), *,
                        source: Optional[str] = None) -> str:
    """Return the MIME type of a document from its name and bytes (see the module docstring).

    Args:
        uri: Path or URI; its extension or file name is used. For a gunzipped file, the name
            inside (``notes.md``).
        data: The document's bytes; only the first :data:`SNIFF_BYTES` are looked at.
        content_types: ``(pattern, content type)`` pairs that force a type (see
            :func:`content_type_pairs`); the first pattern matching ``uri`` or ``source`` wins.
            Default none.
        source: The file's own URI when ``uri`` is the name inside a ``.gz``, so that
            ``*.log.gz`` and ``*.log`` both match ``app.log.gz``. Default ``uri``.

    Raises:
        ParseError: a pattern forces a text type on a binary file (magic bytes or NUL bytes):
            a binary file is never read as text.
    """
    detected = _detect(uri, data)
    forced = forced_content_type([source or uri, uri], content_types) if content_types else None
    if forced is None or forced[1] == detected:
        return detected
    pattern, ctype = forced
    if ctype in TEXT_TYPES and (looks_binary(data) or _binary_kind(extension(uri), data) is not None):
        raise ParseError(f"content_types forces {ctype} on {pattern}, but the file is binary ({detected}) "
                         "and a binary file is never read as text; narrow the pattern", uri=source or uri)
    return ctype
