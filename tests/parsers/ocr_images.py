"""Pictures of known text, drawn with Pillow in a TrueType font, for the OCR tests.

Each drawn line comes back with the rectangle its ink covers, so a test can check that OCR
finds the words where they were drawn.
"""
from __future__ import annotations

import difflib
import glob
import os
import re
from typing import List, Sequence, Tuple

import pytest

from beam_chunking.parsers.ocr import ocr_available

# Sans fonts first: OCR models are trained mostly on them. DejaVu ships with most Linux systems.
_FONTS = ("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "/usr/share/fonts/dejavu/DejaVuSans.ttf",
          "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf", "/Library/Fonts/Arial.ttf",
          "C:/Windows/Fonts/arial.ttf")

#: ``(text, (x0, top, x1, bottom))`` of each drawn line, in pixels.
Drawn = List[Tuple[str, Tuple[int, int, int, int]]]


def font_path() -> str:
    """A TrueType font on this machine, or skip the test saying none was found."""
    for path in _FONTS:
        if os.path.exists(path):
            return path
    found = sorted(glob.glob("/usr/share/fonts/**/*Sans*.ttf", recursive=True))
    if found:
        return found[0]
    pytest.skip("no TrueType font on this machine to draw test text with (looked for DejaVu Sans and others)")


def needs_ocr() -> None:
    """Skip the test when the ``ocr`` extra is not installed."""
    if not ocr_available():
        pytest.skip('the ocr extra is not installed (pip install "beam-chunking[ocr]")')


def draw(blocks: Sequence[Tuple[int, int, Sequence[str]]], size: Tuple[int, int] = (1000, 740),
         font_size: int = 28, mode: str = "L"):
    """An image with blocks of lines drawn black on white.

    Args:
        blocks: ``(x, y, lines)``: the lines of a block start at ``(x, y)``, one every 1.3
            font sizes downwards.
        size: Width and height in pixels.
        font_size: In pixels.
        mode: Pillow image mode.

    Returns:
        ``(image, drawn)``: the image and each line with its ink rectangle, in drawing order.
    """
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(font_path(), font_size)
    image = Image.new(mode, size, "white")
    pen = ImageDraw.Draw(image)
    drawn: Drawn = []
    for x, y, lines in blocks:
        for line in lines:
            pen.text((x, y), line, font=font, fill="black")
            drawn.append((line, tuple(int(v) for v in pen.textbbox((x, y), line, font=font))))
            y += int(font_size * 1.3)
    return image, drawn


def words(text: str) -> List[str]:
    """The words of ``text``, lower-cased, punctuation left out."""
    return re.findall(r"\w+", text.lower())


def recovered(expected: str, got: str) -> float:
    """The share of ``expected``'s words found in ``got`` in the same order (0 to 1)."""
    want, have = words(expected), words(got)
    matcher = difflib.SequenceMatcher(None, want, have, autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks()) / max(1, len(want))


def overlaps(box: Sequence[float], drawn: Sequence[float], slack: float = 12.0) -> bool:
    """Whether ``box`` covers ``drawn`` (within ``slack`` pixels on each side) and does not
    reach further than ``slack`` past it: OCR found the line where it was drawn."""
    x0, top, x1, bottom = box
    dx0, dtop, dx1, dbottom = drawn
    return (abs(x0 - dx0) <= slack and abs(x1 - dx1) <= slack and abs(top - dtop) <= slack
            and abs(bottom - dbottom) <= slack)
