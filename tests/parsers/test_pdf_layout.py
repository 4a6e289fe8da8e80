"""PDF layout: paragraphs, columns, page turns, headings and boxes, on typeset PDFs."""
from __future__ import annotations

import random

import pytest

from beam_chunking.parsers.pdf import parse_pdf
from beam_chunking.parsers.pdf_lines import Line
from beam_chunking.parsers.pdf_paragraphs import blocks
from beam_chunking.strategies import RecursiveChunker, SentenceChunker
from beam_chunking.strategies.base import document_outcome
from tests.parsers.fixtures import check_sections, document
from tests.parsers.typeset import LAYOUTS, article, chromium_pdf

WORDS = ("river stone garden window lantern harbour meadow valley engine signal archive"
         " pattern shelter orchard compass ribbon canyon mirror saddle thunder beacon"
         " quarry falcon timber glacier velvet marble copper willow harvest").split()


def sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(6, 16))]
    return " ".join(words).capitalize() + "."


def paragraphs(count: int, seed: int = 3):
    rng = random.Random(seed)
    return [" ".join(sentence(rng) for _ in range(rng.randint(1, 6))) for _ in range(count)]


def parse(data: bytes, **kwargs):
    kwargs.setdefault("ocr", "never")
    return parse_pdf(document("typeset.pdf", data), **kwargs)


def blocks_of(doc):
    return [" ".join(p.split()) for p in doc.text.split("\n\n")]


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_typeset_paragraphs_come_back_whole_over_page_and_column_turns(layout):
    paras = paragraphs(40)
    doc = parse(chromium_pdf(article([("h1", "Field notes")] + [("p", p) for p in paras], layout)))
    check_sections(doc)
    assert blocks_of(doc) == ["Field notes", *paras]
    assert doc.sections[0].heading_path == ("Field notes",)
    assert doc.metadata["pdf_pages"] > 1
    pages = {box.page for box in doc.boxes}
    assert pages == set(range(1, doc.metadata["pdf_pages"] + 1))


def test_bold_headings_in_the_body_size_nest_below_the_sized_ones():
    paras = paragraphs(5, seed=8)
    # h4 is set bold in the body's size; a bold sentence and a bold run-in label are no headings.
    blocks = [("h1", "Guide"), ("p", paras[0]), ("h4", "Install from source"), ("p", paras[1]),
              ("p", "<b>Never run the installer twice.</b>"), ("p", paras[2]),
              ("p", "<b>Note:</b>"), ("p", paras[3]), ("h4", "Use"), ("p", paras[4])]
    page = article([(tag, "@") for tag, _ in blocks], "plain")
    for tag, text in blocks:
        page = page.replace("@", text if text.startswith("<b>") else text, 1)
    doc = parse(chromium_pdf(page))
    got = [(s.heading_path, doc.text[s.start:s.end].split("\n\n")[1][:30]) for s in doc.sections]
    assert got == [(("Guide",), paras[0][:30]), (("Guide", "Install from source"), paras[1][:30]),
                   (("Guide", "Use"), paras[4][:30])]
    assert "Never run the installer twice." in doc.text and "Note:" in doc.text


def test_right_to_left_paragraphs_come_back_whole_with_boxes_as_drawn():
    first = "שלום עולם זהו משפט ארוך בעברית שנועד לבדוק את סדר הקריאה של הטקסט. " * 12
    second = "פסקה שנייה עם מילים אחרות לגמרי כדי שנדע איפה היא מתחילה ונגמרת. " * 10
    page = (f"<!doctype html><html dir=rtl lang=he><head><meta charset=utf-8></head><body style='font:12pt sans-serif'>"
            f"<p>{first}</p><p>{second}</p><p style='text-indent:2em'>{first}</p></body></html>")
    doc = parse(chromium_pdf(page))
    assert blocks_of(doc) == [first.strip(), second.strip(), first.strip()]
    width = 612  # Letter or A4: both are wider than any right edge below
    edge = max(box.x1 for box in doc.boxes)
    assert all(box.x0 < box.x1 <= width for box in doc.boxes)
    # Set against the right edge, but for the indented first line of the third paragraph.
    assert [round(edge - box.x1) for box in doc.boxes if edge - box.x1 > 2] == [24]


