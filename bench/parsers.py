"""Parser benchmarks: PDF pages/s, HTML MB/s and peak memory on large generated files.

    python bench/parsers.py [--pages 1000] [--rows 100000] [--skip-memory]

- PDF: the Debian Reference (261 pages) from ``../shared/realdocs``: beam-chunking's parser
  against pypdf's text extraction (the peer) and bare PDFium extraction (the same library
  without our page logic), with the share of the book's words each one keeps (against the
  book's own text edition).
- HTML: the seven Debian Reference HTML files: against BeautifulSoup(lxml).get_text() and
  bare selectolax ``body.text()``.
- Memory: generated PDFs of ``--pages``/4 and ``--pages`` pages and a ``--rows``-row XLSX,
  each parsed in a fresh subprocess; the figure is the peak RSS during parsing (Linux
  ``VmHWM``, reset after imports and reading the file's bytes) minus the RSS before it. Peers: pypdf on the same PDF, openpyxl's default (not read-only) load of the XLSX.

Best of three passes after a warm-up; ratios are against the named peer in the same run.
"""
from __future__ import annotations

import argparse
import collections
import gzip
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
REALDOCS = os.environ.get("BEAM_CHUNKING_REALDOCS") or os.path.join(ROOT, "..", "shared", "realdocs")
BOOK = os.path.join(REALDOCS, "debian-reference")
CORPUS = os.path.join(HERE, "corpus")


def best_of(fn, reps=3):
    fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def words(text):
    return collections.Counter(re.findall(r"[A-Za-z]{3,}", text))


def table(title, rows, unit, peer):
    base = next(v for name, v, _ in rows if name == peer)
    print(f"\n### {title} (ratio vs {peer})\n")
    print(f"| implementation | {unit} | quality | ratio |\n|---|---:|---|---:|")
    for name, value, quality in rows:
        print(f"| {name} | {value:.1f} | {quality} | {value / base:.2f}x |")


def bench_pdf():
    import io

    import pypdf
    import pypdfium2

    from beam_chunking.parsers.pdf import parse_pdf
    from beam_chunking.types import Document

    path = os.path.join(BOOK, "debian-reference.en.pdf")
    data = open(path, "rb").read()
    book = words(gzip.decompress(open(os.path.join(BOOK, "debian-reference.en.txt.gz"), "rb").read()).decode())
    doc = Document("d", path, data, "application/pdf")

    def ours():
        return parse_pdf(doc).text

    def bare():
        pdf = pypdfium2.PdfDocument(data)
        out = []
        for i in range(len(pdf)):
            page = pdf[i]
            tp = page.get_textpage()
            out.append(tp.get_text_bounded())
            tp.close()
            page.close()
        pdf.close()
        return "\n".join(out)

    def peer():
        return "\n".join(p.extract_text() for p in pypdf.PdfReader(io.BytesIO(data)).pages)

    pages = len(pypdfium2.PdfDocument(data))
    rows = []
    for name, fn in (("beam-chunking parse_pdf", ours), ("bare pypdfium2 get_text_bounded", bare),
                     ("pypdf extract_text", peer)):
        seconds, text = best_of(fn, reps=3 if fn is not peer else 1)
        found = words(text)
        kept = sum((found & book).values())
        quality = f"{kept / sum(found.values()):.1%} of its words are the book's; {kept / sum(book.values()):.1%} of the book found"
        rows.append((name, pages / seconds, quality))
    table(f"PDF text, Debian Reference ({pages} pages, {len(data) / 1e6:.1f} MB)", rows, "pages/s", "pypdf extract_text")


def bench_html():
    import warnings

    from bs4 import BeautifulSoup, XMLParsedAsHTMLWarning
    from selectolax.lexbor import LexborHTMLParser

    from beam_chunking.parsers.html import parse_html
    from beam_chunking.types import Document

    warnings.filterwarnings("ignore", category=XMLParsedAsHTMLWarning)  # XHTML read as HTML on purpose
    names = sorted(n for n in os.listdir(BOOK) if n.endswith(".html"))
    blobs = [open(os.path.join(BOOK, n), "rb").read() for n in names]
    mb = sum(len(b) for b in blobs) / 1e6
    docs = [Document("d", n, b, "text/html") for n, b in zip(names, blobs)]
    cases = (
        ("beam-chunking parse_html", lambda: [parse_html(d).text for d in docs]),
        ("bare selectolax body.text()", lambda: [LexborHTMLParser(b.decode()).body.text() for b in blobs]),
        ("BeautifulSoup(lxml).get_text()", lambda: [BeautifulSoup(b, "lxml").get_text() for b in blobs]),
    )
    rows = []
    for name, fn in cases:
        seconds, texts = best_of(fn)
        rows.append((name, mb / seconds, f"{sum(len(t) for t in texts):,} characters of text"))
    table(f"HTML, {len(names)} Debian Reference pages ({mb:.2f} MB)", rows, "MB/s", "BeautifulSoup(lxml).get_text()")


