"""``beam-chunking inspect``: the text report, the HTML report, and the HTML in a real browser."""
import html.parser
import json
import os
import re
import shutil
import socket
import subprocess
import threading

import numpy as np
import pytest

from beam_chunking.pipelines.inspect import inspect_command
from beam_chunking.pipelines.inspection import escape_text, inspect_output, percentiles
from beam_chunking.pipelines.run import run
from beam_chunking.transforms.manifest import read_table

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")
#: A file name that is markup: the report must show it as text.
EVIL_PDF = "x<img src=x onerror=alert(1)>.pdf"
BOOK = """# Contents

Chapter one ........ 1
Chapter two ........ 9

# Chapter one

It was a bright cold day in April. The clocks were striking thirteen.

# Chapter two

The second chapter is short, and then the book ends.

# Index

April, 1; clocks, 1
"""


@pytest.fixture(scope="module")
def output(tmp_path_factory):
    """An output of the examples plus two broken PDFs, a zip, a book (Markdown routed to the
    book template, which drops its contents and index) and a text of markup."""
    root = tmp_path_factory.mktemp("inspect")
    src, out = root / "src", root / "out"
    shutil.copytree(EXAMPLES, src)
    (src / "broken.pdf").write_bytes(b"%PDF-1.4 junk")
    (src / EVIL_PDF).write_bytes(b"%PDF-1.4 junk")
    (src / "archive.zip").write_bytes(b"PK\x03\x04 not really")
    (src / "book.md").write_text(BOOK)
    (src / "tags.txt").write_text("<script>alert('x')</script> & <b>bold</b>\n")
    spec = root / "spec.yaml"
    spec.write_text("strategy: {name: recursive, max_chunk_size: 400, overlap: 40}\n"
                    "routes:\n  text/markdown: {name: book}\n")
    run(["--input", f"{src}/*", "--output", str(out), "--config", str(spec)])
    return str(out)


def test_percentiles_are_nearest_rank_and_observed():
    assert percentiles(list(range(1, 101))) == {"p5": 5, "p50": 50, "p95": 95, "max": 100}
    assert percentiles([7]) == {"p5": 7, "p50": 7, "p95": 7, "max": 7}
    assert percentiles([]) == {"p5": None, "p50": None, "p95": None, "max": None}


def test_escape_text_makes_one_safe_line():
    assert escape_text("a\nb\tc\\d\x1b[31m\u202e") == "a\\nb\\tc\\\\d\\u001b[31m\\u202e"
    assert escape_text("abcdefghij", 5) == "abcd…"
    assert escape_text("a\nbcdef", 4) == "a\\n…"  # an escape is never cut in half


def test_inspection_matches_the_tables(output):
    ins = inspect_output(output, top=3)
    chunks = read_table(output, "chunks").to_pylist()
    chars = np.array([len(c["text"]) for c in chunks])
    tokens = np.array([c["token_count"] for c in chunks])
    assert ins.overall.chunks == len(chunks)
    assert ins.overall.characters == percentiles(chars) and ins.overall.characters["max"] == chars.max()
    assert ins.overall.tokens == percentiles(tokens)
    assert set(ins.by_strategy) == {"book", "recursive"}
    assert sum(s.chunks for s in ins.by_content_type.values()) == len(chunks)
    plain = [len(c["text"]) for c in chunks if c["content_type"] == "text/plain"]
    assert ins.by_content_type["text/plain"].characters == percentiles(plain)
    assert [x.characters for x in ins.smallest] == sorted(chars)[:3]
    assert [x.characters for x in ins.largest] == sorted(chars, reverse=True)[:3]
    assert ins.smallest[0].text.startswith("<script>")
    assert ins.statuses == {"ok": 7, "failed": 3}
    # the two truncated PDFs share a reason although their names differ
    groups = {(g.stage, g.error_type): g for g in ins.failure_groups}
    assert groups["parse", "ParseError"].count == 2 and groups["parse", "UnsupportedContentType"].count == 1
    assert groups["parse", "ParseError"].example_uri.endswith((".pdf",))
    assert [(os.path.basename(u), labels) for u, labels, _ in ins.dropped] == [
        ("book.md", ["table of contents", "index"])]
    assert ins.dropped[0][2] > 0


