"""Transparent .gz inputs: typed by the inner name, bounded, truncation detected."""
from __future__ import annotations

import gzip

import pytest

from beam_chunking.errors import ParseError
from beam_chunking.parsers.compressed import gunzip, is_gzip


def test_inner_name_and_multi_member():
    data = gzip.compress(b"# Title\n") + gzip.compress(b"body\n")
    assert is_gzip(data) and not is_gzip(b"# plain")
    assert gunzip("gs://b/notes.md.gz", data, 1000) == ("gs://b/notes.md", b"# Title\nbody\n")


def test_bomb_truncation_and_corruption():
    bomb = gzip.compress(b"\0" * (8 * 1024 * 1024))
    assert len(bomb) < 20_000
    with pytest.raises(ParseError, match="inflates to more than max_bytes=1048576"):
        gunzip("b.txt.gz", bomb, 1024 * 1024)
    good = gzip.compress(b"hello world" * 1000)
    with pytest.raises(ParseError, match="truncated"):
        gunzip("t.txt.gz", good[: len(good) // 2], 10**6)
    with pytest.raises(ParseError, match="corrupt"):
        gunzip("c.txt.gz", good[:10] + b"\xff" * 40 + good[50:], 10**6)
