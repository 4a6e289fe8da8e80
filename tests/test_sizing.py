"""The bundled cl100k_base loads from a parsed copy when one is there, and is the same encoding."""
from __future__ import annotations

import glob
import os

import pytest
import tiktoken

from beam_chunking import sizing

SAMPLE = "Prose, code(x) and 日本語 👩‍👩‍👧 <|endoftext|>\r\n" * 50


@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path


def parsed_copies(home):
    return glob.glob(str(home / "beam-chunking" / "tiktoken" / "*.marshal"))


def test_the_first_load_writes_the_parsed_copy_and_the_next_reads_it(cache_home):
    reference = tiktoken.get_encoding(sizing.OFFLINE_CL100K)
    first = sizing._bundled_cl100k(tiktoken)
    [copy] = parsed_copies(cache_home)
    again = sizing._bundled_cl100k(tiktoken)
    assert first.encode_ordinary(SAMPLE) == again.encode_ordinary(SAMPLE) == reference.encode_ordinary(SAMPLE)
    assert again.n_vocab == reference.n_vocab and again.name == reference.name
    assert parsed_copies(cache_home) == [copy]


def test_a_damaged_copy_is_not_used_and_is_written_again(cache_home):
    sizing._bundled_cl100k(tiktoken)
    [copy] = parsed_copies(cache_home)
    data = open(copy, "rb").read()
    with open(copy, "wb") as f:
        f.write(data[: len(data) // 2])  # cut short, as by a full disk
    enc = sizing._bundled_cl100k(tiktoken)
    assert enc.encode_ordinary(SAMPLE) == tiktoken.get_encoding(sizing.OFFLINE_CL100K).encode_ordinary(SAMPLE)
    assert open(copy, "rb").read() == data


def test_an_unwritable_cache_still_loads(cache_home):
    (cache_home / "beam-chunking").write_text("a file where the folder would go")
    enc = sizing._bundled_cl100k(tiktoken)
    assert enc.encode_ordinary("hello world") == [15339, 1917]
    assert not os.path.isdir(cache_home / "beam-chunking")
