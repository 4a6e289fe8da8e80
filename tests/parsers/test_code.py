"""Source files: language from the extension, one code section."""
from __future__ import annotations

import pytest

from beam_chunking.parsers import parse
from beam_chunking.parsers.code import LANGUAGES
from tests.parsers.fixtures import document

SEED_TABLE = {".py": "python", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript",
              ".ts": "typescript", ".tsx": "typescript", ".java": "java", ".go": "go", ".rs": "rust",
              ".rb": "ruby", ".cs": "csharp", ".cpp": "cpp", ".cc": "cpp", ".cxx": "cpp", ".h": "cpp",
              ".hpp": "cpp", ".php": "php", ".swift": "swift"}


def test_seed_extension_table_is_covered():
    assert {ext: LANGUAGES[ext] for ext in SEED_TABLE} == SEED_TABLE


@pytest.mark.parametrize("ext,language", sorted(SEED_TABLE.items()))
def test_language_reaches_the_section(ext, language):
    doc = parse(document(f"src/main{ext}", "def f():\n    return 'ü'\n".encode()))
    assert doc.content_type == f"text/x-{language}"
    [section] = doc.sections
    assert section.kind == "code" and section.metadata == {"language": language}
    assert doc.text[section.start:section.end] == "def f():\n    return 'ü'\n"


def test_blank_source_has_no_section():
    assert parse(document("empty.py", b"\n\n  \n")).sections == ()
