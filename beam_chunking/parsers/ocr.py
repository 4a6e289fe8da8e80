"""Optical character recognition: the text lines of an image, for scans and pictures of text.

The engine is RapidOCR (``rapidocr-onnxruntime``, the ``ocr`` extra): PaddleOCR's PP-OCRv4
text detection and recognition models, run by ONNX Runtime on the CPU. The model files
(16 MB) ship inside the wheel, so nothing is downloaded at run time and it works offline.
It reads Latin and Chinese scripts, upright (a page scanned upside down is not turned). It
is slow: a dense 300-dpi A4 page takes about 18 s on this project's 2-core machine, both
cores busy (README, "Scans and images").

The engine is loaded once per process, at the first :func:`recognise` (about 1 s), and
reused; calls are serialised, since ONNX Runtime already spreads one call over every core.

Example:
    >>> from PIL import Image
    >>> [line.text for line in recognise(Image.open("scan.png"))]  # doctest: +SKIP
    ['Invoice 2024-117', 'Total due: 1,250.00 EUR']
"""
from __future__ import annotations

import importlib.util
import threading
from dataclasses import dataclass
from typing import Any, List, Sequence, Tuple

from beam_chunking.errors import ConfigError
from beam_chunking.parsers._optional import require

#: The OCR modes: ``auto`` OCRs what has no text layer (an image, a PDF page without text)
#: when the ``ocr`` extra is installed; ``always`` OCRs every page, text layer or not;
#: ``never`` OCRs nothing (an image document then fails).
OCR_MODES = ("auto", "always", "never")

#: The mode used when none is given.
DEFAULT_OCR = "auto"

#: One-line help of the ``ocr`` option, shared by the command line, the spec and the docs.
OCR_HELP = ("OCR of scans and images: auto (default: pages without a text layer, when the ocr extra is "
            "installed), always (every page) or never")

#: The module and the package of the engine, and the extra that installs it.
ENGINE_MODULE, ENGINE_PACKAGE, EXTRA = "rapidocr_onnxruntime", "rapidocr-onnxruntime", "ocr"

# Engine settings: CPU only (the default, but stated: a CUDA build of onnxruntime must not
# make it grab a GPU that the job did not ask for), and quiet. No text-direction classifier:
# it sees a line squeezed into 192x48 pixels, and on a rendered A4 page it turned 11 of 46
# full-width lines upside down, whose text was then lost; upside-down scans are rarer.
_SETTINGS = {"use_cls": False, "det_use_cuda": False, "cls_use_cuda": False, "rec_use_cuda": False,
             "print_verbose": False}

_ENGINE: Any = None
_LOAD_LOCK = threading.Lock()
# One recognition at a time: each already uses every core, and two at once only thrash.
_RUN_LOCK = threading.Lock()


@dataclass(frozen=True)
class OcrLine:
    """One line of text found in an image.

    Args:
        text: The recognised text of the line.
        box: ``(x0, top, x1, bottom)`` of the line in the image's pixels, origin at the
            top-left corner, y growing downwards.
        confidence: The recogniser's confidence in ``text``, 0 to 1.
    """

    text: str
    box: Tuple[float, float, float, float]
    confidence: float

    @property
    def height(self) -> float:
        """The box's height in pixels."""
        return self.box[3] - self.box[1]


def check_ocr(mode: Any, field: str = "ocr") -> str:
    """Validate an OCR mode.

    Args:
        mode: One of :data:`OCR_MODES`.
        field: The option's name for the message. Default ``"ocr"``.

    Returns:
        ``mode``.

    Raises:
        ConfigError: ``ocr: 'sometimes' must be one of ('auto', 'always', 'never')``.
    """
    if not isinstance(mode, str) or mode not in OCR_MODES:
        raise ConfigError(f"{field}: {mode!r} must be one of {OCR_MODES}", field=field)
    return mode


def ocr_available() -> bool:
    """Whether the ``ocr`` extra is installed; cheap (nothing is imported or loaded)."""
    try:
        return importlib.util.find_spec(ENGINE_MODULE) is not None
    except (ImportError, ValueError):
        return False


def _engine() -> Any:
    """The process's engine, loaded at the first call.

    Raises:
        MissingExtra: ``rapidocr-onnxruntime`` is not installed (names ``beam-chunking[ocr]``).
    """
    global _ENGINE
    if _ENGINE is None:
        with _LOAD_LOCK:
            if _ENGINE is None:
                module = require(ENGINE_MODULE, ENGINE_PACKAGE, EXTRA)
                _ENGINE = module.RapidOCR(**_SETTINGS)
    return _ENGINE


