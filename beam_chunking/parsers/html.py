"""HTML: the main text in reading order, with heading paths, element paths and whole tables.

Parsed by selectolax's Lexbor engine (a full HTML5 parser; no regular expressions run over
markup). What becomes text:

- Scripts, styles, forms controls, ``aside``, hidden elements, page-level
  ``header``/``footer`` (those outside ``article``/``main``/``section``) and elements whose
  ARIA role or class marks them as banners or DocBook navigation bars are left out, and so are
  navigation tables (DocBook's ``summary="Navigation header"``, or a table of at most
  :data:`NAV_BAR_MAX_ROWS` rows whose text is all links to other pages, one of them a Prev,
  Next, Up or Home link), short blocks of Prev/Up/Next links (two links with an access key,
  ``rel="prev"``, ``"next"`` or ``"up"``, or a ``Next:`` label, and no other words than
  :data:`NAV_WORDS`, as DocBook, Texinfo and gtk-doc write them), and permalinks (a link
  into the page whose text is a mark such as ``#`` or ``¶``). When the
  page has a ``<main>`` element (or ``role="main"``), only it is read.
- Contents listings inside what is read are cut out and recorded in
  ``ParsedDocument.dropped`` as ``"table of contents"`` (``keep={"contents"}`` keeps them):
  ``nav`` and ARIA navigation, DocBook ``div.toc`` and lists of tables, Sphinx toctrees and
  ``contents`` directives, MkDocs/MediaWiki ``.toc``, and an unmarked list of links to the
  page's own anchors that opens its section (:data:`CONTENTS_SELECTOR`).
- ``h1``-``h6`` start a section and build ``heading_path``; a section runs to the next
  heading and its ``element_path`` is the common ancestry of its blocks below ``<body>``,
  e.g. ``article > section > p``.
- A data table becomes one section of kind ``table``, rendered as a Markdown pipe table
  (caption first, then a header row and separator line) so it is kept as one unit and can be
  split between rows later. Cell, caption and heading text joins inline elements without
  adding spaces (``<code>xev</code>(1)`` is ``xev(1)``). Tables used for layout are read as
  ordinary blocks: those holding headings or other tables, ``role="presentation"``, tables
  inside admonition boxes, and one-cell-wide boxes of paragraphs (no row with two filled cells).
- An admonition box's label (DocBook's ``Tip`` cell or title, Sphinx's and MkDocs'
  ``admonition-title``) opens the paragraph after it: ``Tip: Run mount(8) ...``, so no chunk
  ends on a bare label.
- ``pre`` blocks keep their whitespace and become sections of kind ``code``.
- List items get ``- `` or ``1. `` markers; ``<br>`` becomes a newline; other whitespace is
  collapsed as a browser would.

The document's ``<title>`` is recorded as ``title`` metadata. Inline DTDs and entity
declarations are never expanded (HTML parsers do not process them).

Bytes are read as Unicode (UTF-8, or what a byte-order mark names) when they are valid in it;
otherwise in the charset the page declares (``<meta charset>``, ``http-equiv`` content, or an
XHTML page's XML declaration); a page that declares none is read in the legacy encoding
detected in it, as plain text is (:func:`~beam_chunking.parsers.decode.decode`), much as a
browser sniffs one. ``encoding`` and ``encoding_confidence`` are recorded as metadata.
"""
from __future__ import annotations

import codecs
import re
from typing import Dict, FrozenSet, List, Optional

from beam_chunking.errors import DecodeError, ParseError
from beam_chunking.parsers._build import HeadingSections, clean, collapse, markdown_table
from beam_chunking.parsers._depth import nesting_depth
from beam_chunking.parsers._optional import require
from beam_chunking.parsers.decode import Decoded, decode, decode_unicode
from beam_chunking.parsers.drops import KEEP_NOTHING
from beam_chunking.parsers.limits import DEFAULT_LIMITS, ParseLimits, check_time, exceeded
from beam_chunking.types import Document, ParsedDocument

