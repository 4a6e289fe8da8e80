"""The text lines of a PDF page with their geometry and type, read from PDFium's text page.

PDFium orders a page's characters as its content stream draws them and inserts a line break
where the baseline changes. Each line here is one such run, with what layout analysis needs
(:mod:`beam_chunking.parsers.pdf_paragraphs`): its box, baseline, font size, whether it is
bold or monospaced, and the width of its first word (to tell a line that ended early from
one that was full). The values come from a few PDFium calls per line (the first, last and
first-word-ending characters), not per character, so reading the geometry costs a fraction
of extracting the text. The optional C helper ``_pdfwalk`` makes a page's calls in one loop
(through ctypes they cost about 30 us a line); without it the same calls, in the same order,
go through ctypes.

Coordinates are PDF points with the origin at the page's top-left corner, y downwards, as in
:class:`~beam_chunking.types.TextBox`.
"""
from __future__ import annotations

import bisect
import ctypes
import re
from typing import Dict, List, NamedTuple, Optional, Tuple

from beam_chunking.parsers._build import clean

try:
    import beam_chunking.parsers._pdfwalk as _native
except ImportError:  # built without a C compiler: the ctypes calls serve, with the same results
    _native = None

# PDFium's line break, and the mark that replaces a hyphen at a line end together with the
# line break after it (U+FFFE from FPDFText_GetText, 0x02 from the bounded text).
_BREAK = re.compile(r"[\ufffe\x02](?:\r\n|\r|\n)?|\r\n|\r|\n")
_HYPHEN_MARKS = "\ufffe\x02"
# Hyphens PDFium leaves at a line end: U+2010 HYPHEN (how Chromium draws a soft hyphen) and
# U+00AD SOFT HYPHEN.
_LINE_END_HYPHENS = "\u2010\u00ad"
_FIXED_PITCH = 1  # FPDFText_GetFontInfo flag
_BOLD_WEIGHT = 600
# A letter or a digit: exactly what str.isalnum() accepts (the re module's \w is that, or "_").
_ALNUM = re.compile(r"[^\W_]")
_MONO_NAME = re.compile(r"mono|courier|consol|typewriter|menlo|cmtt|fixed", re.I)
# Bold, black, heavy, semibold and demibold faces, and TeX's bold extended (cmbx10, sfbx1000).
_BOLD_NAME = re.compile(r"bold|black|heavy|demi|cmbx|sfbx", re.I)
# A line's first word ends at its last character (no space in it): no char to ask.
_NO_WORD = -(2 ** 31)
# The functions _Reader.facts calls, in the order _pdfwalk.line_facts takes their addresses.
_FACT_CALLS = ("FPDFText_GetCharBox", "FPDFText_GetLooseCharBox", "FPDFText_GetCharOrigin", "FPDFText_GetFontSize",
               "FPDFText_GetFontWeight", "FPDFText_GetFontInfo", "FPDFText_GetMatrix")


class Line(NamedTuple):
    """One line of text on a page.

    Args:
        text: The line's text (control characters removed, ends stripped).
        x0: Left edge, points.
        top: Top edge, points from the page top.
        x1: Right edge.
        bottom: Bottom edge.
        baseline: Baseline of its first letter or digit, points from the page top.
        size: The larger font size of its first letter or digit (else its first character)
            and its last character, points: inline code or a smaller bullet does not set it.
        bold: Those two characters are bold.
        mono: Those two characters' fonts are monospaced (a code line, not inline code).
        first_word: Width of its first word, points.
        hyphenated: It ended with a hyphen at the line end (not in ``text``): the word may go
            on in the next line.
    """

    text: str
    x0: float
    top: float
    x1: float
    bottom: float
    baseline: float
    size: float
    bold: bool
    mono: bool
    first_word: float
    hyphenated: bool = False


class _Calls:
    """PDFium's per-character text calls, declared with plain pointer arguments: pypdfium2's
    typed wrappers convert every argument and cost about twice as much per call, and a page
    takes about ten calls a line."""

    def __init__(self, raw):
        v, i, d = ctypes.c_void_p, ctypes.c_int, ctypes.c_double

        def proto(fn, res, *args):
            return ctypes.CFUNCTYPE(res, *args)(ctypes.cast(fn, v).value)

        self.char_box = proto(raw.FPDFText_GetCharBox, i, v, i, v, v, v, v)
        self.loose_box = proto(raw.FPDFText_GetLooseCharBox, i, v, i, v)
        self.origin = proto(raw.FPDFText_GetCharOrigin, i, v, i, v, v)
        self.font_size = proto(raw.FPDFText_GetFontSize, d, v, i)
        self.font_weight = proto(raw.FPDFText_GetFontWeight, i, v, i)
        self.font_info = proto(raw.FPDFText_GetFontInfo, ctypes.c_ulong, v, i, v, ctypes.c_ulong, v)
        self.matrix = proto(raw.FPDFText_GetMatrix, i, v, i, v)
        self.at = tuple(ctypes.cast(getattr(raw, name), v).value for name in _FACT_CALLS)