@pytest.mark.parametrize("rotation", [90, 180, 270])
def test_a_turned_page_reads_as_upright_and_its_boxes_cover_the_text_as_shown(rotation):
    import io

    import pypdfium2

    pdf = fpdf_doc()
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    paras = paragraphs(3, seed=1)
    for p in paras:
        pdf.multi_cell(170, 6, p)
        pdf.ln(4)
    turned = pypdfium2.PdfDocument(bytes(pdf.output()))
    turned[0].set_rotation(rotation)
    buf = io.BytesIO()
    turned.save(buf)
    doc = parse(buf.getvalue())
    assert blocks_of(doc) == paras
    # Each line's box, on the page as a viewer renders it (turned), holds ink.
    image = pypdfium2.PdfDocument(buf.getvalue())[0].render(scale=1).to_pil().convert("L")
    for box in doc.boxes:
        assert 0 <= box.x0 < box.x1 <= image.width and 0 <= box.y0 < box.y1 <= image.height
        crop = image.crop((int(box.x0), int(box.y0), int(box.x1) + 1, int(box.y1) + 1))
        assert crop.getextrema()[0] < 100, box  # some dark pixels


def test_headings_by_size_without_an_outline_nest_by_size():
    paras = paragraphs(6, seed=5)
    blocks = [("h1", "Guide"), ("p", paras[0]), ("h2", "Install"), ("p", paras[1]), ("h3", "From source"),
              ("p", paras[2]), ("h2", "Use"), ("p", paras[3])]
    doc = parse(chromium_pdf(article(blocks, "plain")))
    got = [(s.heading_path, doc.text[s.start:s.end].split("\n\n")[1]) for s in doc.sections]
    assert got == [(("Guide",), paras[0]), (("Guide", "Install"), paras[1]),
                   (("Guide", "Install", "From source"), paras[2]), (("Guide", "Use"), paras[3])]


def test_a_chunk_flows_over_a_page_turn_unless_page_boundaries_is_hard():
    doc = parse(chromium_pdf(article([("p", p) for p in paragraphs(60, seed=8)], "justified")))
    soft = document_outcome(SentenceChunker(max_chunk_size=200), doc).chunks
    assert any(c.metadata["page_end"] > c.metadata["page"] for c in soft)
    hard = document_outcome(SentenceChunker(max_chunk_size=200, page_boundaries="hard"), doc).chunks
    assert all(c.metadata["page_end"] == c.metadata["page"] for c in hard)
    assert all({b["page"] for b in c.metadata["boxes"]} == {c.metadata["page"]} for c in hard)
    for chunks in (soft, hard):
        assert all(c.text == doc.text[c.start:c.end] for c in chunks)
    words = lambda chunks: {w for c in chunks for w in c.text.split()}
    assert words(hard) == words(soft) == set(doc.text.split())


def test_boxes_cover_each_chunk_on_its_pages():
    doc = parse(chromium_pdf(article([("p", p) for p in paragraphs(30, seed=11)], "columns")))
    chunks = document_outcome(RecursiveChunker(max_chunk_size=300, overlap=0), doc).chunks
    for chunk in chunks:
        boxes = chunk.metadata["boxes"]
        assert boxes and chunk.metadata["page"] == min(b["page"] for b in boxes)
        assert chunk.metadata["page_end"] == max(b["page"] for b in boxes)
        for b in boxes:
            assert 0 <= b["x0"] < b["x1"] <= 700 and 0 <= b["y0"] < b["y1"] <= 900
    # Two columns: some chunk's regions sit in the right half of a page.
    assert any(b["x0"] > 250 for c in chunks for b in c.metadata["boxes"])


def fpdf_doc():
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_auto_page_break(True, margin=20)
    return pdf


def test_hyphenated_line_ends_are_joined_and_compounds_keep_their_hyphen():
    pdf = fpdf_doc()
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    for y, line in enumerate(["The package distri-", "bution is one well-", "Known case of a long", "line."]):
        pdf.text(20, 20 + 6 * y, line)
    doc = parse(bytes(pdf.output()))
    assert doc.text.startswith("The package distribution is one well-Known case of a long")


