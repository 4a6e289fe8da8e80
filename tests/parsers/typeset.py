"""PDFs typeset by headless Chromium from HTML, for tests of what a reader sees.

Tests that use :func:`chromium_pdf` skip, saying why, where Debian's chromium is missing
(``.ci/run`` installs it).
"""
from __future__ import annotations

import html
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Sequence, Tuple

import pytest

_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
          "--disable-background-networking", "--disable-component-update", "--disable-sync",
          "--no-pdf-header-footer"]

#: CSS of the layouts the tests typeset: justified with a first-line indent, two columns,
#: and plain paragraphs with a gap between them.
LAYOUTS = {
    "justified": "body{font:11pt serif;text-align:justify;hyphens:auto} p{margin:0;text-indent:1.5em}",
    "columns": "body{font:10pt sans-serif;column-count:2;column-gap:1cm} p{margin:0 0 0.8em 0}",
    "plain": "body{font:11pt sans-serif} p{margin:0 0 1em 0}",
}


def chromium_pdf(page: str) -> bytes:
    """The PDF Chromium prints of the HTML page ``page`` (A4 or Letter, its default)."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("chromium is not installed (apt-get install chromium); it typesets the PDFs of these tests")
    with tempfile.TemporaryDirectory() as tmp:
        source, out = Path(tmp) / "page.html", Path(tmp) / "page.pdf"
        source.write_text(page, encoding="utf-8")
        subprocess.run([chromium, *_FLAGS, f"--user-data-dir={tmp}/profile", f"--print-to-pdf={out}",
                        source.as_uri()], capture_output=True, timeout=120, check=False)
        if not out.exists():
            pytest.skip("chromium did not print a PDF here")
        return out.read_bytes()


def article(blocks: Sequence[Tuple[str, str]], layout: str) -> str:
    """An HTML page of ``(tag, text)`` blocks (``h1``, ``h2``, ``p`` ...) in one of :data:`LAYOUTS`."""
    body = "".join(f"<{tag}>{html.escape(text)}</{tag}>" for tag, text in blocks)
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8><style>{LAYOUTS[layout]}</style></head>"
            f"<body>{body}</body></html>")