#: Elements whose whole subtree is never text.
DROPPED = frozenset(
    "script style noscript template aside svg iframe object embed canvas button select "
    "option input textarea head title meta link audio video map".split()
)
#: ARIA roles that mark navigation chrome.
CHROME_ROLES = frozenset("banner contentinfo search menu menubar toolbar".split())
#: Class names that mark navigation chrome (DocBook and Javadoc navigation bars, CMS themes).
CHROME_CLASSES = frozenset(
    "navheader navfooter topNav subNav bottomNav breadcrumb breadcrumbs skip-link skiplink".split())
#: Links that say they go to the previous, next or parent page: by ``rel``, or by the access
#: keys P, N, U and H that DocBook, Texinfo and gtk-doc give their Prev/Next/Up/Home links
#: (Texinfo's menus number theirs: those are contents).
NAV_RELS = frozenset({"prev", "next", "up"})
NAV_ACCESS_KEYS = frozenset("pnuhPNUH")
#: The label before a navigation link (Texinfo: "Next: <a>", "Previous: <a>", "Up: <a>"), as
#: the last word of the text before it ("Setup: <a>" is no label).
NAV_LABEL = re.compile(r"(?:^|[^\w-])(?:next|previous|prev|up):$", re.I)
#: The only words a navigation bar holds outside its links (lower case).
NAV_WORDS = frozenset({"next", "previous", "prev", "up", "home", "top", "index", "contents", "back", "forward"})
#: A navigation bar has at most this many characters of text (not counting whitespace) ...
NAV_BLOCK_MAX_CHARS = 200
#: ... sits at most this many levels above its links, and is never one of these (a cell is
#: part of its table, which only :func:`_is_navigation_bar` judges whole).
NAV_BLOCK_MAX_LEVELS = 6
NAV_BLOCK_NEVER = frozenset("body html main article section td th tr tbody thead tfoot".split())
#: A table of at most this many rows whose text is all link text (:data:`NAV_BAR_LINK_SHARE`),
#: with at least :data:`NAV_BAR_MIN_LINKS` links to other pages, one of them a navigation link
#: or one reading Prev, Next, Up or Home (an image link's ``alt`` counts), is a navigation bar.
NAV_BAR_MAX_ROWS = 3
NAV_BAR_MIN_LINKS = 2
NAV_BAR_LINK_SHARE = 0.9
#: The whole text of a permalink: the mark a documentation generator links to its own heading
#: or definition (Sphinx and MkDocs ``¶``, Node.js and GitHub ``#``, ``🔗``). Not ``§``, which
#: a cross-reference to a section of a law may read.
PERMALINK_MARKS = frozenset({"#", "¶", "🔗", "⚓"})
#: Elements that do not start a block (their text flows into the surrounding paragraph).
INLINE = frozenset(
    "a abbr b bdi bdo cite code data dfn em font i img kbd label mark q rp rt ruby s samp small "
    "span strong sub sup time tt u var wbr del ins big".split()
)
#: What lists a page's (or its site's) own sections: dropped as ``"table of contents"`` unless
#: ``"contents"`` is kept. DocBook ``div.toc`` / ``dl.toc`` / ``div.list-of-tables``, Sphinx
#: ``div.toctree-wrapper`` and the ``contents`` directive (``.contents.topic``), MkDocs and
#: MediaWiki ``.toc`` / ``#toc``, DPUB-ARIA ``doc-toc``, HTML5 ``nav`` and ARIA navigation.
#: (A bare ``.contents`` is not one: Doxygen wraps its whole body in ``div.contents``.)
CONTENTS_SELECTOR = ", ".join([
    "nav", "[role=navigation]", "[role=doc-toc]", ".toc", "#toc", "#table-of-contents",
    ".toctree-wrapper", ".topic.contents", ".list-of-tables", ".list-of-figures", ".list-of-examples",
])
#: Class names of admonition boxes (DocBook, Sphinx, MkDocs): a table that is the box's own
#: child lays the box out.
ADMONITION_CLASSES = frozenset("tip note warning caution important admonition hint attention danger".split())
#: An admonition box's label (``Note``, ``Warning:``) is its first block of text when that
#: block is at most this many characters and more text follows it in the box.
ADMONITION_LABEL_MAX_CHARS = 40
#: Elements that hold blocks of text; a table cell holding them is a layout box, not a datum.
_BLOCKS = "p, div, ul, ol, dl, pre, blockquote"
#: A list is an in-page contents list when it has at least this many links, all to anchors
#: of the page itself, and their text makes up this share of the list's text.
TOC_MIN_LINKS = 3
TOC_LINK_SHARE = 0.8
#: A block matched by :data:`CONTENTS_SELECTOR` is dropped only when at least this share of
#: its text is link text.
CONTENTS_LINK_SHARE = 0.5
#: Wrapper levels searched above a table without ``<caption>`` for its title block.
TITLE_DEPTH = 3
#: Pages with at most this many tags are not checked against ``limits.max_html_depth``: however
#: they nest, they parse in about a second at most (10,000 nested lists: 1.4 s), and the check
#: would add a third to the parse time of every large page.
DEPTH_CHECK_TAGS = 20_000
#: ``element_path`` names at most this many elements, the outermost: a path is provenance,
#: and copying a deeper one per block would make deep pages quadratic.
MAX_ELEMENT_PATH = 32
HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_CONTENT_ANCESTORS = frozenset({"article", "main", "section"})
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_.:-]+)""", re.I)
# An XHTML page may declare its encoding only in its XML declaration.
_XML_ENCODING = re.compile(rb"""^\s*<\?xml[^>]*\sencoding\s*=\s*["']([A-Za-z0-9_.:-]+)""")