def make_pdf(pages):
    path = os.path.join(CORPUS, f"generated-{pages}-pages.pdf")
    if not os.path.exists(path):
        from fpdf import FPDF

        pdf = FPDF()
        pdf.set_font("Helvetica", size=10)
        line = "Page {p}, line {n}: the quick brown fox jumps over the lazy dog near the riverbank."
        for p in range(pages):
            pdf.add_page()
            for n in range(45):
                pdf.cell(0, 5, line.format(p=p + 1, n=n + 1), new_x="LMARGIN", new_y="NEXT")
        os.makedirs(CORPUS, exist_ok=True)
        pdf.output(path)
    return path


def make_xlsx(rows):
    path = os.path.join(CORPUS, f"generated-{rows}-rows.xlsx")
    if not os.path.exists(path):
        import openpyxl

        book = openpyxl.Workbook(write_only=True)
        sheet = book.create_sheet("data")
        sheet.append(["id", "name", "city", "amount", "note", "status", "code", "comment"])
        for i in range(rows):
            sheet.append([i, f"customer {i}", f"city {i % 97}", i * 1.25, f"note number {i} about the order",
                          "open" if i % 3 else "closed", f"C{i:08d}", "free text " * (i % 5)])
        os.makedirs(CORPUS, exist_ok=True)
        book.save(path)
    return path


CHILD = r"""
import io, json, sys


def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) / 1024  # kB -> MB

sys.path.insert(0, sys.argv[3])
kind, path = sys.argv[1], sys.argv[2]
data = open(path, "rb").read()
if kind == "ours-pdf":
    from beam_chunking.parsers.pdf import parse_pdf as fn
elif kind == "ours-xlsx":
    from beam_chunking.parsers.tabular import parse_xlsx as fn
elif kind == "pypdf":
    import pypdf
elif kind == "openpyxl-full":
    import openpyxl
from beam_chunking.types import Document
base = status("VmRSS")
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # reset the high-water mark (VmHWM) to the current RSS
if kind.startswith("ours"):
    out = fn(Document("d", path, data, "x"))
    size = len(out.text)
elif kind == "pypdf":
    size = sum(len(p.extract_text()) for p in pypdf.PdfReader(io.BytesIO(data)).pages)
else:
    book = openpyxl.load_workbook(io.BytesIO(data))
    size = sum(len(str(v)) for ws in book.worksheets for r in ws.iter_rows(values_only=True) for v in r)
print(json.dumps({"base_mb": base, "peak_mb": status("VmHWM"), "chars": size}))
"""


def measure(kind, path):
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", CHILD, kind, path, ROOT], capture_output=True, text=True, check=True)
    result = json.loads(out.stdout)
    result["seconds"] = time.perf_counter() - t
    return result


def bench_memory(pages, rows):
    small, pdf, xlsx = make_pdf(max(1, pages // 4)), make_pdf(pages), make_xlsx(rows)
    print("\n### Peak memory while parsing (fresh process each; lower is better)\n")
    print("| file | implementation | peak RSS - baseline | baseline RSS | text out | wall s |\n|---|---|---:|---:|---:|---:|")
    for path, kinds in ((small, ("ours-pdf", "pypdf")), (pdf, ("ours-pdf", "pypdf")),
                        (xlsx, ("ours-xlsx", "openpyxl-full"))):
        size = os.path.getsize(path) / 1e6
        for kind in kinds:
            r = measure(kind, path)
            print(f"| {os.path.basename(path)} ({size:.1f} MB) | {kind} | {r['peak_mb'] - r['base_mb']:.0f} MB | "
                  f"{r['base_mb']:.0f} MB | {r['chars']:,} chars | {r['seconds']:.1f} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--skip-memory", action="store_true")
    args = parser.parse_args()
    if os.path.isdir(BOOK):
        bench_pdf()
        bench_html()
    else:
        print(f"skipping PDF/HTML throughput: {BOOK} is absent")
    if not args.skip_memory:
        bench_memory(args.pages, args.rows)


if __name__ == "__main__":
    main()
