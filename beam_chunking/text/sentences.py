"""A rule-based sentence segmenter that returns exact spans.

It splits after ``.``, ``!``, ``?`` and ``…`` (with any closing quotes or brackets) when
whitespace follows, after the CJK full stops ``。！？`` with no whitespace needed, and at
blank lines. It does not split after common abbreviations (Dr., Mrs., U.S., e.g.), single
initials, or before a lowercase word; decimals (3.14), versions (v1.2.3), URLs and e-mail
addresses never split because no whitespace follows their dots. A Markdown pipe-table row
(a line starting with ``|``) is never split inside: ``| Done. More |`` stays one piece, so
no lone ``|`` cell end becomes a sentence of its own.

Nothing is inserted or normalised: each sentence is a ``(start, end)`` span of the text,
trimmed of surrounding whitespace.

Example:
    >>> text = "Dr. Smith went to Washington. He met Mrs. Jones there."
    >>> [text[s:e] for s, e in sentence_spans(text, 0, len(text))]
    ['Dr. Smith went to Washington.', 'He met Mrs. Jones there.']
"""
from __future__ import annotations

import re
from typing import List, Tuple

from beam_chunking.text.spans import skip_space, trim_end

#: Lowercase words (without their final dot) that a period does not end a sentence after.
ABBREVIATIONS = frozenset(
    """mr mrs ms mx dr prof sr jr st mt ft vs etc e.g i.e cf viz al approx dept est inc ltd co corp
    llc plc no nos fig figs vol vols ch sec secs eq eqs ref refs p pp ed eds gen gov sen rep lt col
    sgt capt cmdr adm rev hon pres jan feb mar apr jun jul aug sep sept oct nov dec mon tue wed thu
    fri sat sun ave blvd rd u.s u.k u.n e.u a.m p.m ph.d m.d b.a m.a op cit ca""".split()
)

# One leading character set lets the regex engine skip ahead fast; look-behinds pick the kind.
_BOUNDARY = re.compile(
    r"[.!?\u2026\u3002\uff01\uff1f\n]"
    r"(?:(?<=[.!?\u2026])(?P<west>[.!?\u2026]*[\"'\u201d\u2019)\]]*)(?=\s|\Z)(?=\s*(?P<next>\S)?)"  # then space
    r"|(?<=[\u3002\uff01\uff1f])(?P<cjk>[\u3002\uff01\uff1f]*[\u300d\u300f\u201d\u2019\uff09]*)"  # CJK
    r"|(?<=\n)(?P<para>[ \t\r\f\v]*\n))"  # blank line
)
_ACRONYM = re.compile(r"(?:[A-Za-z]\.)+[A-Za-z]$")
_LEADING_PUNCT = "\"'(\u201c\u2018["
_CLOSERS = "\"'\u201d\u2019)]"
# Longest abbreviation or acronym worth looking back for, in characters.
_LOOKBACK = 16


def _word_before(text: str, lo: int, dot: int) -> str:
    seg = text[max(lo, dot - _LOOKBACK):dot]
    if not seg or seg[-1].isspace():
        return ""
    return seg.rsplit(None, 1)[-1].lstrip(_LEADING_PUNCT)


def _western_boundary(text: str, m: re.Match, lo: int) -> bool:
    """Whether the ``.!?…`` match ``m`` ends a sentence (see the module docstring)."""
    nxt = m.group("next")
    if nxt is None:
        return True  # end of the range
    if nxt.islower():
        return False  # "the U.S. capital", "e.g. ten"
    tok = m.group()
    if tok[0] == "." and tok.rstrip(_CLOSERS) == ".":
        word = _word_before(text, lo, m.start())
        if word.lower() in ABBREVIATIONS:
            return False
        if len(word) == 1 and word.isalpha() and word.isupper():
            return False  # an initial, as in "J. Smith"
        if _ACRONYM.match(word) and "\n" not in text[m.end():m.start("next")]:
            return False  # U.S., e.g. followed by a name
    return True


def _in_table_row(text: str, lo: int, pos: int) -> bool:
    """Whether ``pos`` lies on a line (within ``[lo, pos)``) that starts with ``|``."""
    line = text.rfind("\n", lo, pos) + 1 or lo
    return text[max(line, lo):pos].lstrip(" \t").startswith("|")


def sentence_spans(text: str, start: int, end: int) -> List[Tuple[int, int]]:
    """Return the sentences of ``text[start:end]`` as trimmed, non-empty spans.

    Together the spans cover every non-whitespace character of the range, in order and
    without overlap.

    Args:
        text: The document text.
        start: First character of the range (code points).
        end: One past its last character.

    Returns:
        ``(start, end)`` spans of ``text``; ``[]`` for an empty or all-whitespace range.
    """
    out: List[Tuple[int, int]] = []
    s = skip_space(text, start, end)
    for m in _BOUNDARY.finditer(text, s, end):
        if m.group("para") is not None:
            cut = m.start()
        elif (m.group("cjk") is not None or _western_boundary(text, m, s)) and not _in_table_row(text, s, m.start()):
            cut = m.end()
        else:
            continue
        if cut <= s:
            continue
        e = trim_end(text, s, cut)
        if e > s:
            out.append((s, e))
        s = skip_space(text, cut, end)
    if s < end:
        e = trim_end(text, s, end)
        if e > s:
            out.append((s, e))
    return out
