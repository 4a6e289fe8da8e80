"""Every supported format and every kind of bad input through a real pipeline run.

The provenance each parser records must arrive in the Parquet chunks table as typed
columns (``page``/``page_end``, ``slide``, ``sheet``, ``row``, ``element_path``,
``language``, ``chunk_kind``) or typed map entries (``part``, ``speaker_notes``); each bad
document must be exactly one failed row, and the run must go on.
"""
from __future__ import annotations

import gzip
import os

import pyarrow.parquet as pq
import pytest

from beam_chunking.pipelines.cli import EXIT_TOO_MANY_FAILURES, main
from beam_chunking.schema import decode_metadata
from tests.parsers.fixtures import (BILLION_LAUGHS, XXE, docx_bytes, eml_bytes, pdf_bytes, pptx_bytes, realdocs_dir,
                                    rezip, xlsx_bytes, zip_bomb)

GOOD = {
    "book.pdf": lambda: pdf_bytes(["Page one text.", "Page two text."], sections=[(0, 0, "Start"), (1, 0, "End")]),
    "guide.html": lambda: b"<main><h1>Guide</h1><section><p>Read me.</p></section></main>",
    "memo.docx": lambda: docx_bytes([("heading", 1, "Memo"), ("p", "Body text."), ("table", [["k", "v"], ["a", "1"]])]),
    "deck.pptx": lambda: pptx_bytes([{"title": "Hello", "body": "World", "notes": "Speak slowly."}]),
    "sheet.xlsx": lambda: xlsx_bytes({"Prices": [["item", "price"], ["tea", 3]]}),
    "faq.csv": lambda: b"q,a\nWhy?,Because.\n",
    "mail.eml": lambda: eml_bytes(attachments=[("a.csv", b"x,y\n1,2\n", "text/csv")]),
    "tool.py": lambda: b"def tool():\n    return 1\n",
    "notes.md.gz": lambda: gzip.compress(b"# Zipped\n\nInside a gzip.\n"),
    "pdf-named.txt": lambda: pdf_bytes(["A PDF with a text name."]),
}

BAD = {
    "encrypted.pdf": (lambda: pdf_bytes(["secret"], password="pw"), "ParseError", "password"),
    "truncated.pdf": (lambda: pdf_bytes(["cut short"])[:400], "ParseError", "truncated"),
    "liar.pdf": (lambda: b"plain text, not a PDF", "ParseError", "not a PDF"),
    "zero.pdf": (lambda: b"", "ParseError", "empty"),
    "bomb.docx": (lambda: zip_bomb(docx_bytes([("p", "x")]), "word/media/x.bin"), "ParseError", "zip bomb"),
    "bomb.xlsx": (lambda: zip_bomb(xlsx_bytes({"s": [["h"], ["v"]]})), "ParseError", "zip bomb"),
    "xxe.docx": (lambda: rezip(docx_bytes([("p", "x")]), {"word/document.xml": XXE}), "ParseError", "DTD"),
    "laughs.xlsx": (lambda: rezip(xlsx_bytes({"s": [["h"]]}), {"xl/workbook.xml": BILLION_LAUGHS}), "ParseError", "DTD"),
    "gzip-bomb.txt.gz": (lambda: gzip.compress(b"a" * (3 * 1024 * 1024)), "ParseError", "max_bytes"),
    "archive.zip": (lambda: rezip(docx_bytes([("p", "x")]), {}), "UnsupportedContentType", "application/zip"),
}


def read(out, table):
    return pq.read_table(os.path.join(out, table)).to_pylist()


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    src = tmp_path_factory.mktemp("src")
    for name, make in GOOD.items():
        (src / name).write_bytes(make())
    for name, (make, _, _) in BAD.items():
        (src / name).write_bytes(make())
    (src / "empty.txt").write_bytes(b"")
    out = str(tmp_path_factory.mktemp("run") / "out")
    spec = src.parent / "spec.yaml"
    spec.write_text(f"input: '{src}/*'\noutput: '{out}'\nmax_bytes: 2097152\n")
    assert main(["run", "--config", str(spec)]) == EXIT_TOO_MANY_FAILURES  # the bad files, written in full
    docs = {os.path.basename(d["uri"]): d for d in read(out, "documents")}
    chunks = {}
    for row in read(out, "chunks"):
        row["metadata"] = decode_metadata(row["metadata"])
        chunks.setdefault(os.path.basename(row["uri"]), []).append(row)
    return docs, chunks