_CALLS: Dict[int, _Calls] = {}  # one set per process (per pypdfium2.raw module)


class _Reader:
    """The few per-character PDFium calls the lines need, with their out-parameters made once."""

    def __init__(self, raw, textpage, height: float):
        calls = _CALLS.get(id(raw))
        if calls is None:
            calls = _CALLS[id(raw)] = _Calls(raw)
        self.calls = calls
        self.typed = textpage.raw if hasattr(textpage, "raw") else textpage  # for the rare typed call
        self.tp = ctypes.cast(self.typed, ctypes.c_void_p).value
        self.height = height
        self.values = (ctypes.c_double * 4)()
        self.rect = (ctypes.c_float * 4)()  # FS_RECTF: left, top, right, bottom
        self.flags = ctypes.c_int()
        self.name = (ctypes.c_char * 128)()
        self.names: Dict[bytes, Tuple[bool, bool]] = {}  # font name -> (bold, monospaced), per page
        base = ctypes.addressof(self.values)
        self.slots = tuple(base + 8 * k for k in range(4))
        self.rect_at = ctypes.addressof(self.rect)
        self.matrix = (ctypes.c_float * 6)()  # FS_MATRIX: a, b, c, d, e, f
        self.matrix_at = ctypes.addressof(self.matrix)
        self.name_at, self.flags_at = ctypes.addressof(self.name), ctypes.addressof(self.flags)

    def box(self, index: int) -> Tuple[float, float, float, float]:
        """Tight box ``(x0, top, x1, bottom)`` of character ``index``, top-left origin."""
        left, right, bottom, top = self.slots
        self.calls.char_box(self.tp, index, left, right, bottom, top)
        v = self.values
        return v[0], self.height - v[3], v[1], self.height - v[2]

    def loose(self, index: int) -> Tuple[float, float]:
        """``(top, bottom)`` of character ``index`` by its font's ascent and descent."""
        self.calls.loose_box(self.tp, index, self.rect_at)
        return self.height - self.rect[1], self.height - self.rect[3]

    def baseline(self, index: int) -> float:
        """The baseline (origin y) of character ``index``."""
        self.calls.origin(self.tp, index, self.slots[0], self.slots[1])
        return self.height - self.values[1]

    def size(self, first: int, last: int) -> float:
        """The larger size characters ``first`` and ``last`` of a line are drawn at: the font
        size scaled by the text matrix (a PDF may set 1 pt text scaled 11 times, as
        Ghostscript and Quartz write them; one matrix serves the line)."""
        size = float(max(self.calls.font_size(self.tp, first), self.calls.font_size(self.tp, last)))
        if self.calls.matrix(self.tp, first, self.matrix_at):
            return _scaled(size, self.matrix[0], self.matrix[1], self.matrix[2], self.matrix[3])
        return size

    def style(self, index: int) -> Tuple[bool, bool]:
        """``(bold, monospaced)`` of character ``index``'s font."""
        self.calls.font_info(self.tp, index, self.name_at, len(self.name), self.flags_at)
        known = self.named(self.name.value)
        # The weight, or the name: a weight read from the font's stem width (Chromium's
        # embedded fonts: 380 for bold) can stay under a bold weight.
        bold = known[0] or self.calls.font_weight(self.tp, index) >= _BOLD_WEIGHT
        # The flag, or the name where the flag is missing (the standard Courier fonts).
        return bold, bool(self.flags.value & _FIXED_PITCH) or known[1]

    def named(self, name: bytes) -> Tuple[bool, bool]:
        """``(bold, monospaced)`` as a font's name tells them."""
        known = self.names.get(name)
        if known is None:
            text = name.decode("latin-1")
            known = self.names[name] = (bool(_BOLD_NAME.search(text)), bool(_MONO_NAME.search(text)))
        return known

    def facts(self, i0: int, i1: int, word: int, font: int) -> tuple:
        """What a line needs from PDFium, given its first and last characters, the last
        character of its first word (or ``_NO_WORD``) and the character whose font it takes:
        ``(a0, a1, b0, b1, top, bottom, top1, bottom1, w0, w1, bold, mono, bold1, mono1,
        baseline, size)``: the left and right edges of the first and the last character and
        of the word's end (``None`` without one), the loose top and bottom of the first and the
        last, the :meth:`style` of the font's and of the last character."""
        a0, _, a1, _ = self.box(i0)
        b0, _, b1, _ = self.box(i1)
        top, bottom = self.loose(i0)
        top1, bottom1 = self.loose(i1)
        w0, _, w1, _ = self.box(word) if word != _NO_WORD else (None, None, None, None)
        style, style1 = self.style(font), self.style(i1)
        return (a0, a1, b0, b1, top, bottom, top1, bottom1, w0, w1, *style, *style1, self.baseline(font),
                self.size(font, i1))

    def all_facts(self, indices: List[int]) -> List[tuple]:
        """:meth:`facts` of each line, its 4 indices given in turn in ``indices``: one call
        into C for the page where ``_pdfwalk`` is built (the ctypes calls cost about 30 us a
        line, most of reading the lines)."""
        if _native is not None:
            return [(*facts[:15], size if matrix is None else _scaled(size, *matrix))
                    for facts in _native.line_facts(self.calls.at, self.tp, self.height, indices, self.named)
                    for size, matrix in [facts[15:]]]
        return [self.facts(*indices[k:k + 4]) for k in range(0, len(indices), 4)]


