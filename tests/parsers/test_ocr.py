"""OCR: the engine reads drawn text in reading order, where it was drawn, and is loaded once."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import pytest

from beam_chunking.errors import ConfigError, MissingExtra
from beam_chunking.parsers import ocr
from beam_chunking.parsers.ocr import OCR_MODES, OcrLine, check_ocr, ocr_available, reading_order, recognise
from tests.parsers.ocr_images import draw, needs_ocr, overlaps, recovered

TITLE = "Quarterly Report on Shipping"
LEFT = ["The harbour handled more", "cargo this spring than in", "any season before it."]
RIGHT = ["Rail freight fell because", "two bridges were closed", "for repairs in April."]


def line(text, x0, top, x1, bottom, confidence=0.9):
    return OcrLine(text, (float(x0), float(top), float(x1), float(bottom)), confidence)


def test_modes_are_checked():
    assert OCR_MODES == ("auto", "always", "never")
    assert [check_ocr(mode) for mode in OCR_MODES] == list(OCR_MODES)
    with pytest.raises(ConfigError, match=r"ocr: 'sometimes' must be one of \('auto', 'always', 'never'\)"):
        check_ocr("sometimes")


def test_reading_order_reads_columns_under_a_full_width_title():
    title = line("Title", 40, 20, 900, 50)
    left = [line(f"left {i}", 40, 80 + 40 * i, 440, 110 + 40 * i) for i in range(3)]
    right = [line(f"right {i}", 520, 80 + 40 * i, 900, 110 + 40 * i) for i in range(3)]
    footer = line("Footer across the page", 40, 300, 900, 330)
    shuffled = [right[2], footer, left[1], title, right[0], left[2], left[0], right[1]]
    assert [l.text for l in reading_order(shuffled)] == ["Title", "left 0", "left 1", "left 2", "right 0", "right 1",
                                                          "right 2", "Footer across the page"]


def test_reading_order_keeps_table_rows_and_split_lines_together():
    # A narrow key column beside a wide value column is a table, read row by row.
    rows = [(line(f"key {i}", 40, 40 * i, 120, 40 * i + 30), line(f"value {i}", 300, 40 * i, 900, 40 * i + 30))
            for i in range(3)]
    flat = [cell for row in reversed(rows) for cell in row]
    assert [l.text for l in reading_order(flat)] == ["key 0", "value 0", "key 1", "value 1", "key 2", "value 2"]
    # One printed line found as two boxes, the second a little higher: left to right.
    assert [l.text for l in reading_order([line("b", 500, 38, 900, 70), line("a", 40, 40, 450, 72)])] == ["a", "b"]


def test_without_the_extra_recognise_names_it(monkeypatch):
    monkeypatch.setitem(sys.modules, ocr.ENGINE_MODULE, None)  # makes the import fail
    monkeypatch.setattr(ocr, "_ENGINE", None)
    assert not ocr_available()
    with pytest.raises(MissingExtra, match=r'pip install "beam-chunking\[ocr\]"'):
        recognise(object())


def test_ocr_available_loads_nothing():
    code = ("import sys, json; from beam_chunking.parsers.ocr import ocr_available; "
            "print(json.dumps([ocr_available(), sorted(m for m in ('rapidocr_onnxruntime', 'onnxruntime', 'cv2') "
            "if m in sys.modules)]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    available, loaded = json.loads(out.stdout)
    assert available is ocr_available() and loaded == []


def test_the_models_ship_with_the_package_and_run_on_the_cpu():
    needs_ocr()
    engines = []
    threads = [threading.Thread(target=lambda: engines.append(ocr._engine())) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(engines) == 4 and all(engine is engines[0] for engine in engines)  # loaded once
    package = os.path.dirname(sys.modules[ocr.ENGINE_MODULE].__file__)
    for part in (engines[0].text_det, engines[0].text_rec):  # each holds an ONNX Runtime session wrapper
        wrapper = next(v for v in vars(part).values() if hasattr(v, "session"))
        assert wrapper.session.get_providers() == ["CPUExecutionProvider"]
    models = [os.path.join(package, "models", name) for name in os.listdir(os.path.join(package, "models"))]
    assert models and all(os.path.getsize(path) > 100_000 for path in models)  # in the wheel: no download


def test_recognise_reads_a_title_then_each_column_where_it_was_drawn():
    needs_ocr()
    image, drawn = draw([(40, 40, [TITLE]), (40, 140, LEFT), (560, 140, RIGHT)])
    lines = recognise(image)
    expected = " ".join([TITLE, *LEFT, *RIGHT])
    assert recovered(expected, " ".join(l.text for l in lines)) >= 0.95
    assert len(lines) == len(drawn)
    for found, (text, box) in zip(lines, drawn):
        assert recovered(text, found.text) >= 0.75, (found, text)
        assert overlaps(found.box, box), (found, box)
        assert 0.5 <= found.confidence <= 1.0


def test_transparent_and_16_bit_images_are_read_as_dark_text_on_white():
    from PIL import Image, ImageDraw

    clear = Image.new("RGBA", (40, 20), (0, 0, 0, 0))  # black, fully transparent: a blank page
    ImageDraw.Draw(clear).rectangle((5, 5, 15, 15), fill=(0, 0, 0, 255))  # the "ink"
    flat = ocr._rgb(clear)
    assert flat.mode == "RGB" and flat.getpixel((30, 10)) == (255, 255, 255) and flat.getpixel((10, 10)) == (0, 0, 0)
    deep = Image.new("I;16", (40, 20), 60000)
    ImageDraw.Draw(deep).rectangle((5, 5, 15, 15), fill=1000)
    flat = ocr._rgb(deep)
    assert flat.mode == "RGB" and flat.getpixel((30, 10)) == (255, 255, 255) and flat.getpixel((10, 10)) == (0, 0, 0)
