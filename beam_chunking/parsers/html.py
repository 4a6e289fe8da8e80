"""HTML: the main text in reading order, with heading paths, element paths and whole tables.

Parsed by selectolax's Lexbor engine (a full HTML5 parser; no regular expressions run over
markup). What becomes text:

- Scripts, styles, forms controls, ``nav``, ``aside``, hidden elements, page-level
  ``header``/``footer`` (those outside ``article``/``main``/``section``) and elements whose
  ARIA role or class marks them as navigation chrome are left out. When the page has a
  ``<main>`` element (or ``role="main"``), only it is read.
- ``h1``-``h6`` start a section and build ``heading_path``; a section runs to the next
  heading and its ``element_path`` is the common ancestry of its blocks below ``<body>``,
  e.g. ``article > section > p``.
- A data table becomes one section of kind ``table``, rendered as a Markdown pipe table
  (caption first, then a header row and separator line) so it is kept as one unit and can be
  split between rows later. Tables used for layout (holding headings or other tables) are
  read as ordinary blocks.
- ``pre`` blocks keep their whitespace and become sections of kind ``code``.
- List items get ``- `` or ``1. `` markers; ``<br>`` becomes a newline; other whitespace is
  collapsed as a browser would.

The document's ``<title>`` is recorded as ``title`` metadata. Inline DTDs and entity
declarations are never expanded (HTML parsers do not process them).
"""
from __future__ import annotations

import codecs
import re
from typing import FrozenSet, List, Tuple

from beam_chunking.errors import DecodeError, ParseError
from beam_chunking.parsers._build import HeadingSections, clean, collapse, markdown_table
from beam_chunking.parsers._optional import require
from beam_chunking.parsers.decode import decode_text
from beam_chunking.parsers.drops import KEEP_NOTHING
from beam_chunking.parsers.limits import DEFAULT_LIMITS, ParseLimits
from beam_chunking.types import Document, ParsedDocument