def test_code_keeps_its_lines_and_becomes_a_code_section():
    pdf = fpdf_doc()
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    pdf.multi_cell(0, 6, "Run these commands to set it up, one after the other, as root.")
    pdf.set_font("Courier", size=10)
    for line in ["$ apt-get update", "$ apt-get install mc"]:
        pdf.cell(0, 5, line, new_x="LMARGIN", new_y="NEXT")
    doc = parse(bytes(pdf.output()))
    assert [(s.kind, doc.text[s.start:s.end]) for s in doc.sections] == [
        ("text", "Run these commands to set it up, one after the other, as root."),
        ("code", "$ apt-get update\n$ apt-get install mc")]


def test_footnotes_at_a_page_foot_go_after_the_paragraph_they_interrupt():
    pdf = fpdf_doc()
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    long = " ".join(paragraphs(3, seed=2))
    lines = pdf.multi_cell(170, 6, long, dry_run=True, output="LINES")
    # Ragged lines drawn one by one: each is full (its next word did not fit), as a typesetter
    # leaves them, and the paragraph runs over the page turn with a footnote between.
    for k, line in enumerate(lines):
        if k == 5:
            pdf.set_font("Helvetica", size=7)
            pdf.text(20, 280, "1. A note set in small print at the foot of the page.")
            pdf.add_page()
            pdf.set_font("Helvetica", size=11)
        pdf.text(20, 200 + 6 * k if k < 5 else 20 + 6 * k, line)
    doc = parse(bytes(pdf.output()))
    assert blocks_of(doc) == [long, "1. A note set in small print at the foot of the page."]


def _interrupted_by_a_figure(caption: str, caption_size: float, top_of_next_page: bool, ends: str = ""):
    """A paragraph drawn line by line (each full, as a typesetter leaves them) with a drawn
    figure and its caption between its 5th and 6th lines."""
    pdf = fpdf_doc()
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    long = " ".join(paragraphs(8, seed=4)) + ends
    lines = pdf.multi_cell(170, 6, long, dry_run=True, output="LINES")
    y = 30.0
    for k, line in enumerate(lines):
        if k == 5:
            if top_of_next_page:
                pdf.add_page()
                y = 20.0
            pdf.rect(60, y + 4, 90, 50)  # the figure
            pdf.set_font("Helvetica", size=caption_size)
            pdf.text(60, y + 62, caption)
            pdf.set_font("Helvetica", size=11)
            y += 72
        pdf.text(20, y, line)
        y += 6
    return long, parse(bytes(pdf.output()))


@pytest.mark.parametrize("top_of_next_page", [False, True])
@pytest.mark.parametrize("caption, size", [("Figure 2: The valley seen from the quarry.", 11),
                                           ("The valley seen from the quarry, in small print.", 8)])
def test_a_caption_goes_after_the_paragraph_it_interrupts(caption, size, top_of_next_page):
    long, doc = _interrupted_by_a_figure(caption, size, top_of_next_page)
    check_sections(doc)
    assert blocks_of(doc) == [long, caption]


def test_a_caption_after_a_finished_sentence_stays_in_place():
    # The paragraph before the figure ends a sentence: nothing says the text after it is
    # the same paragraph, so the caption keeps its place between the two.
    pdf = fpdf_doc()
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    first, second = paragraphs(2, seed=6)
    pdf.multi_cell(170, 6, first)
    pdf.rect(60, pdf.get_y() + 4, 90, 50)
    pdf.set_y(pdf.get_y() + 58)
    pdf.multi_cell(170, 6, "Figure 1: A map.")
    pdf.set_y(pdf.get_y() + 6)
    pdf.multi_cell(170, 6, second)
    doc = parse(bytes(pdf.output()))
    assert blocks_of(doc) == [first, "Figure 1: A map.", second]