def _rgb(image: Any) -> Any:
    """``image`` as 8-bit RGB; transparency is laid on white (text drawn on a transparent
    background would otherwise turn black on black)."""
    if image.mode == "RGB":
        return image
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        from PIL import Image

        rgba = image.convert("RGBA")
        page = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        page.alpha_composite(rgba)
        return page.convert("RGB")
    if image.mode in ("I", "I;16", "I;16B", "I;16L", "F"):  # 16-bit and float scans: scale to 8 bits
        import numpy as np
        from PIL import Image

        values = np.asarray(image, dtype=np.float64)
        low, high = float(values.min()), float(values.max())
        scaled = (values - low) * (255.0 / (high - low)) if high > low else np.zeros_like(values)
        return Image.fromarray(scaled.astype(np.uint8), "L").convert("RGB")
    return image.convert("RGB")


def recognise(image: Any) -> List[OcrLine]:
    """The text lines of ``image`` in reading order.

    Reading order is top to bottom and left to right, column by column where the lines
    leave a clear vertical gutter (:func:`reading_order`). Lines the recogniser is less than
    50% sure of are left out by the engine.

    Args:
        image: A ``PIL.Image.Image`` of any mode (bilevel, grey, palette, RGB, with alpha,
            16-bit).

    Returns:
        One :class:`OcrLine` per line, boxes in ``image``'s pixels; ``[]`` when it shows no text.

    Raises:
        MissingExtra: the ``ocr`` extra is not installed.
    """
    engine = _engine()
    picture = _rgb(image)
    with _RUN_LOCK:
        result, _ = engine(picture)
    lines = []
    for points, text, score in result or ():
        text = " ".join(str(text).split())
        if not text:
            continue
        xs = [float(p[0]) for p in points]
        ys = [float(p[1]) for p in points]
        lines.append(OcrLine(text, (min(xs), min(ys), max(xs), max(ys)), min(1.0, max(0.0, float(score)))))
    return reading_order(lines)


def reading_order(lines: Sequence[OcrLine]) -> List[OcrLine]:
    """``lines`` in reading order: rows top to bottom, boxes in a row left to right, and the
    rows of a multi-column stretch column by column.

    A stretch of consecutive rows is read as columns when a vertical gutter at least 1.2
    line heights wide runs through all of them and each side is at least a fifth of the
    stretch's width (so a two-cell key/value table keeps its rows). A full-width line (a
    title above two columns) ends the stretch.
    """
    if len(lines) < 2:
        return list(lines)
    heights = sorted(line.height for line in lines)
    gutter = 1.2 * max(1.0, heights[len(heights) // 2])
    try:
        return _order(list(lines), gutter)
    except RecursionError:  # columns nested past Python's stack: rows top to bottom will do
        return [line for row in _rows(list(lines)) for line in sorted(row, key=lambda l: l.box[0])]


def _order(lines: List[OcrLine], gutter: float) -> List[OcrLine]:
    cut = _vertical_cut(lines, gutter)
    if cut is not None:
        left = [line for line in lines if line.box[2] <= cut]
        right = [line for line in lines if line.box[2] > cut]
        return _order(left, gutter) + _order(right, gutter)
    rows = _rows(lines)
    if len(rows) == 1:
        return sorted(rows[0], key=lambda line: line.box[0])
    # No gutter runs through all the rows: cut them into stretches of consecutive rows, each
    # one row or several that a gutter runs through, and read the stretches top to bottom.
    # Every stretch is smaller than ``lines`` (else the cut above would have been found).
    ordered: List[OcrLine] = []
    stretch = rows[0]
    for row in rows[1:]:
        if _vertical_cut(stretch + row, gutter) is None:
            ordered += _order(stretch, gutter)
            stretch = row
        else:
            stretch = stretch + row
    return ordered + _order(stretch, gutter)


def _rows(lines: List[OcrLine]) -> List[List[OcrLine]]:
    """``lines`` grouped into rows: a line whose vertical middle lies inside the current
    row's span joins it (boxes of one printed line split at a wide space)."""
    rows: List[List[OcrLine]] = []
    top = bottom = 0.0
    for line in sorted(lines, key=lambda l: (l.box[1] + l.box[3]) / 2):
        middle = (line.box[1] + line.box[3]) / 2
        if rows and top <= middle <= bottom:
            rows[-1].append(line)
            bottom = max(bottom, line.box[3])
        else:
            rows.append([line])
            top, bottom = line.box[1], line.box[3]
    return rows


def _vertical_cut(lines: List[OcrLine], gutter: float):
    """The x of the widest vertical gap (at least ``gutter`` wide) between the lines' boxes
    that leaves at least a fifth of their width on each side, or ``None``."""
    if len(lines) < 2:
        return None
    spans = sorted((line.box[0], line.box[2]) for line in lines)
    left, right = spans[0][0], max(end for _, end in spans)
    best, reach = None, spans[0][1]
    for start, end in spans[1:]:
        if start - reach >= gutter and min(reach - left, right - start) >= (right - left) / 5:
            if best is None or start - reach > best[1] - best[0]:
                best = (reach, start)
        reach = max(reach, end)
    return None if best is None else (best[0] + best[1]) / 2


__all__ = ["DEFAULT_OCR", "OCR_HELP", "OCR_MODES", "OcrLine", "check_ocr", "ocr_available", "reading_order",
           "recognise"]
