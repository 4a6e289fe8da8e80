"""What OCR costs and recovers: a dense A4 page of known text, as a 300-dpi image and as a
scanned PDF page (an image and no text layer, rendered again at the parser's
:data:`~beam_chunking.parsers.pdf_ocr.RENDER_DPI`).

Prints, for each, the share of the drawn words recovered in order and the wall and CPU seconds
per page (the engine loaded first; best of ``--rounds``). Needs the ``ocr`` extra and a TrueType
font (DejaVu, as Debian ships it).

    python bench/ocr.py --rounds 2
"""
from __future__ import annotations

import argparse
import difflib
import io
import os
import random
import time

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf"
WORDS = ("the of chunking document page text model retrieval index offset section paragraph column scanner "
         "image recognition pipeline worker bundle output table manifest strategy").split()


def page_image():
    """An A4 page at 300 dpi: 11 pt DejaVu Serif lines of 11 words, 2.5 cm margins."""
    from PIL import Image, ImageDraw, ImageFont

    rng = random.Random(7)
    font = ImageFont.truetype(FONT, 46)  # 11 pt at 300 dpi
    page = Image.new("L", (2480, 3508), 255)
    pen = ImageDraw.Draw(page)
    drawn = []
    for y in range(300, 3508 - 300, 64):
        line = " ".join(rng.choice(WORDS) for _ in range(11))
        pen.text((250, y), line, font=font, fill=0)
        drawn.append(line)
    return page, " ".join(drawn)


def recovered(want: str, got: str) -> float:
    """The share of ``want``'s words found in ``got`` in the same order."""
    a, b = want.split(), got.split()
    return sum(m.size for m in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()) / len(a)


def timed(call, rounds: int):
    best = None
    for _ in range(rounds):
        wall, cpu = time.perf_counter(), time.process_time()
        out = call()
        spent = (time.perf_counter() - wall, time.process_time() - cpu)
        best = spent if best is None or spent[0] < best[0] else best
    return out, best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    from fpdf import FPDF
    from PIL import Image

    from beam_chunking.parsers.ocr import recognise
    from beam_chunking.parsers.pdf import parse_pdf
    from beam_chunking.parsers.pdf_ocr import RENDER_DPI
    from beam_chunking.types import Document

    page, text = page_image()
    recognise(Image.new("L", (200, 200), 255))  # the engine, loaded once
    lines, (wall, cpu) = timed(lambda: recognise(page), args.rounds)
    print(f"image, 300 dpi: {recovered(text, ' '.join(l.text for l in lines)):.1%} of {len(text.split())} words "
          f"in order, {wall:.1f} s wall, {cpu:.1f} s CPU per page")
    buffer = io.BytesIO()
    page.save(buffer, format="PNG")
    pdf = FPDF(unit="pt", format="A4")
    pdf.add_page()
    pdf.image(buffer, x=0, y=0, w=pdf.w, h=pdf.h)
    doc = Document("scan", "scan.pdf", bytes(pdf.output()), "application/pdf")
    parsed, (wall, cpu) = timed(lambda: parse_pdf(doc, ocr="auto"), args.rounds)
    print(f"scanned PDF page, rendered at {RENDER_DPI} dpi: {recovered(text, parsed.text):.1%} of the words in order, "
          f"{wall:.1f} s wall, {cpu:.1f} s CPU per page (confidence {parsed.metadata.get('ocr_confidence')})")
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
