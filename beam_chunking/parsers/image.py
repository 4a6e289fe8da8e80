"""Images of text (PNG, JPEG, TIFF): documents read by OCR, one section per image frame.

A scanned letter, a photographed page or a multi-page fax TIFF has no text of its own: its
text is what :func:`beam_chunking.parsers.ocr.recognise` reads, in reading order. The lines
are laid out as a reader sees them: a line further below the previous one than the page's
usual line spacing plus half a line height (so double-spaced text stays one paragraph),
above it (a new column) or beside it starts a new paragraph; paragraphs
are separated by a blank line and wrapped lines joined with a space (a line-end hyphen
between two lower-case letters is joined: ``distri-`` / ``bution`` -> ``distribution``).

- A multi-frame TIFF gives one section per frame, ``page`` numbering the frames from 1;
  a PNG or JPEG is one page (an animated PNG's first frame). A JPEG's EXIF orientation is
  applied first, so boxes are in the pixels of the image as it is displayed.
- ``ParsedDocument.boxes`` holds one :class:`~beam_chunking.types.TextBox` per line, in
  pixels, ``group`` numbering the paragraphs from 0 across the document.
- Metadata: ``ocr_pages`` (frames read) and ``ocr_confidence`` (the mean confidence of the
  lines, 0 to 1; ``None`` when no text was found).

Fails the document, in one line: with ``ocr="never"`` (an image has no text without OCR),
without the ``ocr`` extra (:class:`~beam_chunking.errors.MissingExtra` naming it), for a
file Pillow cannot read, an image over Pillow's decompression-bomb limit (about 179
megapixels), and more frames than ``limits.max_pages``.
"""
from __future__ import annotations

import io
import statistics
from typing import Any, FrozenSet, List, Tuple

from beam_chunking.errors import MissingExtra, ParseError
from beam_chunking.parsers._build import TextBuilder
from beam_chunking.parsers._optional import require
from beam_chunking.parsers.drops import KEEP_NOTHING
from beam_chunking.parsers.limits import DEFAULT_LIMITS, ParseLimits, check_time, exceeded
from beam_chunking.parsers.ocr import DEFAULT_OCR, ENGINE_PACKAGE, EXTRA, OcrLine, check_ocr, ocr_available, recognise
from beam_chunking.types import Document, ParsedDocument, TextBox

PNG, JPEG, TIFF = "image/png", "image/jpeg", "image/tiff"
#: The content types of image documents.
IMAGE_TYPES = (PNG, JPEG, TIFF)

#: A vertical gap between two lines wider than the page's usual one by this many line heights
#: starts a paragraph.
PARAGRAPH_GAP = 0.5

#: ``(separator, text, line)`` triples: how each line of a paragraph is written in the text,
#: after the separator that joins it to the line before (``""`` for the first line and after
#: a joined hyphen, else a space).
Paragraph = List[Tuple[str, str, OcrLine]]


def parse_image(doc: Document, *, errors: str = "strict", limits: ParseLimits = DEFAULT_LIMITS,
                keep: FrozenSet[str] = KEEP_NOTHING, ocr: str = DEFAULT_OCR) -> ParsedDocument:
    """Read the text of a PNG, JPEG or TIFF image by OCR.

    Args:
        doc: The image document.
        errors: Unused (an image holds no encoded text); accepted like every parser.
        limits: ``max_pages`` caps the frames of a TIFF; the time budget is checked
            between frames. Default ``ParseLimits()``.
        keep: Unused; accepted like every parser.
        ocr: ``"auto"`` (default) or ``"always"`` read the image; ``"never"`` fails it.

    Raises:
        ParseError: ``ocr="never"``, or bytes that are not a readable image.
        MissingExtra: the ``ocr`` extra is not installed.
        LimitExceeded: more frames than ``limits.max_pages``, or the time budget is spent.
    """
    def fail(message: str) -> ParseError:
        return ParseError(f"image: {message}", document_id=doc.id, uri=doc.uri)

    if check_ocr(ocr) == "never":
        raise fail("OCR is off (ocr: never) and an image has no text without it; run with ocr: auto to read it")
    if not ocr_available():
        raise MissingExtra(f"image: reading an image's text needs OCR, but {ENGINE_PACKAGE} is not installed; "
                           f"install it with: pip install \"beam-chunking[{EXTRA}]\"", document_id=doc.id, uri=doc.uri)
    frames = _open(doc, fail)
    count = getattr(frames, "n_frames", 1) if doc.content_type == TIFF else 1
    if count > limits.max_pages:
        raise exceeded(limits, "max_pages", f"the TIFF has {count} frames")
    builder = TextBuilder(max_chars=limits.max_text_chars)
    paragraphs = 0
    boxes: List[TextBox] = []
    confidences: List[float] = []
    for index in range(count):
        check_time(f"frame {index + 1} of {count}")
        frame = _frame(frames, index, doc, fail)
        lines = recognise(frame)
        confidences += [line.confidence for line in lines]
        page = layout(lines)
        text = "\n\n".join("".join(sep + part for sep, part, _ in para) for para in page)
        if not builder.add(text, page=index + 1):
            continue
        offset = builder.last_start  # the text is kept as given: it starts and ends with a word
        for para in page:
            for sep, part, line in para:
                offset += len(sep)
                boxes.append(TextBox(offset, offset + len(part), index + 1, *line.box, paragraphs))
                offset += len(part)
            offset += 2  # the blank line between paragraphs
            paragraphs += 1
    confidence = statistics.fmean(confidences) if confidences else None
    return builder.build(doc, {"ocr_pages": count, "ocr_confidence": confidence}, boxes=boxes)


