"""What the watchdog costs: each document parsed in-process against through the child process.

    python bench/watchdog.py              # every document, best of 5, interleaved
    python bench/watchdog.py --reps 3     # quicker

Documents: generated ones (``tests/parsers/fixtures.py``: a 3-page report DOCX, a 60-page
DOCX, a 10-slide PPTX, a 2,000-row XLSX, a 2-page PDF, an e-mail with a DOCX attachment)
and real ones from ``../shared/realdocs/debian-reference`` (the 261-page PDF, and two HTML
chapters: HTML is not isolated, the rows say what isolating it would cost). Each document is
parsed with ``parse_in_process`` and with ``parse_isolated`` (the watchdog's path) in
alternation, ``--reps`` times each after a warm-up; the table gives the best of each, the
difference, and the child's share of the document and text bytes it copies.

Also measured: the child's start-up (``start_child``, ready to parse, best of 5 fresh
starts) and its resident memory once it has parsed every format. ``--calls`` times instead
the single library calls that decide which formats are isolated: python-docx reading one
3,000-row table, PDFium laying out one page that shows 400,000 lines, Lexbor building 10
and 40 MB pages nested 993 deep (about the deepest ``max_html_depth`` lets through).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
REALDOCS = os.environ.get("BEAM_CHUNKING_REALDOCS") or os.path.join(ROOT, "..", "shared", "realdocs")
BOOK = os.path.join(REALDOCS, "debian-reference")


def documents():
    """Name -> Document."""
    from tests.parsers import fixtures as f

    words = "The quick brown fox jumps over the lazy dog. " * 12
    long_doc = []
    for k in range(60):
        long_doc += [("heading", 1, f"Chapter {k}"), *[("p", f"{words} ({k}.{j})") for j in range(8)],
                     ("table", [["item", "value"]] + [[f"r{r}", str(r * k)] for r in range(6)])]
    docx_type = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    made = {
        "report.docx": f.docx_bytes([("heading", 1, "Report"), ("p", words), ("p", words), ("li", "one"),
                                     ("table", [["a", "b"], ["1", "2"]])]),
        "book.docx": f.docx_bytes(long_doc),
        "deck.pptx": f.pptx_bytes([{"title": f"Slide {k}", "body": words, "notes": "say this"} for k in range(10)]),
        "sheet.xlsx": f.xlsx_bytes({"data": [["name", "n", "note"]] + [[f"row {r}", r, words[:60]]
                                                                         for r in range(2000)]}),
        "paper.pdf": f.pdf_bytes([words * 3, words * 3]),
        "mail.eml": f.eml_bytes(attachments=[("report.docx", f.docx_bytes([("p", words)]), docx_type)]),
    }
    docs = {name: f.document(name, data) for name, data in made.items()}
    for name in ("debian-reference.en.pdf", "ch01.en.html", "index.en.html"):
        path = os.path.join(BOOK, name)
        if os.path.isfile(path):
            with open(path, "rb") as fh:
                docs[name] = f.document(name, fh.read())
    return docs


def calls() -> None:
    """Time the one-call costs that the cooperative budget cannot interrupt."""
    import pypdfium2
    from selectolax.lexbor import LexborHTMLParser

    from beam_chunking.parsers import parse_in_process
    from tests.parsers import fixtures as f

    table = f.big_table_docx(3_000)
    t = time.perf_counter()
    parse_in_process(f.document("table.docx", table))  # one block: check_time runs once, before it
    print(f"python-docx, one table of 3,000 x 20 cells ({len(table) / 1e6:.2f} MB): {time.perf_counter() - t:.2f} s")
    pdf = f.shared_stream_pdf(pages=1, lines=400_000)
    t = time.perf_counter()
    pypdfium2.PdfDocument(pdf)[0].get_textpage().count_chars()
    print(f"PDFium, one page of 400,000 lines ({len(pdf) / 1e6:.2f} MB): {time.perf_counter() - t:.2f} s")
    unit = "<div>" + "<ul><li>item" * 495 + "</li></ul>" * 495 + "</div>"  # 993 deep in <body>
    for mb in (10, 40):
        html = "<html><body>" + unit * (mb * 1_000_000 // len(unit)) + "</body></html>"
        t = time.perf_counter()
        LexborHTMLParser(html)
        print(f"Lexbor, {mb} MB nested 993 deep: {time.perf_counter() - t:.2f} s")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=5, help="timed parses of each document each way (default 5)")
    parser.add_argument("--calls", action="store_true", help="time the single library calls instead")
    args = parser.parse_args(argv)
    if args.calls:
        calls()
        return 0

    import psutil

    from beam_chunking.parsers import parse_in_process, watchdog
    from beam_chunking.parsers.limits import DEFAULT_LIMITS
    from beam_chunking.types import ParsedDocument

    def isolated(doc) -> ParsedDocument:
        return watchdog.parse_isolated(doc, decode_errors="strict", limits=DEFAULT_LIMITS, keep=frozenset())

    starts = []
    for _ in range(5):
        watchdog.shutdown()
        t = time.perf_counter()
        watchdog.start_child()
        starts.append(time.perf_counter() - t)
    print(f"child start-up (ready to parse): best {min(starts) * 1000:.0f} ms, "
          f"median {sorted(starts)[2] * 1000:.0f} ms of 5")

    docs = documents()
    print("\n| document | size | text | in-process | watchdog | difference | isolated by default |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for name, doc in docs.items():
        here, there = parse_in_process(doc), isolated(doc)  # warm-up: libraries imported on both sides
        assert here == there, name
        times = {"here": [], "there": []}
        for _ in range(args.reps):
            for key, run in (("here", parse_in_process), ("there", isolated)):
                t = time.perf_counter()
                run(doc)
                times[key].append(time.perf_counter() - t)
        a, b = min(times["here"]), min(times["there"])
        print(f"| {name} | {len(doc.data) / 1e3:,.0f} KB | {len(here.text) / 1e3:,.0f} k chars | {a * 1000:.1f} ms | "
              f"{b * 1000:.1f} ms | {(b - a) * 1000:+.1f} ms ({(b - a) / a:+.0%}) | "
              f"{'yes' if watchdog.isolates(doc.content_type) else 'no'} |", flush=True)
    [pid] = watchdog.child_pids()
    print(f"\nchild resident memory after every format: {psutil.Process(pid).memory_info().rss / 2**20:.0f} MiB; "
          f"this process: {psutil.Process().memory_info().rss / 2**20:.0f} MiB")
    watchdog.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
