"""A missing parser library fails the document with an error naming the extra to install."""
from __future__ import annotations

import sys

import pytest

from beam_chunking.errors import MissingExtra
from beam_chunking.parsers import parse_in_process
from beam_chunking.parsers._optional import require
from tests.parsers.fixtures import document


def test_require_names_the_extra():
    with pytest.raises(MissingExtra, match=r'pip install "beam-chunking\[parsers\]"'):
        require("no_such_module_anywhere", "no-such-package")


@pytest.mark.parametrize("module,name,data", [
    ("pypdfium2", "a.pdf", b"%PDF-1.4\n%%EOF"),
    ("selectolax.lexbor", "a.html", b"<p>x</p>"),
    ("docx", "a.docx", b"PK\x03\x04"),
    ("openpyxl", "a.xlsx", b"PK\x03\x04"),
    ("pptx", "a.pptx", b"PK\x03\x04"),
])
def test_parsers_without_their_library(monkeypatch, module, name, data):
    monkeypatch.setitem(sys.modules, module, None)  # makes "import module" raise ImportError
    with pytest.raises(MissingExtra, match=r"beam-chunking\[parsers\]"):
        parse_in_process(document(name, data))  # the hidden module is hidden from this process only
