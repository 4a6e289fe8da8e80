"""Typeset plain paragraphs and headings into PDFs with headless Chromium, in three layouts.

    from typeset import Block, build_html, typeset_cached   # with bench/ on sys.path
    pdf = typeset_cached(build_html([Block("heading", "Title", 1), Block("paragraph", "Text.")], "Title"),
                         "justified", Path("bench/out/pdf"))

The text of each PDF is known exactly: :func:`source_text` joins the blocks with blank lines,
and :func:`build_html` renders the same blocks (headings ``<h1>``-``<h4>``, paragraphs ``<p>``,
preformatted blocks ``<pre>``), so a parser's output can be aligned back to it. Layouts:

- ``justified``: one column, justified, with line-end hyphenation, a running header (the
  title) and footer (``Page N``) on every page. Chromium's ``hyphens: auto`` needs its
  hyphenation dictionaries, which it downloads as a component (this Debian package has none and
  the flags forbid the download), so soft hyphens (U+00AD) are put in long words here and
  ``hyphens: auto`` is kept for a Chromium that has them. The header and footer are
  ``@page`` margin boxes (Chromium 131 on); a ``position: fixed`` element also repeats on every
  printed page but cannot count pages.
- ``two-column``: ``column-count: 2``, justified, no hyphenation (soft hyphens removed), no
  header.
- ``plain``: one ragged-right column, nothing else.
"""
from __future__ import annotations

import hashlib
import html as htmllib
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import List, Sequence, Tuple

LAYOUTS = ("justified", "two-column", "plain")

_BASE_CSS = """
body { font-family: "DejaVu Serif", serif; font-size: 11pt; line-height: 1.35; margin: 0; }
h1, h2, h3, h4 { font-family: "DejaVu Sans", sans-serif; line-height: 1.2; margin: 1em 0 0.5em; }
h1 { font-size: 18pt; } h2 { font-size: 15pt; } h3 { font-size: 13pt; } h4 { font-size: 11pt; }
p { margin: 0 0 0.6em; }
pre { font-size: 9pt; white-space: pre-wrap; margin: 0 0 0.6em; }
@page { size: A4; margin: 22mm 20mm; }
"""

_LAYOUT_CSS = {
    "justified": """
p { text-align: justify; hyphens: auto; -webkit-hyphens: auto; }
@page {
  @top-center { content: "%(title)s"; font-family: "DejaVu Sans", sans-serif; font-size: 9pt; }
  @bottom-center { content: "Page " counter(page); font-family: "DejaVu Sans", sans-serif; font-size: 9pt; }
}
""",
    "two-column": """
body { column-count: 2; column-gap: 8mm; }
p { text-align: justify; }
""",
    "plain": "",
}

#: Chromium flags: no network, no profile state, no GPU; the PDF without Chromium's own header.
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--no-pdf-header-footer")

#: Bumped when the HTML or CSS changes, so that cached PDFs are typeset again.
VERSION = "2"


@dataclass(frozen=True)
class Block:
    """One block of a source text.

    Args:
        kind: ``"heading"``, ``"paragraph"`` or ``"pre"`` (line breaks kept).
        text: The block's text as it reads on the page (no markup).
        level: Heading depth, 1-4 (0 for other blocks).
    """

    kind: str
    text: str
    level: int = 0


def source_text(blocks: Sequence[Block]) -> Tuple[str, List[Tuple[int, int]]]:
    """The blocks joined with blank lines, and each block's ``[start, end)`` in that text."""
    parts, spans, at = [], [], 0
    for b in blocks:
        if parts:
            parts.append("\n\n")
            at += 2
        spans.append((at, at + len(b.text)))
        parts.append(b.text)
        at += len(b.text)
    return "".join(parts), spans


_VOWELS = set("aeiouyAEIOUY")


