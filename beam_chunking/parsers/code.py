"""Source code: the whole file as one section of kind ``code`` with its ``language``.

The language comes from the extension; the content
type is ``text/x-<language>`` so a router can send code to the code strategy.
"""
from __future__ import annotations

from typing import Dict, FrozenSet

from beam_chunking.parsers.decode import decode_text
from beam_chunking.parsers.drops import KEEP_NOTHING
from beam_chunking.parsers.limits import DEFAULT_LIMITS, ParseLimits
from beam_chunking.types import Document, ParsedDocument, Section

#: File extension -> language name.
LANGUAGES: Dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".tsx": "typescript",
    ".java": "java",
    ".go": "go",
    ".rs": "rust",
    ".rb": "ruby",
    ".cs": "csharp",
    ".cpp": "cpp",
    ".cc": "cpp",
    ".cxx": "cpp",
    ".h": "cpp",
    ".hpp": "cpp",
    ".c": "c",
    ".php": "php",
    ".swift": "swift",
}

#: Content type of each language's source files.
CONTENT_TYPES: Dict[str, str] = {lang: f"text/x-{lang}" for lang in sorted(set(LANGUAGES.values()))}
_BY_TYPE = {ctype: lang for lang, ctype in CONTENT_TYPES.items()}


def parse_code(doc: Document, *, errors: str = "strict", limits: ParseLimits = DEFAULT_LIMITS,
               keep: FrozenSet[str] = KEEP_NOTHING) -> ParsedDocument:
    """Decode a source file and return it as one ``code`` section with ``language`` metadata.

    Args:
        doc: The raw document; its content type (``text/x-python`` ...) names the language.
        errors: Decoding policy, ``"strict"`` or ``"replace"``.
        limits: Unused; accepted for a uniform signature.
        keep: Unused (nothing is dropped from this format); accepted for a uniform signature.
    """
    text, replaced = decode_text(doc.data, uri=doc.uri, document_id=doc.id, errors=errors)
    language = _BY_TYPE.get(doc.content_type, "unknown")
    meta = dict(doc.metadata)
    if replaced:
        meta["decode_replacements"] = replaced
    sections = (Section(0, len(text), kind="code", metadata={"language": language}),) if text.strip() else ()
    return ParsedDocument(doc.id, doc.uri, doc.content_type, text, sections, meta)