def _scaled(size: float, a: float, b: float, c: float, d: float) -> float:
    """``size`` scaled by a text matrix ``(a, b, c, d)``: by the square root of its area."""
    scale = abs(a * d - b * c) ** 0.5
    return size * scale if scale > 0 else size


class _Offsets:
    """Python offsets of the page's text as PDFium's text indices, which count UTF-16 units (a
    character outside the BMP, an emoji, is two), and those as character indices."""

    def __init__(self, raw, tp, text: str, count: int):
        self.raw, self.tp = raw, tp
        self.astral = [k for k, ch in enumerate(text) if ord(ch) > 0xFFFF] if len(text) != count else []
        self.identity = len(text) == count

    def char(self, pos: int) -> int:
        """PDFium's character index of the text's code point ``pos``."""
        if self.identity:
            return pos
        units = pos + bisect.bisect_left(self.astral, pos)
        return self.raw.FPDFText_GetCharIndexFromTextIndex(self.tp, units)


def _edge(text: str, forward: bool) -> Optional[int]:
    """Index of the first (or last) non-space character of ``text``, or ``None``."""
    # str.strip() strips exactly the characters str.isspace() accepts.
    trimmed = text.lstrip() if forward else text.rstrip()
    if not trimmed:
        return None
    return len(text) - len(trimmed) if forward else len(trimmed) - 1


def page_lines(raw, textpage, height: float) -> List[Line]:
    """The lines of one page in PDFium's order, blank lines left out.

    Args:
        raw: ``pypdfium2.raw``.
        textpage: The page's open ``PdfTextPage``.
        height: The page's height in points (to put the origin at the top).
    """
    count = textpage.count_chars()
    if count <= 0:
        return []
    text = textpage.get_text_range(0, count)
    reader = _Reader(raw, textpage, height)
    offsets = _Offsets(raw, reader.typed, text, count)
    found: List[Tuple[str, bool]] = []  # each line's text and whether it ended hyphenated
    indices: List[int] = []  # and its characters to ask PDFium about (_Reader.facts)
    pos = 0
    for m in [*_BREAK.finditer(text), None]:
        end = m.start() if m is not None else len(text)
        segment = text[pos:end]
        next_pos = m.end() if m is not None else len(text)
        first, last = _edge(segment, True), _edge(segment, False)
        hyphenated = m is not None and m.group()[0] in _HYPHEN_MARKS
        if m is not None and not hyphenated and last is not None and segment[last] in _LINE_END_HYPHENS:
            # A typographic or soft hyphen ending a line: PDFium leaves it in the text.
            hyphenated = True
            segment = segment[:last]
            last = _edge(segment, False)
            first = None if last is None else first
        words = clean(segment).strip() if first is not None else ""
        if words:
            i0 = offsets.char(pos + first)
            space = segment.find(" ", first)
            # The font of the first letter or digit: a bullet or a dash is often set in
            # another size or font than the text it marks.
            alnum = _ALNUM.search(segment, first, first + 12)
            lead = alnum.start() if alnum is not None else first
            indices += (i0, offsets.char(pos + last), offsets.char(pos + space - 1) if space > first else _NO_WORD,
                        i0 if lead == first else offsets.char(pos + lead))
            found.append((" ".join(words.split()) if "  " in words or "\t" in words else words, hyphenated))
        pos = next_pos
    lines: List[Line] = []
    for (words, hyphenated), (a0, a1, b0, b1, top, bottom, top1, bottom1, w0, w1, bold, mono, bold1, mono1,
                              baseline, size) in zip(found, reader.all_facts(indices)):
        # Left and right edges whatever the direction: in right-to-left text the first
        # character is the rightmost one.
        x0, x1 = min(a0, b0), max(a1, b1)
        lines.append(Line(
            words, x0, min(top, top1), x1, max(bottom, bottom1), baseline, size, bold and bold1, mono and mono1,
            x1 - x0 if w0 is None else max(a1, w1) - min(a0, w0), hyphenated,
        ))
    return lines


__all__ = ["Line", "page_lines"]