def test_text_report(output, capsys):
    assert inspect_command([output, "--max-chunk-size", "300", "--max-chunk-tokens", "50"]) == 0
    text = capsys.readouterr().out
    ins = inspect_output(output)
    assert "documents: 10 in, 7 ok, 0 empty, 3 failed" in text
    assert f"chunks: {ins.overall.chunks}" in text
    for name in ("text/plain", "text/markdown", "text/html", "book", "recursive"):
        assert re.search(rf"^\s+{re.escape(name)}\s+\d+", text, re.M), name
    s = ins.overall
    assert re.search(rf"^\s+all\s+{s.chunks}\s+" + r"\s+".join(str(v) for v in s.characters.values()), text, re.M)
    for x in ins.smallest + ins.largest:
        assert x.chunk_id in text
    over = sum(int((c > 300).sum()) for c, _ in ins.sizes.values())
    assert f"chunks above 300 characters: {over}" in text and "chunks above 50 tokens:" in text
    assert "failures: 3 documents, 2 reasons" in text
    assert re.search(r"2 x parse ParseError: .*no %%EOF trailer", text)
    assert "1 x parse UnsupportedContentType" in text
    assert "dropped on purpose: 1 documents" in text and "table of contents: 1 documents" in text
    assert "\x1b" not in text


def test_extremes_name_their_file(output, capsys):
    assert inspect_command([output, "--top", "2"]) == 0
    text = capsys.readouterr().out
    ins = inspect_output(output, top=2)
    for x in ins.smallest + ins.largest:
        assert x.uri and re.search(rf"^\s+{re.escape(x.chunk_id)}\s+{re.escape(x.uri.rsplit('/', 1)[-1][:29])}", text, re.M)


def test_long_content_types_stay_apart():
    from beam_chunking.pipelines.inspect import _short

    office = ["application/vnd.openxmlformats-officedocument.wordprocessingml.document",
              "application/vnd.openxmlformats-officedocument.presentationml.presentation",
              "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"]
    shown = [_short(t) for t in office]
    assert len(set(shown)) == 3 and all(len(s) == 40 for s in shown), shown
    assert _short("text/plain") == "text/plain"


def test_alike_failures_group_whatever_bytes_or_names_they_name():
    from beam_chunking.pipelines.inspection import _group_failures

    failures = [
        ("/in/a.txt", "parse", "DecodeError", "a.txt: invalid UTF-8 at byte offset 12 (b'\\xff': invalid start byte); fix"),
        ("/in/b.txt", "parse", "DecodeError", "/in/b.txt: invalid UTF-8 at byte offset 1,034 (b'\\xe9 ': invalid "
                                                "continuation byte); fix"),
        ("/in/c.txt", "parse", "DecodeError", "c.txt: invalid UTF-8 at byte offset 0x1f (b')': odd); fix"),
        ("/in/d.pdf", "parse", "ParseError", "d.pdf: no %%EOF trailer"),
    ]
    groups = _group_failures(failures)
    assert [(g.error_type, g.count) for g in groups] == [("DecodeError", 3), ("ParseError", 1)]


