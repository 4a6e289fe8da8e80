"""Source code and structured data files: the whole file as one ``code`` section with its ``language``.

The language comes from the extension (:data:`LANGUAGES`) or a well-known file name
(:data:`FILE_NAMES`: ``Dockerfile``, ``Makefile`` ...), or from the bytes when the name says
nothing (a ``#!`` line, a JSON, YAML or XML document; see
:mod:`beam_chunking.parsers.detect`). The content type is ``text/x-<language>`` for
programming languages and the registered type for data formats (``application/json``,
``application/yaml``, ``application/toml``, ``application/xml``), so a router can send
either to the ``code`` strategy.
"""
from __future__ import annotations

from typing import Dict, FrozenSet

from beam_chunking.parsers.decode import decode
from beam_chunking.parsers.drops import KEEP_NOTHING
from beam_chunking.parsers.limits import DEFAULT_LIMITS, ParseLimits
from beam_chunking.types import Document, ParsedDocument, Section

#: File extension (lower case) -> language name.
LANGUAGES: Dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".pyw": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".tsx": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".java": "java",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".scala": "scala",
    ".sc": "scala",
    ".groovy": "groovy",
    ".gradle": "groovy",
    ".go": "go",
    ".rs": "rust",
    ".rb": "ruby",
    ".cs": "csharp",
    ".cpp": "cpp",
    ".cc": "cpp",
    ".cxx": "cpp",
    ".h": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
    ".c": "c",
    ".php": "php",
    ".swift": "swift",
    ".dart": "dart",
    ".lua": "lua",
    ".pl": "perl",
    ".pm": "perl",
    ".r": "r",
    ".jl": "julia",
    ".hs": "haskell",
    ".ex": "elixir",
    ".exs": "elixir",
    ".clj": "clojure",
    ".cljs": "clojure",
    ".sh": "shell",
    ".bash": "shell",
    ".zsh": "shell",
    ".ksh": "shell",
    ".ps1": "powershell",
    ".sql": "sql",
    ".proto": "protobuf",
    ".tf": "hcl",
    ".hcl": "hcl",
    ".css": "css",
    ".scss": "scss",
    ".mk": "make",
    ".dockerfile": "dockerfile",
    ".cmake": "cmake",
    ".json": "json",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".toml": "toml",
    ".xml": "xml",
    ".xsd": "xml",
    ".xsl": "xml",
    ".xslt": "xml",
}

#: Whole file name (lower case) -> language, for files known by name rather than extension.
FILE_NAMES: Dict[str, str] = {
    "dockerfile": "dockerfile",
    "containerfile": "dockerfile",
    "makefile": "make",
    "gnumakefile": "make",
    "cmakelists.txt": "cmake",
    "jenkinsfile": "groovy",
    "gemfile": "ruby",
    "rakefile": "ruby",
}

#: Data formats whose registered content type is used instead of ``text/x-<language>``.
DATA_FORMATS: Dict[str, str] = {
    "json": "application/json",
    "yaml": "application/yaml",  # RFC 9512
    "toml": "application/toml",
    "xml": "application/xml",
}

#: Content type of each language's files.
CONTENT_TYPES: Dict[str, str] = {lang: DATA_FORMATS.get(lang, f"text/x-{lang}")
                                 for lang in sorted(set(LANGUAGES.values()) | set(FILE_NAMES.values()))}
_BY_TYPE = {ctype: lang for lang, ctype in CONTENT_TYPES.items()}


def parse_code(doc: Document, *, errors: str = "strict", limits: ParseLimits = DEFAULT_LIMITS,
               keep: FrozenSet[str] = KEEP_NOTHING) -> ParsedDocument:
    """Decode a source file and return it as one ``code`` section with ``language`` metadata.

    Args:
        doc: The raw document; its content type (``text/x-python``, ``application/json`` ...)
            names the language.
        errors: Decoding policy for bytes in no known encoding, ``"strict"`` (default) or
            ``"replace"``.
        limits: Unused; accepted for a uniform signature.
        keep: Unused (nothing is dropped from this format); accepted for a uniform signature.
    """
    decoded = decode(doc.data, uri=doc.uri, document_id=doc.id, errors=errors)
    text = decoded.text
    language = _BY_TYPE.get(doc.content_type, "unknown")
    meta = {**doc.metadata, **decoded.metadata()}
    sections = (Section(0, len(text), kind="code", metadata={"language": language}),) if text.strip() else ()
    return ParsedDocument(doc.id, doc.uri, doc.content_type, text, sections, meta)