def test_bookmarks_match_the_page_text_tolerantly_and_never_misfile_a_body():
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    marks = [("Getting_started", "1 Getting started", "First body."), ("Equal axes!", "2.1 EQUAL AXES", "Second body."),
             ("Not shown anywhere", None, "Third body, under a bookmark the page does not show.")]
    for mark, shown, body in marks:
        pdf.add_page()
        pdf.start_section(mark)
        if shown:
            pdf.set_font("Helvetica", "B", 16)
            pdf.cell(0, 10, shown, new_x="LMARGIN", new_y="NEXT")
            pdf.set_font("Helvetica", size=11)
        pdf.multi_cell(0, 6, body)
    doc = parse(bytes(pdf.output()))
    got = [(s.heading_path, doc.text[s.start:s.end]) for s in doc.sections]
    assert got == [(("Getting_started",), "1 Getting started\n\nFirst body."),
                   (("Equal axes!",), "2.1 EQUAL AXES\n\nSecond body."),
                   (("Not shown anywhere",), "Third body, under a bookmark the page does not show.")]


def test_a_list_item_keeps_its_wrapped_line_whatever_the_font_of_its_marker_and_code():
    pdf = fpdf_doc()
    pdf.add_page()
    items = [("mime/globs", "maps names to the types they are given by, a first long line that is", "wrapped."),
             ("mime/magic", "maps contents to types.", None)]
    y = 30
    for code, text, wrapped in items:
        pdf.set_font("Helvetica", size=7)
        pdf.text(20, y, "-")  # the marker, set smaller
        pdf.set_font("Courier", size=10)
        pdf.text(25, y, code)  # inline code opening the line
        pdf.set_font("Helvetica", size=11)
        pdf.text(25 + pdf.get_string_width(" ") + 22, y, text)
        if wrapped:
            y += 6
            pdf.text(25, y, wrapped)
        y += 8
    doc = parse(bytes(pdf.output()))
    assert [s.kind for s in doc.sections] == ["text"]
    assert blocks_of(doc) == ["- mime/globs maps names to the types they are given by, a first long line that is wrapped.",
                              "- mime/magic maps contents to types."]


def test_kept_running_headers_do_not_cut_the_paragraph_they_interrupt():
    pdf = fpdf_doc()
    pdf.set_auto_page_break(False)
    pdf.set_font("Helvetica", size=11)
    long = " ".join(paragraphs(4, seed=6))
    pdf.add_page()
    lines = pdf.multi_cell(170, 6, long, dry_run=True, output="LINES")
    per_page = (len(lines) + 2) // 3
    for n in range(3):
        if n:
            pdf.add_page()
        pdf.text(20, 12, f"Field manual, page {n + 1}")
        for k, line in enumerate(lines[n * per_page:(n + 1) * per_page]):
            pdf.text(20, 30 + 6 * k, line)
    data = bytes(pdf.output())
    assert blocks_of(parse(data)) == [long]
    kept = parse(data, keep=frozenset({"page_furniture"}))
    assert blocks_of(kept) == ["Field manual, page 1", long, "Field manual, page 2", "Field manual, page 3"]


def raw_pdf(content: bytes, size=(612, 792)) -> bytes:
    """A one-page PDF with this content stream, Helvetica as /F1 (written by hand, as some
    producers do: text sized by its matrix)."""
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %d %d] /Resources << /Font << /F1 5 0 R >> >> "
            b"/Contents 4 0 R >>" % size,
            b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for k, obj in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % k + obj + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1) + b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    return bytes(out)


def test_text_sized_by_its_matrix_reads_as_text_sized_by_its_font():
    body = [b"The committee met on a grey morning to discuss the state of the harbour and the",
            b"price of grain and the long quarrel over the bridge tolls which nobody expected to",
            b"settle soon, and so they adjourned until the spring when the roads would be dry."]
    docs = []
    for title, text in [(b"/F1 24 Tf 1 0 0 1 72 720 Tm", b"/F1 11 Tf 1 0 0 1 72 680 Tm 13.75 TL"),
                        (b"/F1 1 Tf 24 0 0 24 72 720 Tm", b"/F1 1 Tf 11 0 0 11 72 680 Tm 1.25 TL")]:
        stream = b"BT " + title + b" (Harbour Report) Tj ET\nBT " + text + b"\n"
        stream += b"\n".join(b"(" + line + b") Tj T*" for line in body) + b"\nET"
        docs.append(parse(raw_pdf(stream)))
    assert [[(s.heading_path, doc.text[s.start:s.end]) for s in doc.sections] for doc in docs] == [[
        (("Harbour Report",), "Harbour Report\n\n" + " ".join(line.decode() for line in body))]] * 2


