"""Images as documents: PNG, JPEG and multi-frame TIFF read by OCR into paragraphs and boxes."""
from __future__ import annotations

import io
import sys

import pytest

from beam_chunking.errors import LimitExceeded, MissingExtra, ParseError
from beam_chunking.parsers import parse, parse_in_process
from beam_chunking.parsers.detect import detect_content_type
from beam_chunking.parsers.limits import ParseLimits
from beam_chunking.parsers.image import layout
from beam_chunking.parsers.ocr import ENGINE_MODULE, OcrLine
from tests.parsers.fixtures import document
from tests.parsers.ocr_images import draw, needs_ocr, overlaps, recovered

FIRST = ["Invoices are checked every", "morning by the finance team", "before they are paid."]
SECOND = ["Late payments carry a fee of", "two percent a month unless", "agreed other-", "wise in writing."]


def encoded(image, fmt: str, **options) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, fmt, **options)
    return buffer.getvalue()


def letter():
    """Two paragraphs with a blank line's gap between them; the second ends on a hyphenated word."""
    return draw([(60, 60, FIRST), (60, 60 + 36 * 4, SECOND)])


def test_types_come_from_names_and_magic_bytes():
    from PIL import Image

    small = Image.new("L", (4, 4), "white")
    assert detect_content_type("a.png", encoded(small, "PNG")) == "image/png"
    assert detect_content_type("a.jpeg", encoded(small, "JPEG")) == "image/jpeg"
    assert detect_content_type("scan.tif", encoded(small, "TIFF")) == "image/tiff"
    assert detect_content_type("notes.txt", encoded(small, "TIFF")) == "image/tiff"  # the bytes win
    big_endian = b"MM\x00*" + bytes(60)
    assert detect_content_type("scan", big_endian) == "image/tiff"


def texts(paragraphs):
    return ["".join(sep + text for sep, text, _ in para) for para in paragraphs]


def lines_at(tops, height=30, x0=40, x1=600, words=("line",)):
    return [OcrLine(f"{words[i % len(words)]} {i}", (x0, top, x1, top + height), 0.9) for i, top in enumerate(tops)]


def test_layout_breaks_paragraphs_at_wide_gaps_whatever_the_line_spacing():
    single = lines_at([0, 36, 72, 150, 186])  # 6 px between lines, 48 before the second paragraph
    assert texts(layout(single)) == ["line 0 line 1 line 2", "line 3 line 4"]
    double = lines_at([0, 60, 120, 180, 280, 340])  # 30 px between lines, 70 before the second
    assert texts(layout(double)) == ["line 0 line 1 line 2 line 3", "line 4 line 5"]
    hyphen = [OcrLine("well-known distri-", (40, 0, 600, 30), 0.9), OcrLine("bution of Tea-", (40, 36, 600, 66), 0.9),
              OcrLine("Party", (40, 72, 600, 102), 0.9)]
    assert texts(layout(hyphen)) == ["well-known distribution of Tea- Party"]
    column = lines_at([0, 36]) + lines_at([0, 36], x0=700, x1=1200)  # reading order: a second column
    assert texts(layout(column)) == ["line 0 line 1", "line 0 line 1"]


def test_png_becomes_paragraphs_with_a_box_per_line():
    needs_ocr()
    image, drawn = letter()
    doc = document("letter.png", encoded(image, "PNG"))
    parsed = parse(doc)  # in the watchdog's child process, which OCRs there
    first, second = parsed.text.split("\n\n")
    read = "Late payments carry a fee of two percent a month unless agreed otherwise in writing."
    assert recovered(" ".join(FIRST), first) >= 0.95 and recovered(read, second) >= 0.95
    assert "\n" not in first and "otherwise in writing" in second  # wrapped lines joined, hyphen too
    assert [(s.start, s.end, s.page) for s in parsed.sections] == [(0, len(parsed.text), 1)]
    assert len(parsed.boxes) == len(drawn)
    for box, (text, ink) in zip(parsed.boxes, drawn):
        assert recovered(text.rstrip("-"), parsed.text[box.start:box.end]) >= 0.75
        assert overlaps((box.x0, box.y0, box.x1, box.y1), ink) and box.page == 1
    assert [box.group for box in parsed.boxes] == [0] * len(FIRST) + [1] * len(SECOND)
    assert parsed.metadata["ocr_pages"] == 1 and 0.8 <= parsed.metadata["ocr_confidence"] <= 1.0
    assert parsed.content_type == "image/png" and parsed.sha256


def test_jpeg_is_read_upright_after_its_exif_rotation():
    needs_ocr()
    image, _ = draw([(60, 60, FIRST)], mode="RGB")
    exif = image.getexif()
    exif[0x0112] = 6  # Orientation: stored turned left, shown turned right
    data = encoded(image.rotate(90, expand=True), "JPEG", quality=90, exif=exif)
    parsed = parse_in_process(document("photo.jpg", data))
    assert parsed.content_type == "image/jpeg"
    assert recovered(" ".join(FIRST), parsed.text) >= 0.95
    assert all(box.x1 > box.x0 and box.x1 - box.x0 > 4 * (box.y1 - box.y0) for box in parsed.boxes)  # lines lie flat


def test_each_tiff_frame_is_a_page():
    needs_ocr()
    one, _ = draw([(40, 40, ["The first page says hello."])], size=(740, 300))
    two, _ = draw([(40, 40, ["The second page says goodbye."])], size=(740, 300))
    data = encoded(one, "TIFF", save_all=True, append_images=[two], compression="tiff_deflate")
    parsed = parse_in_process(document("fax.tiff", data))
    assert [(parsed.text[s.start:s.end], s.page) for s in parsed.sections] == [
        ("The first page says hello.", 1), ("The second page says goodbye.", 2)]
    assert [(box.page, box.group) for box in parsed.boxes] == [(1, 0), (2, 1)]
    assert parsed.metadata["ocr_pages"] == 2


def test_ocr_never_fails_an_image_in_one_line():
    from PIL import Image

    doc = document("scan.png", encoded(Image.new("L", (8, 8), "white"), "PNG"))
    for run in (parse, parse_in_process):
        with pytest.raises(ParseError) as failure:
            run(doc, ocr="never")
        message = str(failure.value)
        assert message.startswith("scan.png: image: OCR is off (ocr: never)") and "\n" not in message


def test_without_the_extra_an_image_fails_naming_it(monkeypatch):
    from PIL import Image

    monkeypatch.setitem(sys.modules, ENGINE_MODULE, None)  # makes the import fail, in this process only
    with pytest.raises(MissingExtra, match=r'scan.png: image: .*pip install "beam-chunking\[ocr\]"'):
        parse_in_process(document("scan.png", encoded(Image.new("L", (8, 8), "white"), "PNG")))


def test_damaged_images_and_too_many_frames_fail_the_document():
    from PIL import Image

    needs_ocr()
    with pytest.raises(ParseError, match="scan.png: image: Pillow cannot read it"):
        parse_in_process(document("scan.png", b"\x89PNG\r\n\x1a\n" + bytes(40)))
    page = Image.new("L", (8, 8), "white")
    frames = encoded(page, "TIFF", save_all=True, append_images=[page, page])
    with pytest.raises(LimitExceeded, match="3 frames, over limits.max_pages=2"):
        parse_in_process(document("fax.tif", frames), limits=ParseLimits(max_pages=2))