def soft_hyphens(word: str) -> str:
    """``word`` with U+00AD at vowel-consonant joins, three letters from either end at least.

    A crude syllable rule: it only has to give Chromium places to break long words at line
    ends, as a hyphenating typesetter would; words under 7 letters are left alone.
    """
    if len(word) < 7 or not word.isalpha():
        return word
    out = [word[:3]]
    for k in range(3, len(word) - 3):
        if word[k - 1] in _VOWELS and word[k] not in _VOWELS:
            out.append("\u00ad")
        out.append(word[k])
    out.append(word[len(word) - 3:])
    return "".join(out)


def _inline(text: str, hyphenate: bool) -> str:
    escaped = htmllib.escape(text, quote=False)
    return re.sub(r"[^\W\d_]{7,}", lambda m: soft_hyphens(m.group()), escaped) if hyphenate else escaped


def build_html(blocks: Sequence[Block], title: str, hyphenate: bool = True) -> str:
    """A standalone HTML page (``lang="en"``) of ``blocks``, without layout CSS.

    Args:
        blocks: The text, in order.
        title: The page title (also the running header of the ``justified`` layout).
        hyphenate: Put soft hyphens in long words of paragraphs (default True); :func:`typeset`
            removes them for every layout but ``justified``.
    """
    body = []
    for b in blocks:
        if b.kind == "heading":
            body.append(f"<h{b.level}>{_inline(b.text, False)}</h{b.level}>")
        elif b.kind == "pre":
            body.append(f"<pre>{_inline(b.text, False)}</pre>")
        else:
            body.append(f"<p>{_inline(b.text, hyphenate)}</p>")
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{htmllib.escape(title)}</title>'
            "<style>/*LAYOUT*/</style></head>\n<body>\n" + "\n".join(body) + "\n</body></html>\n")


def _with_layout(html: str, layout: str) -> str:
    if layout not in _LAYOUT_CSS:
        raise ValueError(f"unknown layout {layout!r}; expected one of {', '.join(LAYOUTS)}")
    m = re.search(r"<title>(.*?)</title>", html, re.S)
    title = htmllib.unescape(m.group(1)) if m else ""
    css = _BASE_CSS + _LAYOUT_CSS[layout].replace("%(title)s", title.replace("\\", "").replace('"', "'"))
    if layout != "justified":  # only the justified layout hyphenates
        html = html.replace("\u00ad", "")
    return html.replace("/*LAYOUT*/", css, 1)


def chromium() -> str:
    """The Chromium executable (``chromium`` or ``chromium-browser`` on PATH)."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    raise RuntimeError("headless Chromium is needed to typeset the PDFs: apt-get install chromium")


def typeset(html: str, out_pdf: Path, layout: str, timeout: float = 300.0) -> Path:
    """Print ``html`` with ``layout``'s CSS to ``out_pdf`` with headless Chromium.

    Args:
        html: A page from :func:`build_html` (its ``/*LAYOUT*/`` slot takes the layout's CSS).
        out_pdf: Where the PDF goes (its folder is created).
        layout: One of :data:`LAYOUTS`.
        timeout: Seconds before Chromium is given up on (default 300).
    """
    out_pdf = Path(out_pdf)
    out_pdf.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="typeset-") as tmp:
        page = Path(tmp) / "page.html"
        page.write_text(_with_layout(html, layout), encoding="utf-8")
        partial = out_pdf.with_suffix(".part.pdf")
        cmd = [chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={tmp}/profile", f"--print-to-pdf={partial}",
               page.as_uri()]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0 or not partial.exists() or partial.stat().st_size == 0:
            raise RuntimeError(f"Chromium failed on {out_pdf.name} (exit {done.returncode}): "
                               f"{done.stderr.strip()[-300:]}")
        partial.replace(out_pdf)
    return out_pdf


def typeset_cached(html: str, layout: str, folder: Path, name: str = "doc") -> Path:
    """:func:`typeset` into ``folder``, reusing a PDF typeset before from the same HTML and layout."""
    key = hashlib.sha1(f"{VERSION}\0{layout}\0{html}".encode("utf-8")).hexdigest()[:12]
    out = Path(folder) / f"{name}.{layout}.{key}.pdf"
    return out if out.exists() else typeset(html, out, layout)
