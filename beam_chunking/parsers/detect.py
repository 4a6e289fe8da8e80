"""Content-type detection from the file name and the first bytes.

Magic bytes win over the extension for binary formats, so a PDF or an executable renamed to
``.txt`` is never read as text. A name without a known extension is text only when its
bytes look like text.
"""
from __future__ import annotations

import posixpath

from beam_chunking.parsers.code import CONTENT_TYPES, LANGUAGES

OCTET_STREAM = "application/octet-stream"

EXTENSIONS = {
    ".txt": "text/plain",
    ".text": "text/plain",
    ".log": "text/plain",
    ".rst": "text/plain",
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".mdown": "text/markdown",
    ".mkd": "text/markdown",
    ".pdf": "application/pdf",
    ".html": "text/html",
    ".htm": "text/html",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ".csv": "text/csv",
    ".tsv": "text/tab-separated-values",
    ".eml": "message/rfc822",
    ".zip": "application/zip",
    ".gz": "application/gzip",
}
EXTENSIONS.update({ext: CONTENT_TYPES[lang] for ext, lang in LANGUAGES.items()})

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
    (b"\xca\xfe\xba\xbe", "application/x-mach-binary"),
    (b"\xcf\xfa\xed\xfe", "application/x-mach-binary"),
    (b"7z\xbc\xaf\x27\x1c", "application/x-7z-compressed"),
    (b"Rar!", "application/vnd.rar"),
)

_ZIP_CONTAINERS = {".docx", ".pptx", ".xlsx", ".zip"}
_TEXT_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")


def extension(uri: str) -> str:
    """Return the lower-cased extension of ``uri``'s last path component (``""`` if none)."""
    return posixpath.splitext(uri.rstrip("/").rsplit("/", 1)[-1])[1].lower()


def looks_binary(data: bytes) -> bool:
    """True when the first 8 KiB hold a NUL byte and no UTF-16 byte-order mark."""
    head = data[:8192]
    if head.startswith(_TEXT_BOMS):
        return False
    return b"\x00" in head


def detect_content_type(uri: str, data: bytes) -> str:
    """Return the MIME type of a document from its name and bytes.

    Args:
        uri: Path or URI; only its extension is used.
        data: The document's bytes; the first few are checked for magic numbers.
    """
    ext = extension(uri)
    for magic, kind in MAGIC:
        if data.startswith(magic):
            if kind == "application/zip" and ext in _ZIP_CONTAINERS:
                return EXTENSIONS[ext]
            if kind == "application/x-msdownload" and not looks_binary(data):
                break  # "MZ" is also how plain text may start
            return kind
    by_ext = EXTENSIONS.get(ext)
    if by_ext is not None and (by_ext.startswith("text/") or by_ext == "message/rfc822"):
        return OCTET_STREAM if looks_binary(data) else by_ext
    if by_ext is not None:
        return by_ext
    return OCTET_STREAM if looks_binary(data) else "text/plain"
