"""HTML nesting depth estimated from the tags, against the depth Lexbor really builds."""
from __future__ import annotations

import time

import pytest

from beam_chunking.errors import LimitExceeded
from beam_chunking.parsers._depth import nesting_depth
from beam_chunking.parsers.html import parse_html
from beam_chunking.parsers.limits import ParseLimits
from tests.parsers.fixtures import document, nested_lists_html, realdocs_dir


def real_depth(html: str) -> int:
    """Elements on the longest path below <html> in the tree Lexbor builds."""
    from selectolax.lexbor import LexborHTMLParser

    deepest, stack = 0, [(LexborHTMLParser(html).root, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        child = node.child
        while child is not None:
            if child.is_element_node:
                stack.append((child, depth + 1))
            child = child.next
    return deepest


@pytest.mark.parametrize("html", [
    "<body>" + "<p>x" * 3000,  # paragraphs closed by the next one
    "<ul>" + "<li>x" * 3000 + "</ul>",
    "<table>" + "<tr><td>a<td>b" * 3000 + "</table>",  # no end tags at all
    "<dl>" + "<dt>a<dd>b" * 3000 + "</dl>",
    "<ul>" + "<li><p>x" * 3000 + "</ul>",
    "<p>" + "<a href=x>y" * 3000,
    "<select>" + "<option>a" * 3000 + "</select>",
    "<div><p>a<div><p>b</div></div>" * 1000,
    "<script>var s = '<div>'.repeat(9);" + "<div>" * 3000 + "</script><!-- <div><div> --><p>x",
    "<svg>" + "<path d='M0 0'/>" * 3000 + "</svg>",  # self-closing in SVG only
])
def test_flat_pages_are_estimated_flat(html):
    assert nesting_depth(html, 10**9) <= real_depth(html) <= 8


@pytest.mark.parametrize("html", [
    "<ul><li>i" * 300 + "</li></ul>" * 300,
    "<div>" * 700,
    "<div/>" * 700,  # an HTML start tag, whatever its slash says
    "<span>" * 500 + "<div>" * 500,
])
def test_deep_pages_are_estimated_deep(html):
    assert abs(nesting_depth(html, 10**9) - real_depth(html)) <= 3


def test_real_pages_are_estimated_within_a_level():
    root = realdocs_dir()
    if root is None:
        pytest.skip("the Debian Reference is not beside this checkout")
    for path in sorted(root.glob("*.html"))[:4]:
        html = path.read_text(encoding="utf-8", errors="replace")
        assert abs(nesting_depth(html, 10**9) - real_depth(html)) <= 1, path.name


def test_the_scan_stops_past_the_cap():
    assert nesting_depth("<div>" * 10_000, 50) == 51


def test_a_hundred_thousand_nested_lists_are_refused_before_parsing():
    data = nested_lists_html(100_000)  # Lexbor alone took 83 s on it
    started = time.monotonic()
    with pytest.raises(LimitExceeded, match="nest more than 1000 deep, over limits.max_html_depth=1000"):
        parse_html(document("deep.html", data))
    assert time.monotonic() - started < 5
    # 12,000 lists side by side: 48,000 tags, so the depth is checked, and only 2 deep.
    wide = ("<html><body>" + "<ul><li>item</li></ul>" * 12_000 + "</body></html>").encode()
    assert parse_html(document("wide.html", wide)).text.count("- item") == 12_000
    # A page under 20,000 tags is parsed whatever its depth (it costs a second at most).
    assert parse_html(document("ok.html", nested_lists_html(4_000))).text.count("- item") == 4_000
    with pytest.raises(LimitExceeded, match="max_html_depth=500"):
        parse_html(document("deep.html", nested_lists_html(12_000)), limits=ParseLimits(max_html_depth=500))