def _open(doc: Document, fail) -> Any:
    image_module = require("PIL.Image", "Pillow", EXTRA)
    try:
        image = image_module.open(io.BytesIO(doc.data))
    except image_module.DecompressionBombError as exc:
        raise fail(f"too many pixels to read safely ({exc})") from None
    except Exception as exc:  # UnidentifiedImageError, OSError, SyntaxError: Pillow's ways of refusing bytes
        raise fail(f"Pillow cannot read it ({type(exc).__name__}: {exc}); the file is damaged or not an image") \
            from None
    return image


def _frame(image: Any, index: int, doc: Document, fail) -> Any:
    """Frame ``index`` of ``image``, decoded and turned upright (EXIF orientation)."""
    from PIL import ImageOps

    try:
        image.seek(index)
        frame = image.copy()  # decodes it: a truncated file fails here
        return ImageOps.exif_transpose(frame) if doc.content_type == JPEG else frame
    except Exception as exc:
        raise fail(f"frame {index + 1} cannot be decoded ({type(exc).__name__}: {exc}); the file is damaged") \
            from None


def layout(lines: List[OcrLine]) -> List[Paragraph]:
    """Group one page's lines, in reading order, into paragraphs, each line with the text it
    contributes (a joined hyphen dropped).

    Args:
        lines: The page's lines from :func:`~beam_chunking.parsers.ocr.recognise`.

    Returns:
        The paragraphs, each a list of ``(separator, text, line)``: the paragraph's text is
        the concatenation of ``separator + text``.
    """
    if not lines:
        return []
    height = statistics.median(line.height for line in lines)
    widest = _leading(lines) + PARAGRAPH_GAP * height
    paragraphs: List[Paragraph] = []
    previous = None
    for line in lines:
        if previous is None or _breaks(previous, line, widest):
            paragraphs.append([("", line.text, line)])
            previous = line
            continue
        para = paragraphs[-1]
        sep, last_text, last = para[-1]
        if _hyphenated(last_text, line.text):
            para[-1] = (sep, last_text[:-1], last)
            para.append(("", line.text, line))
        else:
            para.append((" ", line.text, line))
        previous = line
    return paragraphs


def _leading(lines: List[OcrLine]) -> float:
    """The page's usual gap between a line and the next one under it, in pixels: the lower
    quartile, since most such gaps are inside paragraphs when a page has any."""
    gaps = sorted(max(0.0, b.box[1] - a.box[3]) for a, b in zip(lines, lines[1:]) if _under(a, b))
    return gaps[len(gaps) // 4] if gaps else 0.0


def _under(previous: OcrLine, line: OcrLine) -> bool:
    """Whether ``line`` is printed under ``previous``, overlapping it horizontally."""
    px0, _, px1, pbottom = previous.box
    x0, top, x1, bottom = line.box
    return (top + bottom) / 2 > pbottom and x0 < px1 and x1 > px0


def _breaks(previous: OcrLine, line: OcrLine, widest: float) -> bool:
    """Whether ``line`` starts a paragraph after ``previous``, lines of a paragraph lying
    at most ``widest`` pixels apart."""
    ptop, pbottom = previous.box[1], previous.box[3]
    top, bottom = line.box[1], line.box[3]
    if ptop <= (top + bottom) / 2 <= pbottom:  # the same printed line, split at a wide space
        return False
    if not _under(previous, line):  # back up the page, or beside: another column
        return True
    return top - pbottom > widest


def _hyphenated(text: str, following: str) -> bool:
    return len(text) > 1 and text.endswith("-") and text[-2].islower() and following[:1].islower()


__all__ = ["IMAGE_TYPES", "JPEG", "PARAGRAPH_GAP", "PNG", "TIFF", "layout", "parse_image"]