def test_a_superscript_stays_in_its_paragraph():
    text = paragraphs(2, seed=9)
    page = (f"<p>{text[0]} The marker sits here<sup>12</sup> and the sentence goes on after the marker for a "
            f"while longer so that it wraps.</p><p>{text[1]}</p>")
    doc = parse(chromium_pdf(f"<!doctype html><html lang=en><body style='font:11pt serif'>{page}</body></html>"))
    assert blocks_of(doc) == [f"{text[0]} The marker sits here 12 and the sentence goes on after the marker for a "
                              "while longer so that it wraps.", text[1]]


def line(text: str, x0: float, baseline: float, x1: float, size: float = 11.0) -> Line:
    """A line as :func:`~beam_chunking.parsers.pdf_lines.page_lines` gives it (6 pt a word)."""
    return Line(text, x0, baseline - size, x1, baseline + 0.25 * size, baseline, size, False, False,
                6.0 * len(text.split(" ", 1)[0]))


def test_an_initial_opens_a_list_item_only_in_a_list():
    full = line("The committee met on a grey morning to discuss the harbour and the grain", 40, 100, 500)
    rest = [line("J. R. R. Tolkien wrote the book that everyone on the committee had read", 40, 114, 500),
            line("as children, long ago.", 40, 128, 160)]
    assert blocks_of_lines([[full, *rest]]) == [" ".join(x.text for x in [full, *rest])]
    items = [line("a) the first item of a list", 40, 100, 200), line("b) the second item", 40, 114, 150)]
    assert blocks_of_lines([items]) == [x.text for x in items]


def test_pages_of_two_sizes_keep_their_own_column_edges():
    wide = [line(f"Landscape page words that wrap across the wide page, line {k}.", 40, 100 + 14 * k, 800)
            for k in range(4)] + [line("The end.", 40, 156, 90)]
    narrow = [line(f"Portrait page words that wrap on the narrow page, line {k}.", 40, 100 + 14 * k, 555)
              for k in range(4)] + [line("The end.", 40, 156, 90)]
    got = blocks_of_lines([wide, narrow], widths=[842, 595])
    assert got == [" ".join(x.text for x in wide), " ".join(x.text for x in narrow)]


def blocks_of_lines(pages, widths=None):
    return [block.text_and_spans()[0] for block in blocks(pages, widths)]


def test_characters_outside_the_bmp_leave_the_boxes_in_place():
    from tests.parsers.ocr_images import font_path
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.add_font("Sans", fname=font_path())
    pdf.set_font("Sans", size=11)
    lines = ["Symbols \U00010300\U00010301 lead the first line", "short", "A second paragraph on its own line."]
    for k, line in enumerate(lines):
        pdf.text(20, 30 + 20 * k, line)
    doc = parse(bytes(pdf.output()))
    tops = [box.y0 for box in doc.boxes]
    assert [doc.text[b.start:b.end] for b in doc.boxes] == lines and tops == sorted(tops)
    assert all(b - a > 40 for a, b in zip(tops, tops[1:]))  # 20 mm apart, as drawn


def test_a_compound_split_at_a_line_end_keeps_its_hyphen_where_the_document_spells_it_so():
    pdf = fpdf_doc()
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    for y, text in enumerate(["A well-known fact is that the river runs north and the well-",
                              "known road runs along it to the distri-", "bution yard."]):
        pdf.text(20, 20 + 6 * y, text)
    doc = parse(bytes(pdf.output()))
    assert doc.text.startswith("A well-known fact is that the river runs north and the well-known road runs along "
                               "it to the distribution yard.")