#: Elements whose whole subtree is never text.
DROPPED = frozenset(
    "script style noscript template nav aside svg iframe object embed canvas button select "
    "option input textarea head title meta link audio video map".split()
)
#: ARIA roles that mark navigation chrome.
CHROME_ROLES = frozenset("navigation banner contentinfo search menu menubar toolbar".split())
#: Class names that mark navigation chrome (DocBook, common CMS themes).
CHROME_CLASSES = frozenset("navheader navfooter breadcrumb breadcrumbs skip-link skiplink".split())
#: Elements that do not start a block (their text flows into the surrounding paragraph).
INLINE = frozenset(
    "a abbr b bdi bdo cite code data dfn em font i img kbd label mark q rp rt ruby s samp small "
    "span strong sub sup time tt u var wbr del ins big".split()
)
HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_CONTENT_ANCESTORS = frozenset({"article", "main", "section"})
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_.:-]+)""", re.I)


def _decode(doc: Document, errors: str) -> Tuple[str, int]:
    """UTF-8/UTF-16 with BOM first; otherwise the charset the page declares in a ``<meta>``."""
    try:
        return decode_text(doc.data, uri=doc.uri, document_id=doc.id, errors="strict")
    except DecodeError:
        declared = _META_CHARSET.search(doc.data[:4096])
        if declared is None:
            return decode_text(doc.data, uri=doc.uri, document_id=doc.id, errors=errors)
        try:
            codec = codecs.lookup(declared.group(1).decode("ascii")).name
        except LookupError:
            raise ParseError(
                f"HTML declares unknown charset {declared.group(1).decode('ascii', 'replace')!r} "
                "and is not valid UTF-8", document_id=doc.id, uri=doc.uri) from None
        try:
            return doc.data.decode(codec), 0
        except UnicodeDecodeError as exc:
            if errors == "strict":
                raise DecodeError(
                    f"invalid {codec} at byte offset {exc.start}; run with decode_errors='replace' "
                    "to keep it with U+FFFD replacements", document_id=doc.id, uri=doc.uri) from None
            text = doc.data.decode(codec, errors="replace")
            return text, text.count("\ufffd")


#: One CSS selector for everything left out; Lexbor matches it in C before the walk.
CHROME_SELECTOR = ", ".join([
    *sorted(DROPPED), "[hidden]", "[aria-hidden=true]",
    *(f"[role={role}]" for role in sorted(CHROME_ROLES)),
    *(f".{name}" for name in sorted(CHROME_CLASSES)),
    *(f"[style*='{rule}']" for rule in ("display:none", "display: none", "visibility:hidden", "visibility: hidden")),
])


def _remove_chrome(tree) -> None:
    for node in tree.css(CHROME_SELECTOR):
        node.decompose()
    for node in tree.css("header, footer"):
        parent = node.parent
        while parent is not None and parent.tag not in _CONTENT_ANCESTORS:
            parent = parent.parent
        if parent is None:  # a page-level banner or footer, not an article's own
            node.decompose()


def _is_layout_table(node) -> bool:
    # css() matches the node itself too, so a data table finds exactly one table.
    return len(node.css("table")) > 1 or node.css_first("h1, h2, h3, h4, h5, h6") is not None


def _render_table(node) -> str:
    """A data table as a Markdown pipe table (caption line first when there is one)."""
    rows: List[List[str]] = []
    header = False
    for tr in node.css("tr"):
        cells = [c for c in tr.iter() if c.tag in ("th", "td")]
        if not cells:
            continue
        if not rows:
            header = all(c.tag == "th" for c in cells) or (tr.parent is not None and tr.parent.tag == "thead")
        rows.append([c.text(deep=True, separator=" ") for c in cells])  # markdown_table normalises
    caption = node.css_first("caption")
    title = collapse(caption.text(deep=True, separator=" ")) if caption is not None else ""
    return markdown_table(rows, header=header, caption=title)


def parse_html(doc: Document, *, errors: str = "strict", limits: ParseLimits = DEFAULT_LIMITS,
               keep: FrozenSet[str] = KEEP_NOTHING) -> ParsedDocument:
    """Parse an HTML document into heading sections (see the module docstring).

    Args:
        doc: The raw document.
        errors: Decoding policy, ``"strict"`` or ``"replace"``.
        limits: Unused by HTML beyond the read size cap; accepted for a uniform signature.
        keep: Names of :data:`~beam_chunking.parsers.drops.DROPS` to keep instead of dropping.
            Default none.
    """
    lexbor = require("selectolax.lexbor", "selectolax")
    html, replaced = _decode(doc, errors)
    tree = lexbor.LexborHTMLParser(html)
    title_node = tree.css_first("title")
    title = collapse(title_node.text(deep=True)) if title_node is not None else ""
    _remove_chrome(tree)
    root = tree.css_first("main, [role=main]") or tree.body
    out = HeadingSections()
    meta = {"title": title} if title else {}
    if replaced:
        meta["decode_replacements"] = replaced
    if root is None:
        return out.builder.build(doc, meta)

    inline: List[str] = []
    prefix = [""]
    tags: List[str] = [] if root.tag == "body" else [root.tag]  # element path below <body>
    counters: List[List] = []  # [list tag, next number] per open list

    def flush() -> None:
        if not inline:
            return
        text = "".join(inline)
        inline.clear()
        if text.isspace():
            return
        text = collapse(text)
        if text:
            out.paragraph(prefix[0] + text, list(tags))
            prefix[0] = ""

    # Iterative walk (deeply nested pages must not hit Python's recursion limit). A popped
    # ``None`` entry closes the block element below it on the stack.
    stack: list = []
    _push_children(stack, root)
    while stack:
        node, closing = stack.pop()
        if closing:
            flush()
            tag = tags.pop()
            if tag in ("ul", "ol") and counters:
                counters.pop()
            continue
        tag = node.tag
        if tag == "-text":
            inline.append(node.text(deep=False))
            continue
        if not node.is_element_node:
            continue
        if tag == "br":
            inline.append("\n")
            continue
        if tag in HEADINGS:
            flush()
            text = " ".join(collapse(node.text(deep=True, separator=" ")).split())
            if text:
                out.heading(HEADINGS[tag], text, tags + [tag])
            continue
        if tag == "table" and not _is_layout_table(node):
            flush()
            out.unit(_render_table(node), "table", tags + [tag])
            continue
        if tag == "pre":
            flush()
            out.unit(clean(node.text(deep=True)).strip("\n"), "code", tags + [tag])
            continue
        if tag in INLINE:
            _push_children(stack, node)
            continue
        flush()
        if tag in ("ul", "ol"):
            counters.append([tag, 1])
        elif tag == "li" and counters:
            kind = counters[-1]
            prefix[0] = "- " if kind[0] == "ul" else f"{kind[1]}. "
            kind[1] += 1
        tags.append(tag)
        stack.append((node, True))
        _push_children(stack, node)
    flush()
    return out.builder.build(doc, meta)


def _push_children(stack: list, node) -> None:
    """Push ``node``'s children so that the first one is popped first."""
    child = node.last_child
    while child is not None:
        stack.append((child, False))
        child = child.prev