def _decode(doc: Document, errors: str) -> Decoded:
    """Unicode (UTF-8, a byte-order mark's encoding, or ISO-2022 where its escape sequences
    say so: :func:`~beam_chunking.parsers.decode.decode_unicode`) first; otherwise the
    charset the page declares (``<meta>``, or an XHTML page's XML declaration); a page that
    declares none is decoded as the text parsers decode
    (:func:`~beam_chunking.parsers.decode.decode`: the legacy encoding detected), as a
    browser sniffs one."""
    unicode = decode_unicode(doc.data)
    if unicode is not None:
        return unicode
    head = doc.data[:4096]
    declared = _META_CHARSET.search(head) or _XML_ENCODING.search(head)
    if declared is None:
        return decode(doc.data, uri=doc.uri, document_id=doc.id, errors=errors)
    try:
        codec = codecs.lookup(declared.group(1).decode("ascii")).name
    except LookupError:
        raise ParseError(
            f"HTML declares unknown charset {declared.group(1).decode('ascii', 'replace')!r} "
            "and is not valid UTF-8", document_id=doc.id, uri=doc.uri) from None
    try:
        return Decoded(doc.data.decode(codec), codec, 1.0)
    except UnicodeDecodeError as exc:
        if errors == "strict":
            raise DecodeError(
                f"invalid {codec} at byte offset {exc.start}; run with --decode-errors replace "
                "to keep it, bad bytes as U+FFFD", document_id=doc.id, uri=doc.uri) from None
        text = doc.data.decode(codec, errors="replace")
        return Decoded(text, codec, 1.0, text.count("\ufffd"))


