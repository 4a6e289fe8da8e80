"""How deep an HTML page's elements nest, estimated from its tags before any parser builds it.

HTML5 tree builders (Lexbor included) scan the stack of open elements at every block start
tag, so building a page costs time proportional to its size times its nesting depth: 100,000
nested ``<ul><li>`` took 275 s. Browsers stop nesting at 512. :func:`nesting_depth` walks
the tags once, in linear time, keeping an estimate of that stack: void elements never open,
comments, scripts and styles hide their content, an end tag closes up to its
open element, and the commonest implied end tags are applied (a block start closes an open
``p``; ``li``, ``dt``/``dd``, ``option``, table rows and cells close their open sibling).
The estimate stays close to the real depth on real pages, where a parser's error recovery
rarely nests deeper than the tags say.
"""
from __future__ import annotations

import re
from collections import defaultdict
from typing import Dict, FrozenSet, List

_TAG = re.compile(r"<(/?)([A-Za-z][^\s/>]*)([^>]*)>")
#: Comments, scripts and styles, whose content is text whatever it looks like. (Other raw-text
#: elements, ``title`` or ``textarea``, rarely hold markup; what they hold only adds to the
#: estimate.)
_HIDDEN = re.compile(r"<(?:!--.*?(?:-->|\Z)|(script|style)\b.*?(?:</\1\s*>|\Z))", re.S | re.I)
VOID = frozenset("area base br col embed hr img input keygen link meta param source track wbr".split())
_FOREIGN = frozenset({"svg", "math"})
_CLOSES_P = frozenset(
    "address article aside blockquote center details dialog dir div dl fieldset figcaption figure footer form "
    "h1 h2 h3 h4 h5 h6 header hgroup hr main menu nav ol p pre section summary table ul li dd dt".split())
#: A start tag -> the open elements it closes while one of them is the current element, or
#: sits under the current element with only inline elements (:data:`_TRANSPARENT`) between.
_SIBLINGS: Dict[str, FrozenSet[str]] = {
    "li": frozenset({"li"}), "dt": frozenset({"dt", "dd"}), "dd": frozenset({"dt", "dd"}),
    "option": frozenset({"option"}), "optgroup": frozenset({"option", "optgroup"}),
    "tr": frozenset({"tr", "td", "th"}), "td": frozenset({"td", "th"}), "th": frozenset({"td", "th"}),
    "thead": frozenset({"thead", "tbody", "tfoot", "tr", "td", "th"}),
    "tbody": frozenset({"thead", "tbody", "tfoot", "tr", "td", "th"}),
    "tfoot": frozenset({"thead", "tbody", "tfoot", "tr", "td", "th"}),
    "a": frozenset({"a"}), "rt": frozenset({"rt", "rp"}), "rp": frozenset({"rt", "rp"}),
}
#: Elements an implied end tag looks past (at most :data:`_LOOKBACK` of them).
_TRANSPARENT = frozenset("a abbr b bdi big cite code em font i kbd mark p q s samp small span strike strong sub "
                         "sup tt u var".split())
_LOOKBACK = 4
_P = frozenset({"p"})


class _Stack:
    """The open elements, with a count per name so an end tag finds its element in O(1)."""

    def __init__(self) -> None:
        self.names: List[str] = []
        self.counts: Dict[str, int] = defaultdict(int)

    def push(self, name: str) -> None:
        self.names.append(name)
        self.counts[name] += 1

    def close(self, name: str) -> None:
        """Pop up to and including the innermost open ``name`` (a stray end tag does nothing)."""
        if not self.counts[name]:
            return
        while True:
            top = self.names.pop()
            self.counts[top] -= 1
            if top == name:
                return

    def close_siblings(self, names: FrozenSet[str]) -> None:
        """Close open ``names`` from the top while one is the current element or lies under
        at most :data:`_LOOKBACK` inline elements (``<tr>`` closes the open cell, then its row)."""
        while True:
            found = None
            for k in range(len(self.names) - 1, max(-1, len(self.names) - 2 - _LOOKBACK), -1):
                if self.names[k] in names:
                    found = self.names[k]
                    break
                if self.names[k] not in _TRANSPARENT:
                    break
            if found is None:
                return
            self.close(found)


def nesting_depth(html: str, stop_above: int) -> int:
    """The estimated deepest nesting of ``html``'s elements.

    Args:
        html: The page's markup.
        stop_above: Stop as soon as the depth passes this (the cap being checked).

    Returns:
        The depth, at most ``stop_above + 1``.
    """
    html = _HIDDEN.sub("", html)
    stack = _Stack()
    names, counts = stack.names, stack.counts
    deepest = 0
    # The commonest tags take the inline fast paths: this runs on every HTML page.
    for slash, name, rest in _TAG.findall(html):
        name = name.lower()
        if slash:
            if names and names[-1] == name:
                names.pop()
                counts[name] -= 1
            else:
                stack.close(name)
            continue
        # "/>" closes an element only in SVG and MathML; an HTML <div/> is a start tag.
        if name in VOID or (rest and rest[-1] == "/" and (counts["svg"] or counts["math"] or name in _FOREIGN)):
            continue
        # An implied end tag needs its sibling at the top, or under inline elements only.
        top = names[-1] if names else ""
        if counts["p"] and name in _CLOSES_P and (top == "p" or top in _TRANSPARENT):
            stack.close_siblings(_P)
            top = names[-1] if names else ""
        siblings = _SIBLINGS.get(name)
        if siblings is not None and (top in siblings or top in _TRANSPARENT):
            stack.close_siblings(siblings)
        names.append(name)
        counts[name] += 1
        if len(names) > deepest:
            deepest = len(names)
            if deepest > stop_above:
                break
    return deepest
