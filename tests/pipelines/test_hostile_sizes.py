"""Small files that expand (issue 16, medium): each fails alone naming its cap, beside good documents."""
from beam_chunking.pipelines.cli import main
from beam_chunking.transforms.manifest import read_table


def test_small_files_that_expand_fail_alone_each_naming_its_cap(tmp_path):
    """Issue 16's hostile files, at the issue's sizes, beside good documents in one run."""
    from tests.parsers.fixtures import (docx_bytes, many_styles_docx, nested_lists_html, no_whitespace_text,
                                        shared_stream_pdf, shared_string_xlsx, wide_csv)

    src = tmp_path / "in"
    src.mkdir()
    hostile = {
        "shared.pdf": (shared_stream_pdf(pages=400, lines=40_000), "limits.max_page_chars=1000000"),
        "shared.xlsx": (shared_string_xlsx(rows=40_000), "limits.max_text_chars=50000000"),
        "wide.csv": (wide_csv(1_000_000, rows=1), "limits.max_columns=16384"),
        "deep.html": (nested_lists_html(100_000), "limits.max_html_depth=1000"),
    }
    good = {
        "styles.docx": many_styles_docx(5_000, 5_000),  # slow before, bounded now: parsed
        "genome.txt": no_whitespace_text(2_000_000),
        "notes.txt": b"Plain notes about the run.",
        "guide.md": b"# Guide\n\nSome words.\n\n## More\n\nAnd more words.",
        "page.html": b"<html><body><h1>Title</h1><p>A paragraph.</p><ul><li>one</li></ul></body></html>",
        "table.csv": b"name,age\nada,36\nalan,41\n",
        "report.docx": docx_bytes([("heading", 1, "Report"), ("p", "All fine.")]),
    }
    for name, (data, _) in hostile.items():
        (src / name).write_bytes(data)
    for name, data in good.items():
        (src / name).write_bytes(data)
    out = str(tmp_path / "out")
    main(["run", "--input", f"{src}/*", "--output", out])
    docs = {row["uri"].rsplit("/", 1)[-1]: row for row in read_table(out, "documents").to_pylist()}
    assert len(docs) == len(hostile) + len(good)
    for name, (_, cap) in hostile.items():
        row = docs[name]
        assert (row["status"], row["stage"], row["error_type"]) == ("failed", "parse", "LimitExceeded"), name
        assert cap in row["error_message"], row["error_message"]
    assert all(docs[name]["status"] == "ok" for name in good)
    chunked = set(read_table(out, "chunks").column("uri").to_pylist())
    assert {u.rsplit("/", 1)[-1] for u in chunked} == set(good)


def test_a_run_too_long_to_tokenize_fails_its_document_alone(tmp_path):
    """A text under max_bytes whose one piece would take the tokenizer gigabytes: its own failure."""
    from beam_chunking.text.pieces import MAX_PIECE_CHARS

    src = tmp_path / "in"
    src.mkdir()
    (src / "dense.txt").write_bytes(b"Heading\n\n" + b"z" * (MAX_PIECE_CHARS + 10) + b"\n")
    (src / "notes.txt").write_bytes(b"Plain notes about the run.")
    out = str(tmp_path / "out")
    main(["run", "--input", f"{src}/*", "--output", out])
    docs = {row["uri"].rsplit("/", 1)[-1]: row for row in read_table(out, "documents").to_pylist()}
    assert docs["notes.txt"]["status"] == "ok"
    dense = docs["dense.txt"]
    assert (dense["status"], dense["error_type"]) == ("failed", "TextTooDense"), dense
    assert f"more than {MAX_PIECE_CHARS:,} letters in a row, from character 9" in dense["error_message"]