def test_counts_add_up_and_each_bad_file_is_one_failed_row(run):
    docs, chunks = run
    assert len(docs) == len(GOOD) + len(BAD) + 1
    assert {k for k, d in docs.items() if d["status"] == "ok"} == set(GOOD)
    assert docs["empty.txt"]["status"] == "empty"
    for name, (_, error_type, words) in BAD.items():
        row = docs[name]
        assert (row["status"], row["error_type"]) == ("failed", error_type), (name, row)
        assert words in row["error_message"] and name in row["error_message"], (name, row["error_message"])
    assert docs["gzip-bomb.txt.gz"]["stage"] == "read"
    assert set(chunks) == set(GOOD)


def test_provenance_arrives_as_typed_columns(run):
    _, chunks = run
    pdf = chunks["book.pdf"]
    assert [(c["page"], c["page_end"], c["section_path"]) for c in pdf] == [(1, 1, ["Start"]), (2, 2, ["End"])]
    assert isinstance(pdf[0]["page"], int) and pdf[0]["metadata"]["pdf_pages"] == 2
    [html] = chunks["guide.html"]
    assert (html["element_path"], html["heading"], html["text"]) == ("main > section > p", "Guide", "Guide\n\nRead me.")
    assert html["page"] is None and html["page_end"] is None
    [memo] = chunks["memo.docx"]  # the short paragraph joins the table under the same heading
    assert memo["chunk_kind"] == "table" and memo["text"].startswith("Memo\n\nBody text.") and "| k | v |" in memo["text"]
    deck = chunks["deck.pptx"]
    assert [(c["slide"], c["chunk_kind"], c["heading"]) for c in deck] == [(1, "slide", "Hello"), (1, "notes", "Hello")]
    assert deck[1]["metadata"]["speaker_notes"] is True
    header, row = chunks["sheet.xlsx"]
    assert (header["chunk_kind"], header["row"], header["text"]) == ("header", 1, "item | price")
    assert (row["sheet"], row["row"], row["text"]) == ("Prices", 2, "item: tea\nprice: 3")
    assert row["metadata"]["columns"] == ["item", "price"]
    _, faq = chunks["faq.csv"]
    assert (faq["sheet"], faq["row"], faq["chunk_kind"]) == ("faq.csv", 2, "row")
    mail = chunks["mail.eml"]
    assert [c["metadata"]["part"] for c in mail] == ["headers", "body", "attachment:a.csv", "attachment:a.csv"]
    assert (mail[3]["row"], mail[3]["sheet"]) == (2, "a.csv")
    [code] = chunks["tool.py"]
    assert (code["language"], code["content_type"], code["chunk_kind"]) == ("python", "text/x-python", "code")
    [zipped] = chunks["notes.md.gz"]
    assert zipped["content_type"] == "text/markdown" and zipped["heading"] == "Zipped"
    assert chunks["pdf-named.txt"][0]["content_type"] == "application/pdf"


def test_ten_megabyte_single_line(tmp_path):
    src, out = tmp_path / "src", str(tmp_path / "out")
    src.mkdir()
    line = ("word " * 2_000_000).encode()
    (src / "long.txt").write_bytes(line)
    assert main(["run", "--input", f"{src}/*", "--output", out, "--strategy", "fixed"]) == 0
    [doc] = read(out, "documents")
    assert doc["status"] == "ok" and doc["size_bytes"] == len(line)


@pytest.mark.skipif(realdocs_dir() is None, reason="../shared/realdocs/debian-reference is absent")
def test_real_book_three_ways(tmp_path):
    out = str(tmp_path / "out")
    # --ocr never: the cover is an image (test_pdf_ocr.py covers OCR), 20 s to read here.
    assert main(["run", "--input", f"{realdocs_dir()}/debian-reference.en.*", "--output", out, "--ocr", "never"]) == 0
    docs = {os.path.basename(d["uri"]): d for d in read(out, "documents")}
    assert {k: (d["status"], d["content_type"]) for k, d in docs.items()} == {
        "debian-reference.en.pdf": ("ok", "application/pdf"),
        "debian-reference.en.txt.gz": ("ok", "text/plain"),
    }
    pages = {p for r in read(out, "chunks") if r["uri"].endswith(".pdf") for p in range(r["page"], r["page_end"] + 1)}
    # Every page with body text has a chunk (one that runs over a page turn has both pages);
    # the contents pages (5-22) are dropped and recorded.
    assert max(pages) == 261 and len(pages) == 242 and not pages & set(range(5, 23))
    assert "table of contents" in docs["debian-reference.en.pdf"]["dropped"]