def test_html_without_its_extra_fails_before_printing_anything(output, capsys, monkeypatch, tmp_path):
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if not installed: its import fails
    assert inspect_command([output, "--html", str(tmp_path / "r.html")]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "beam-chunking[report]" in captured.err and captured.err.count("\n") == 1
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("make", ["missing", "no manifest", "bad manifest"])
def test_a_missing_or_invalid_output_is_exit_2_with_one_line(tmp_path, capsys, make):
    folder = tmp_path / "out"
    if make != "missing":
        folder.mkdir()
    if make == "bad manifest":
        (folder / "_manifest.json").write_text("{not json")
    assert inspect_command([str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("beam-chunking inspect: ") and str(folder) in err


def test_bad_usage_is_exit_2_with_one_line(capsys):
    assert inspect_command(["--top", "3"]) == 2
    assert inspect_command(["somewhere", "--no-such-flag"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and "--no-such-flag" in err


class _Page(html.parser.HTMLParser):
    """Tags, attributes and text of a page, as a browser's parser sees them."""

    def __init__(self):
        super().__init__()
        self.tags, self.attrs, self.text = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend((tag, k, v or "") for k, v in attrs)

    def handle_data(self, data):
        self.text.append(data)


@pytest.fixture(scope="module")
def report(output, tmp_path_factory):
    path = tmp_path_factory.mktemp("report") / "report.html"
    assert inspect_command([output, "--html", str(path), "--max-chunk-size", "300"]) == 0
    return str(path)


def test_the_report_is_self_contained_and_escapes_the_data(report, output):
    raw = open(report, encoding="utf-8").read()
    page = _Page()
    page.feed(raw)
    strategies = inspect_output(output).sizes
    assert page.tags.count("svg") == 2 * len(strategies)  # characters and tokens per strategy
    # nothing that could fetch: no script, link, img, iframe, object; no URL but in-page #ids
    assert not {"script", "link", "img", "iframe", "object", "embed", "base"} & set(page.tags)
    for tag, key, value in page.attrs:
        if key in ("src", "href", "xlink:href", "action", "srcset", "poster"):
            assert value.startswith("#"), (tag, key, value)
    assert not re.search(r"https?:|url\((?!#)|@import|//[a-z]", raw, re.I)
    # data stays text: the markup file name and chunk text are escaped, not parsed
    text = "".join(page.text)
    assert EVIL_PDF in text and "<script>alert('x')</script>" in text
    assert "&lt;img src=x" in raw and "&lt;script&gt;" in raw
    assert "table of contents" in text and "UnsupportedContentType" in text


def test_without_matplotlib_html_is_exit_2_naming_the_extra(output, tmp_path, capsys, monkeypatch):
    import builtins

    real = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.split(".")[0] == "matplotlib":
            raise ImportError("No module named 'matplotlib'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    assert inspect_command([output, "--html", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "beam-chunking[report]" in err


# --- the report in a real headless browser -------------------------------------------------

CHROMIUM = shutil.which("chromium")
#: Requests Chromium makes by itself whatever the page (component updates, sign-in, network
#: time). Recorded, not counted: a page's own request goes to any other host. The control test
#: below proves that a page's request is seen.
BROWSER_HOSTS = {"update.googleapis.com", "accounts.google.com", "clients2.google.com", "clients1.google.com",
                 "android.clients.google.com", "redirector.gvt1.com", "edgedl.me.gvt1.com",
                 "optimizationguide-pa.googleapis.com", "safebrowsing.googleapis.com"}
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (.ci/run installs it "
                                    "with apt-get); the browser checks of the HTML report are skipped")


class _Proxy:
    """A proxy on 127.0.0.1 that records every request line it is sent and answers none."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.requests = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            conn.settimeout(2)
            try:
                line = conn.recv(4096).split(b"\r\n", 1)[0].decode("latin-1")
            except OSError:
                line = "?"
            # Chromium opens spare connections to its proxy and closes some unused: a
            # connection that sent nothing asked for nothing.
            if line:
                self.requests.append(line)
            conn.close()

    def hosts(self):
        found = set()
        for line in self.requests:
            target = line.split(" ")[1] if line.count(" ") >= 2 else line
            found.add(re.sub(r"^[a-z]+://", "", target).split("/")[0].rsplit(":", 1)[0])
        return found

    def close(self):
        self.sock.close()


def _chromium(page, *flags, proxy=None, profile):
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
           f"--user-data-dir={profile}", "--no-first-run", "--disable-background-networking",
           "--disable-component-update", "--disable-extensions", "--disable-sync",
           "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", *flags]
    if proxy is not None:
        cmd += [f"--proxy-server=http://127.0.0.1:{proxy.port}", "--proxy-bypass-list=<-loopback>"]
    done = subprocess.run([*cmd, "file://" + os.path.abspath(page)], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    return done.stdout.decode("utf-8")


def _page_requests(page, tmp_path):
    proxy = _Proxy()
    try:
        dom = _chromium(page, "--dump-dom", proxy=proxy, profile=tmp_path / "profile")
    finally:
        proxy.close()
    return dom, proxy.hosts() - BROWSER_HOSTS, proxy.requests


@needs_chromium
def test_control_a_page_that_fetches_is_caught(tmp_path):
    page = tmp_path / "fetches.html"
    page.write_text('<!DOCTYPE html><p>x</p><img src="http://example.com/a.png">'
                    '<link rel="stylesheet" href="https://fonts.example.org/x.css">')
    _, hosts, _ = _page_requests(page, tmp_path)
    assert {"example.com", "fonts.example.org"} <= hosts


@needs_chromium
def test_the_report_renders_in_chromium_without_the_network(report, output, tmp_path):
    dom, hosts, requests = _page_requests(report, tmp_path)
    assert hosts == set(), json.dumps(requests, indent=1)
    page = _Page()
    page.feed(dom)
    assert "Chunk report" in "".join(page.text)
    n = 2 * len(inspect_output(output).sizes)
    assert page.tags.count("svg") == n and page.tags.count("figure") == n
    assert page.tags.count("path") > 50 * n  # the bars, axes and glyphs are drawn
    assert "img" not in page.tags and "script" not in page.tags  # the markup file name stayed text
    assert page.tags.count("table") >= 5


@needs_chromium
def test_the_report_screenshot_shows_the_plots(report, tmp_path):
    from PIL import Image

    shot = tmp_path / "shot.png"
    _chromium(report, f"--screenshot={shot}", "--window-size=1200,1400", "--hide-scrollbars",
              profile=tmp_path / "profile")
    image = Image.open(shot).convert("RGB")
    assert image.size == (1200, 1400)
    pixels = np.asarray(image).reshape(-1, 3)
    colours = {tuple(p) for p in pixels[:: 7]}
    assert len(colours) > 50  # text, tables and plots, not a blank or single-colour page
    # the histograms' bar colour (#4e79a7) covers a visible area
    bars = np.all(np.abs(pixels.astype(int) - (0x4E, 0x79, 0xA7)) < 12, axis=1).mean()
    assert bars > 0.005, bars


# --- chunks on their pages: boxes drawn over page thumbnails ----------------------------------

PARAGRAPH = ("Paragraph {p} of page {n} says something worth a chunk of its own, long enough to wrap "
             "over two lines of the page so that its box is a block and not a single line.")


class _Overlays(html.parser.HTMLParser):
    """Per thumbnail (its ``alt``): the ``data:`` image and the rectangles drawn over it, as
    ``(chunk index, x, y, width, height)``; and the report's one-line notes."""

    def __init__(self):
        super().__init__()
        self.images, self.rects, self.notes = {}, {}, []
        self._page = self._chunk = None
        self._in_note = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "img":
            self._page = a["alt"]
            self.images[self._page] = a["src"]
            self.rects[self._page] = []
        elif tag == "g" and "data-chunk" in a:
            self._chunk = int(a["data-chunk"])
        elif tag == "rect" and self._page is not None:
            self.rects[self._page].append((self._chunk, *(float(a[k]) for k in ("x", "y", "width", "height"))))
        elif tag == "p" and a.get("class") == "note":
            self._in_note = True
            self.notes.append("")

    def handle_endtag(self, tag):
        if tag == "p":
            self._in_note = False

    def handle_data(self, data):
        if self._in_note:
            self.notes[-1] += data


@pytest.fixture(scope="module")
def pdf_output(tmp_path_factory):
    """A run of four fpdf2 PDFs (the first with five pages) and a text file; returns
    ``(output, src)``."""
    from tests.parsers.fixtures import pdf_bytes

    root = tmp_path_factory.mktemp("pages")
    src, out = root / "src", root / "out"
    src.mkdir()
    pages = ["\n".join(PARAGRAPH.format(p=p, n=n) for p in (1, 2, 3)) for n in range(1, 6)]
    (src / "a.pdf").write_bytes(pdf_bytes(pages))
    for name in ("b-changed", "c-gone", "d-hidden"):
        (src / f"{name}.pdf").write_bytes(pdf_bytes([PARAGRAPH.format(p=1, n=name)]))
    (src / "notes.txt").write_text("Plain text has no geometry.\n")
    run(["--input", f"{src}/*", "--output", str(out), "--strategy", "recursive", "--max-chunk-size", "200",
         "--overlap", "0"])
    return str(out), src


@pytest.fixture(scope="module")
def pdf_report(pdf_output, tmp_path_factory):
    output, _ = pdf_output
    path = tmp_path_factory.mktemp("pages-report") / "report.html"
    assert inspect_command([output, "--html", str(path)]) == 0
    return str(path)


def _a4_points(src):
    import pypdfium2

    pdf = pypdfium2.PdfDocument(str(src / "a.pdf"))
    try:
        return [pdf[i].get_size() for i in range(len(pdf))]
    finally:
        pdf.close()


def test_the_report_draws_each_chunk_box_over_its_page(pdf_output, pdf_report):
    import base64
    import io

    from PIL import Image

    from beam_chunking.pipelines import report_pages

    output, src = pdf_output
    raw = open(pdf_report, encoding="utf-8").read()
    assert "Chunks on their pages" in raw
    found = _Overlays()
    found.feed(raw)
    uri = str(src / "a.pdf")
    # the first MAX_PAGES pages of a.pdf, then b-changed.pdf and c-gone.pdf; d-hidden.pdf is counted
    assert report_pages.MAX_PAGES == 4 and report_pages.MAX_DOCUMENTS == 3
    assert [alt for alt in found.images if alt.endswith(uri)] == [f"page {n} of {uri}" for n in (1, 2, 3, 4)]
    assert {alt.rsplit(" of ", 1)[1] for alt in found.images} == {uri, str(src / "b-changed.pdf"),
                                                                  str(src / "c-gone.pdf")}
    assert "1 more documents with boxes are not shown" in raw and "notes.txt" not in raw.split("Chunks on")[1]
    chunks = [c for c in read_table(output, "chunks").to_pylist() if c["uri"] == uri]
    sizes = _a4_points(src)
    for n in (1, 2, 3, 4):
        alt = f"page {n} of {uri}"
        assert found.images[alt].startswith("data:image/png;base64,")
        image = Image.open(io.BytesIO(base64.b64decode(found.images[alt].split(",", 1)[1]))).convert("L")
        assert image.width == report_pages.THUMB_WIDTH
        sx, sy = image.width / sizes[n - 1][0], image.height / sizes[n - 1][1]
        expected = sorted((c["chunk_index"], b["x0"] * sx, b["y0"] * sy, (b["x1"] - b["x0"]) * sx,
                           (b["y1"] - b["y0"]) * sy) for c in chunks for b in c["boxes"] if b["page"] == n)
        drawn = sorted(found.rects[alt])
        assert len(drawn) == len(expected) >= 3  # one rectangle per box of every chunk on the page
        for d, e in zip(drawn, expected):
            assert d[0] == e[0] and np.allclose(d[1:], e[1:], atol=0.11), (d, e)
        # the boxes cover the page's text: nearly every dark pixel of the thumbnail is inside one
        pixels = np.asarray(image)
        dark = pixels < 128
        inside = np.zeros_like(dark)
        for _, x, y, w, h in drawn:
            inside[max(0, int(y) - 1):int(y + h) + 2, max(0, int(x) - 1):int(x + w) + 2] = True
        assert dark.sum() > 500 and (dark & inside).sum() / dark.sum() > 0.98
    assert len(raw) < 400_000  # small thumbnails keep the report small
    # still nothing to fetch: the thumbnails are data: URIs
    page = _Page()
    page.feed(raw)
    for tag, key, value in page.attrs:
        if key in ("src", "href", "xlink:href", "action", "srcset", "poster"):
            assert value.startswith(("#", "data:image/png;base64,")), (tag, key, value[:80])
    markup = re.sub(r"data:image/png;base64,[^\"]*", "", raw)
    assert not re.search(r"https?:|url\((?!#)|@import|//[a-z]", markup, re.I)


def test_a_stale_source_is_one_line_not_a_failed_report(pdf_output, pdf_report, tmp_path):
    from tests.parsers.fixtures import pdf_bytes

    output, src = pdf_output
    (src / "b-changed.pdf").write_bytes(pdf_bytes(["Another text altogether."]))
    (src / "c-gone.pdf").unlink()
    path = tmp_path / "stale.html"
    assert inspect_command([output, "--html", str(path)]) == 0
    found = _Overlays()
    found.feed(path.read_text(encoding="utf-8"))
    notes = sorted(" ".join(n.split()) for n in found.notes)
    assert notes == [f"{src / 'b-changed.pdf'}: not drawn: the source file has changed since the run, so its "
                     "boxes would be wrong.",
                     f"{src / 'c-gone.pdf'}: not drawn: the source file is not readable any more "
                     "(FileNotFoundError)."]
    assert len([alt for alt in found.images if alt.endswith("a.pdf")]) == 4  # the others are still drawn


def test_without_pypdfium2_the_report_says_what_to_install(pdf_output, tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "pypdfium2", None)  # the import then fails
    path = tmp_path / "r.html"
    assert inspect_command([pdf_output[0], "--html", str(path)]) == 0
    found = _Overlays()
    found.feed(path.read_text(encoding="utf-8"))
    assert not found.images
    note = [n for n in found.notes if n.startswith(str(pdf_output[1] / "a.pdf"))]
    assert len(note) == 1 and "pypdfium2 is not installed" in note[0]
    assert 'pip install "beam-chunking[parsers]"' in note[0]


def test_a_run_without_boxes_has_no_pages_section(report):
    raw = open(report, encoding="utf-8").read()
    assert "Chunks on their pages" not in raw and "data:image" not in raw


def test_image_documents_are_drawn_in_pixels(tmp_path):
    """An image document's boxes are pixels of the image as displayed (EXIF rotation applied)."""
    import hashlib

    from PIL import Image, ImageDraw

    from beam_chunking.pipelines.report_pages import ChunkBox, PlacedDocument, pages_section

    image = Image.new("RGB", (800, 300), "white")
    ImageDraw.Draw(image).rectangle((100, 50, 500, 90), fill="black")
    path = tmp_path / "scan.png"
    image.save(path)
    doc = PlacedDocument("d", str(path), "image/png", hashlib.sha256(path.read_bytes()).hexdigest(),
                         ((1, (ChunkBox(0, 100, 50, 500, 90, "a line"), ChunkBox(1, 100, 150, 300, 190, "b"))),), 1)
    found = _Overlays()
    found.feed(pages_section([doc], 1))
    alt = f"page 1 of {path}"
    assert found.images[alt].startswith("data:image/png;base64,")
    assert found.rects[alt] == [(0, 50.0, 25.0, 200.0, 20.0), (1, 50.0, 75.0, 100.0, 20.0)]  # scaled by 400/800
    text = tmp_path / "notes.txt"
    text.write_text("x")
    found = _Overlays()
    found.feed(pages_section([PlacedDocument("t", str(text), "text/plain", None, ((1, ()),), 1)], 1))
    assert found.notes == [f"{text}: not drawn: text/plain is not a PDF or an image."]


@needs_chromium
def test_the_report_screenshot_shows_boxes_over_the_page_text(pdf_report, tmp_path):
    from PIL import Image

    from beam_chunking.pipelines.report_pages import PALETTE

    _, hosts, requests = _page_requests(pdf_report, tmp_path)
    assert hosts == set(), json.dumps(requests, indent=1)
    shot = tmp_path / "pages.png"
    _chromium(pdf_report, f"--screenshot={shot}", "--window-size=1200,3400", "--hide-scrollbars",
              profile=tmp_path / "profile")
    pixels = np.asarray(Image.open(shot).convert("RGB")).astype(int)
    for colour in PALETTE[:3]:  # the outlines and labels of chunks 0, 1 and 2 are painted
        rgb = [int(colour[i:i + 2], 16) for i in (1, 3, 5)]
        mask = np.all(np.abs(pixels - rgb) < 16, axis=2)
        assert mask.sum() > 300, colour
    # inside the first chunk's outline (page 1 of a.pdf) the page's text shows through
    rgb = [int(PALETTE[0][i:i + 2], 16) for i in (1, 3, 5)]
    ys, xs = np.nonzero(np.all(np.abs(pixels - rgb) < 16, axis=2))
    top = ys.min()
    first = (ys < top + 40)  # the first box's outline rows
    box = pixels[top + 2:top + 22, xs[first].min() + 3:xs[first].max() - 3]
    assert (box.max(axis=2) < 110).mean() > 0.008  # dark glyph pixels (small print), not a blank thumbnail