#: One CSS selector for everything left out; Lexbor matches it in C before the walk.
CHROME_SELECTOR = ", ".join([
    *sorted(DROPPED), "[hidden]", "[aria-hidden=true]",
    *(f"[role={role}]" for role in sorted(CHROME_ROLES)),
    *(f".{name}" for name in sorted(CHROME_CLASSES)),
    # Class names match case-sensitively; DocBook's DSSSL stylesheets write NAVHEADER.
    ".NAVHEADER", ".NAVFOOTER",
    # DocBook XSL's navigation tables, also where a customisation dropped their div's class.
    "table[summary='Navigation header']", "table[summary='Navigation footer']",
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
    # One pass over the links (each selector is a walk of the whole tree): permalinks, and
    # the links whose attributes say they lead to the previous, next or parent page.
    links, permalinks, attributed = [], [], set()
    for link in tree.css("a[href]"):
        attrs = link.attributes
        if (attrs.get("href") or "").startswith("#") and link.text(deep=True).strip() in PERMALINK_MARKS:
            permalinks.append(link)
            continue
        links.append(link)
        if attrs.get("accesskey") in NAV_ACCESS_KEYS or NAV_RELS.intersection((attrs.get("rel") or "").lower().split()):
            attributed.add(link.mem_id)
    for node in permalinks:
        node.decompose()  # else "fs.readFile(path)#" would be a heading and its path
    navigation = [a for a in links if _is_nav_link(a, attributed)]
    bars = [t for t in tree.css("table") if _is_navigation_bar(t, attributed)] + _navigation_blocks(
        navigation, attributed)
    for node in _outermost(bars):
        node.decompose()


def _is_nav_link(link, attributed: set) -> bool:
    """A link to the previous, next or parent page: by its ``rel`` (:data:`NAV_RELS`) or access
    key (:data:`NAV_ACCESS_KEYS`), the links whose ids are ``attributed``, or by the label
    written before it (:data:`NAV_LABEL`: Texinfo's "Next: <a>", repeated at the foot of a page
    without the attributes)."""
    if link.mem_id in attributed:
        return True
    before = link.prev
    return (before is not None and before.tag == "-text"
            and NAV_LABEL.search(before.text(deep=False).rstrip()) is not None)


_WORD = re.compile(r"[^\W\d_]+")


def _words(text: str) -> set:
    """The words of ``text``: runs of letters, lower case."""
    return set(_WORD.findall(text.lower()))


def _words_outside_links(node) -> set:
    """The words of ``node``'s text that are not link text."""
    rest = node.text(deep=True)
    for link in node.css("a"):
        rest = rest.replace(link.text(deep=True), " ", 1)
    return _words(rest)


def _navigation_blocks(links: list, attributed: set) -> list:
    """The blocks around ``links`` (navigation links, :func:`_is_nav_link`) that hold two of
    them or more, no heading, at most :data:`NAV_BLOCK_MAX_CHARS` characters of text and no
    word outside their links but :data:`NAV_WORDS`: navigation bars however they are marked
    up. Each element is judged once, at most :data:`NAV_BLOCK_MAX_LEVELS` above a link."""
    found, judged = [], set()
    for link in links:
        node, levels = link.parent, 0
        while node is not None and node.tag not in NAV_BLOCK_NEVER and levels < NAV_BLOCK_MAX_LEVELS:
            if node.mem_id in judged:
                break  # judged from an earlier link: stopping keeps the pass linear (it may miss a bar, never add one)
            judged.add(node.mem_id)
            if node.tag not in INLINE:
                levels += 1
                if len("".join(node.text(deep=True).split())) > NAV_BLOCK_MAX_CHARS:
                    break
                if (sum(_is_nav_link(a, attributed) for a in node.css("a[href]")) >= 2
                        and node.css_first("h1, h2, h3, h4, h5, h6") is None
                        and _words_outside_links(node) <= NAV_WORDS):
                    found.append(node)
            node = node.parent
    return found


def _outermost(nodes: list) -> list:
    """``nodes`` without those inside another of them (each once): what to decompose, since a
    node inside a decomposed one is gone with it."""
    ids = {n.mem_id for n in nodes}
    out, seen = [], set()
    for node in nodes:
        parent = node.parent
        while parent is not None and parent.mem_id not in ids:
            parent = parent.parent
        if parent is None and node.mem_id not in seen:
            seen.add(node.mem_id)
            out.append(node)
    return out


def _is_navigation_bar(table, attributed: set) -> bool:
    """Whether ``table`` is a bar of links to other pages (see :data:`NAV_BAR_MAX_ROWS`): no
    table inside, at most that many rows, its text all link text, and a navigation link among
    its links (a table of links to related projects is content)."""
    if len(table.css("table")) > 1 or len(table.css("tr")) > NAV_BAR_MAX_ROWS:
        return False
    away = [a for a in table.css("a[href]") if not (a.attributes.get("href") or "").startswith("#")]
    if len(away) < NAV_BAR_MIN_LINKS or _link_share(table) < NAV_BAR_LINK_SHARE:
        return False
    return any(_is_nav_link(a, attributed) or _link_words(a) & NAV_WORDS for a in away)


def _link_words(link) -> set:
    """The words a link reads as (its text, or its images' ``alt``), lower case."""
    return _words(link.text(deep=True) + " " + " ".join(img.attributes.get("alt") or "" for img in link.css("img")))


def _is_layout_table(node) -> bool:
    """Whether a table lays out its content instead of holding data.

    A layout table holds headings or other tables, is marked ``role="presentation"``/``"none"``,
    is an admonition box's own table (DocBook's Tip/Note: an icon cell and a title cell above
    the body), or has no row with two filled cells side by side (a one-cell-wide box: the
    filled cells are not values of columns) while holding paragraphs or having two columns
    or more. Its content is read as ordinary blocks.
    """
    # css() matches the node itself too, so a data table finds exactly one table.
    if len(node.css("table")) > 1 or node.css_first("h1, h2, h3, h4, h5, h6") is not None:
        return True
    if (node.attributes.get("role") or "").lower() in ("presentation", "none"):
        return True
    # DocBook writes the box as <div class="tip"><table>: only the direct parent counts, so a
    # real data table placed inside a note further down stays a table.
    parent = node.parent
    if parent is not None and ADMONITION_CLASSES & set((parent.attributes.get("class") or "").split()):
        return True
    rows = [[c for c in tr.iter() if c.tag in ("th", "td")] for tr in node.css("tr")]
    filled = [sum(1 for c in row if _inline_text(c).strip()) for row in rows]
    # One filled cell per row is no data: a box of paragraphs, or columns left empty for
    # spacing (Texinfo's menus). A one-column table of plain values stays a table.
    return not any(n >= 2 for n in filled) and (
        node.css_first(_BLOCKS) is not None or max(map(len, rows), default=0) >= 2)


def _admonition_labels(root) -> Dict[int, str]:
    """The label block of each admonition box under ``root``, by element id, with its text.

    The walk writes a label at the start of the paragraph after it (``Note: Do not ...``), so
    that no chunk ends on a bare ``Note`` whose text opens the next one.
    """
    labels: Dict[int, str] = {}
    for box in root.css(", ".join(f".{name}" for name in sorted(ADMONITION_CLASSES))):
        first = next((n for n in box.traverse(include_text=False)
                      if n is not box and n.text(deep=False).strip()), None)
        while first is not None and first.tag in INLINE and first.parent is not box:
            first = first.parent
        # css() matches the node itself too: a label holds no block below it.
        if first is None or first.tag in INLINE or first.tag == "pre" or len(first.css(_BLOCKS)) > (
                first.tag in _BLOCKS.split(", ")):
            continue
        label = collapse(_inline_text(first))
        body = collapse(box.text(deep=True))
        if 0 < len(label) <= ADMONITION_LABEL_MAX_CHARS and len(body) > len(label) + 1:
            labels[first.mem_id] = label
    return labels


def _inline_text(node) -> str:
    """The text of ``node`` as a browser lays it out on one line.

    Text nodes are joined as they are, so inline elements add no spaces (``<code>xev</code>(1)``
    stays ``xev(1)``); block elements and ``<br>`` inside become one space each.
    """
    parts: List[str] = []
    stack = [(node, False)]
    while stack:
        current, closing = stack.pop()
        if closing:
            parts.append(" ")
            continue
        if current.tag == "-text":
            parts.append(current.text(deep=False))
            continue
        if not current.is_element_node:
            continue
        if current.tag == "br":
            parts.append(" ")
            continue
        block = current is not node and current.tag not in INLINE
        if block:
            parts.append(" ")
            stack.append((current, True))
        _push_children(stack, current)
    return " ".join("".join(parts).split())


def _render_table(node, title: str = "") -> str:
    """A data table as a Markdown pipe table (caption line first when there is one).

    ``title`` is the table's title found outside it (see :func:`_outside_title`), used
    when the table has no ``<caption>``.
    """
    rows: List[List[str]] = []
    header = False
    for tr in node.css("tr"):
        cells = [c for c in tr.iter() if c.tag in ("th", "td")]
        if not cells:
            continue
        if not rows:
            header = all(c.tag == "th" for c in cells) or (tr.parent is not None and tr.parent.tag == "thead")
        rows.append([_inline_text(c) for c in cells])
    caption = node.css_first("caption")
    return markdown_table(rows, header=header, caption=_inline_text(caption) if caption is not None else title)


def _outside_title(table, root):
    """The title block that a generator puts just before a table instead of a ``<caption>``.

    DocBook writes ``<div class="table"><p class="title">Table 1.1 ...</p><div
    class="table-contents"><table>``: the nearest text before the table, within its
    wrappers (at most :data:`TITLE_DEPTH` levels up), that is an element whose class names
    a title or caption. Returns that element, or ``None``.
    """
    node = table
    for _ in range(TITLE_DEPTH):
        before = node.prev
        while before is not None:
            if before.tag == "-text" and before.text(deep=False).strip():
                return None
            if before.is_element_node and before.text(deep=True).strip():
                if before.tag in HEADINGS or before.css_first("h1, h2, h3, h4, h5, h6") is not None:
                    return None  # a heading stays a heading
                names = set((before.attributes.get("class") or "").split())
                return before if names & {"title", "caption", "table-title"} else None
            before = before.prev
        node = node.parent
        if node is None or node.mem_id == root.mem_id:
            return None
    return None


def _same_page(href: str, name: str) -> bool:
    """Whether a link points into the page itself (``#id`` or ``<this file>#id``)."""
    base, _, fragment = href.partition("#")
    return bool(fragment) and base in ("", ".", "./", name)


def _is_contents_list(node, name: str, root) -> bool:
    """An unmarked in-page contents list (or Texinfo's menu table): links to the page's own
    anchors and little else, placed before any text of its section (a list of
    cross-references after a paragraph that introduces it is body text)."""
    links = node.css("a[href]")
    if len(links) < TOC_MIN_LINKS or not all(_same_page(a.attributes.get("href") or "", name) for a in links):
        return False
    return _link_share(node) >= TOC_LINK_SHARE and _opens_section(node, root)


def _opens_section(node, root) -> bool:
    """Whether only headings (or nothing) come between ``node`` and the start of its section."""
    while node is not None and node.mem_id != root.mem_id:
        before = node.prev
        while before is not None:
            if before.tag == "-text" or before.is_element_node:
                text = " ".join(before.text(deep=True).split())
                if text:
                    heading = before.css_first("h1, h2, h3, h4, h5, h6") if before.is_element_node else None
                    return heading is not None and " ".join(heading.text(deep=True).split()) == text
            before = before.prev
        node = node.parent
    return True


def _link_share(node) -> float:
    """The share of ``node``'s non-whitespace text that is link text."""
    total = len("".join(node.text(deep=True).split()))
    linked = sum(len("".join(a.text(deep=True).split())) for a in node.css("a[href]"))
    return linked / total if total else 1.0


def _drop_contents(root, name: str, builder) -> None:
    """Cut the page's contents listings out of the tree, recording each as dropped."""
    # A marked block must still be mostly links: Sphinx's singlehtml builder, for one, pours
    # the whole document into the toctree-wrapper it expands.
    found = [n for n in root.css(CONTENTS_SELECTOR) if _link_share(n) >= CONTENTS_LINK_SHARE]
    found += [n for n in root.css("ul, ol, dl, table") if _is_contents_list(n, name, root)]
    ids = {n.mem_id for n in found}
    outermost = []
    for node in found:
        parent = node.parent
        while parent is not None and parent.mem_id not in ids:
            parent = parent.parent
        if parent is None and node.mem_id not in {n.mem_id for n in outermost}:
            outermost.append(node)
    # Decompose only the outermost listings: a nested one goes with its ancestor.
    for node in outermost:
        builder.drop("table of contents", node.text(deep=True, separator=" "))
        node.decompose()


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
    decoded = _decode(doc, errors)
    html = decoded.text
    # Lexbor's time grows with size times depth: refuse a page nested too deep before it.
    if html.count("<") > max(DEPTH_CHECK_TAGS, limits.max_html_depth):
        depth = nesting_depth(html, limits.max_html_depth)
        if depth > limits.max_html_depth:
            raise exceeded(limits, "max_html_depth", f"HTML: elements nest more than {limits.max_html_depth} deep")
    tree = lexbor.LexborHTMLParser(html)
    title_node = tree.css_first("title")
    title = collapse(title_node.text(deep=True)) if title_node is not None else ""
    _remove_chrome(tree)
    root = tree.css_first("main, [role=main]") or tree.body
    out = HeadingSections(max_chars=limits.max_text_chars)
    if root is not None and "contents" not in keep:
        _drop_contents(root, doc.uri.replace("\\", "/").rsplit("/", 1)[-1], out.builder)
    meta = {"title": title} if title else {}
    meta.update(decoded.metadata())
    if root is None:
        return out.builder.build(doc, meta)

    # Data tables, and the titles written outside them that move into their unit as the
    # caption line (the walk skips the title where it stands).
    data_tables = {t.mem_id for t in root.css("table") if not _is_layout_table(t)}
    titles = {}
    for table in root.css("table"):
        if table.mem_id in data_tables and table.css_first("caption") is None:
            found = _outside_title(table, root)
            if found is not None:
                titles[table.mem_id] = (found.mem_id, _inline_text(found))
    moved = {node_id for node_id, _ in titles.values()}
    labels = _admonition_labels(root)

    inline: List[str] = []
    prefix = [""]
    label = [""]  # an admonition's label, waiting for the paragraph it opens
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
            if label[0]:
                named = label[0]
                text = (f"{named}{' ' if named[-1] in ':.!?' else ': '}{prefix[0]}{text}" if not prefix[0]
                        else f"{named.rstrip(':')}:\n{prefix[0]}{text}")
                label[0] = ""
            else:
                text = prefix[0] + text
            out.paragraph(text, _path(tags))
            prefix[0] = ""

    def flush_label() -> None:
        """The label alone, when a heading, a table or code comes after it."""
        if label[0]:
            out.paragraph(label[0], _path(tags))
            label[0] = ""

    # Iterative walk (deeply nested pages must not hit Python's recursion limit). A popped
    # ``None`` entry closes the block element below it on the stack.
    stack: list = []
    _push_children(stack, root)
    seen = 0
    while stack:
        node, closing = stack.pop()
        seen += 1
        if not seen % 4096:
            check_time(f"element {seen}")
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
        if not node.is_element_node or node.mem_id in moved:
            continue  # (a moved node is a table's title, written with the table)
        if tag == "br":
            inline.append("\n")
            continue
        if node.mem_id in labels:
            flush()
            flush_label()
            label[0] = labels[node.mem_id]
            continue
        if tag in HEADINGS:
            flush()
            flush_label()
            text = _inline_text(node)
            if text:
                out.heading(HEADINGS[tag], text, _path(tags, tag))
            continue
        if tag == "table" and node.mem_id in data_tables:
            flush()
            flush_label()
            out.unit(_render_table(node, titles.get(node.mem_id, (None, ""))[1]), "table",
                     _path(tags, tag))
            continue
        if tag == "pre":
            flush()
            flush_label()
            out.unit(clean(node.text(deep=True)).strip("\n"), "code", _path(tags, tag))
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
    flush_label()
    return out.builder.build(doc, meta)


def _path(tags: List[str], tag: Optional[str] = None) -> List[str]:
    """The element path of a block (``tags``, then ``tag``), cut to :data:`MAX_ELEMENT_PATH`."""
    if len(tags) >= MAX_ELEMENT_PATH:
        return tags[:MAX_ELEMENT_PATH]
    return tags + [tag] if tag is not None else list(tags)


def _push_children(stack: list, node) -> None:
    """Push ``node``'s children so that the first one is popped first."""
    child = node.last_child
    while child is not None:
        stack.append((child, False))
        child = child.prev
