"""Book template: chapters; table of contents and index dropped and reported; foreword kept."""
from __future__ import annotations

from beam_chunking.domains import BookChunker
from beam_chunking.types import ParsedDocument, Section
from tests.helpers import check_pickle

BOOK = """Contents

Foreword 1
Chapter 1 The Start 3
Index 90

Foreword

Written by a friend.

Chapter 1 The Start

It begins.

1.1 A section

Details.

Chapter 2 The End

It ends.

Index

apple, 3
banana, 7
"""


def test_toc_and_index_dropped_foreword_kept_chapters_marked():
    chunks, dropped = BookChunker().chunk_with_drops(ParsedDocument("d", "u", "text/plain", BOOK, (Section(0, len(BOOK)),)))
    assert [c.metadata.get("chapter") for c in chunks] == ["Foreword", "Chapter 1 The Start", "Chapter 1 The Start",
                                                             "Chapter 2 The End"]
    assert chunks[2].metadata["section_path"] == ["Chapter 1 The Start", "A section"]
    assert [label for label, _ in dropped] == ["table of contents", "index"]
    toc = BOOK[: BOOK.index("\n\nForeword\n")]
    assert dropped[0][1] == len(toc.strip())
    kept = "".join(c.text for c in chunks)
    assert "banana" not in kept and "Index 90" not in kept
    assert all(c.metadata["template"] == "book" for c in chunks)


def test_switches():
    doc = ParsedDocument("d", "u", "text/plain", BOOK, (Section(0, len(BOOK)),))
    chunks, dropped = BookChunker(keep_foreword=False, drop_index=False).chunk_with_drops(doc)
    assert [label for label, _ in dropped] == ["table of contents", "foreword"]
    assert chunks[-1].metadata["chapter"] == "Index"
    check_pickle(BookChunker(), BOOK)


def test_real_book_pdf_drops_its_table_of_contents():
    import pytest

    from beam_chunking.parsers import parse
    from beam_chunking.strategies.base import chunk_recording_drops
    from tests.parsers.fixtures import document, realdocs_dir

    root = realdocs_dir()
    if root is None:
        pytest.skip("../shared/realdocs/debian-reference is absent (not part of a user checkout)")
    doc = parse(document("debian-reference.en.pdf", (root / "debian-reference.en.pdf").read_bytes()), ocr="never")
    chunks, dropped = chunk_recording_drops(BookChunker(), doc)
    # The parser drops the contents pages and the running headers before the template sees
    # them; the template's own contents rule then has nothing left to drop.
    assert dict(dropped).keys() == {"running header", "table of contents"} and dict(dropped)["table of contents"] > 40_000
    assert BookChunker().chunk_with_drops(doc)[1] == ()
    kept = "\n".join(c.text for c in chunks)
    assert "1.1.1 The shell prompt . . ." not in kept  # the contents pages with dot leaders are gone
    preface = next(c for c in chunks if c.metadata.get("chapter") == "Preface")
    assert preface.metadata["page"] == 24
    first = next(c for c in chunks if c.metadata.get("chapter") == "GNU/Linux tutorials")
    # The chapter's label line above its bookmarked title is part of its heading.
    assert first.text.split("\n")[0] == "Chapter 1 GNU/Linux tutorials" and first.metadata["page"] == 29
