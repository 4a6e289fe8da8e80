"""OnnxEmbedder on a tiny real ONNX model: I/O contract, windowing, offsets, errors."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

from beam_chunking.embeddings import OnnxEmbedder
from beam_chunking.errors import ChunkingError, ConfigError
from tests.embeddings.fixtures import DIM, tiny_embedder, write_model, write_vocab


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("tiny")


def test_vectors_are_normalised_and_topical(folder):
    e = tiny_embedder(folder)
    v = e.embed(["the cat and the dog.", "a horse with a cow.", "the stock market price."])
    assert v.shape == (3, DIM) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-5)
    assert v[0] @ v[1] > 0.9 and v[0] @ v[2] < 0.3
    assert e.embed([]).shape == (0, DIM)


def test_long_inputs_are_windowed_not_cut(folder):
    e = tiny_embedder(folder, max_tokens=16, window_overlap_tokens=4)
    long = "the cat " * 40 + "the stock market price " * 40
    vec = e.embed([long])[0]
    head = e.embed(["the cat " * 40])[0]
    assert vec @ head < 0.95  # the tail beyond 16 tokens changed the vector: nothing was cut
    vectors, offsets = e.embed_tokens(long)
    assert vectors.shape == (len(offsets), DIM) and len(offsets) == 240
    assert [long[a:b] for a, b in offsets[:3]] == ["the", "cat", "the"]


def test_token_offsets_are_code_points_after_normalisation(folder):
    e = tiny_embedder(folder)
    text = "Ca\u0301t 日本語 the DOG"
    _, offsets = e.embed_tokens(text)
    # the normaliser strips the accent and lowercases, yet offsets map back into the original
    assert [text[a:b] for a, b in offsets] == ["Ca\u0301t", "日", "本", "語", "the", "DOG"]
    nfd = "e\u0301te\u0301 cat"
    _, offsets = e.embed_tokens(nfd)
    assert [tuple(o) for o in offsets] == [(0, 1), (2, 3), (3, 4), (6, 9)]  # marks at 1 and 4: no token


def test_only_declared_inputs_are_fed_and_output_found(folder):
    vocab = write_vocab(folder)
    bare = OnnxEmbedder(model_path=write_model(folder, mask_input=False, name="nomask.onnx"), vocab_path=vocab)
    assert bare.embed(["the cat"]).shape == (1, DIM)
    multi = write_model(folder, extra_outputs=True)
    with pytest.raises(ConfigError, match="no output named 'last_hidden_state'"):
        OnnxEmbedder(model_path=multi, vocab_path=vocab).setup()
    assert OnnxEmbedder(model_path=multi, vocab_path=vocab, output_name="hidden").embed(["cat"]).shape == (1, DIM)


def test_pooled_exports_and_oversized_windows_fail_clearly(folder):
    vocab = write_vocab(folder)
    with pytest.raises(ChunkingError, match="a pooled export cannot be used"):
        OnnxEmbedder(model_path=write_model(folder, pooled=True), vocab_path=vocab).setup()
    small = write_model(folder, positions=64)
    with pytest.raises(ConfigError, match="max_tokens=128: the model cannot take that many tokens"):
        OnnxEmbedder(model_path=small, vocab_path=vocab, max_tokens=128).setup()
    assert OnnxEmbedder(model_path=small, vocab_path=vocab, max_tokens=64, window_overlap_tokens=16).embed(["cat " * 500]).shape == (1, DIM)


def test_validation_and_pickling(folder):
    with pytest.raises(ConfigError, match="exactly one of tokenizer_path"):
        OnnxEmbedder(model_path="m.onnx")
    with pytest.raises(ConfigError, match="window_overlap_tokens=256 must be smaller"):
        OnnxEmbedder(model_path="m.onnx", vocab_path="v", window_overlap_tokens=256, max_tokens=256)
    # max_tokens not given: known only once the model's configuration is read, at load time
    with pytest.raises(ConfigError, match=r"max_tokens=256 \(the default\) leaves 254 content tokens"):
        tiny_embedder(folder, window_overlap_tokens=256).setup()
    with pytest.raises(ConfigError, match="cannot load the model"):
        OnnxEmbedder(model_path=str(folder / "missing.onnx"), vocab_path=write_vocab(folder)).setup()
    e = tiny_embedder(folder)
    clone = pickle.loads(pickle.dumps(e))
    assert clone == e and np.allclose(clone.embed(["cat"]), e.embed(["cat"]))


def test_token_type_ids_are_fed_when_the_model_declares_them(folder):
    typed = OnnxEmbedder(model_path=write_model(folder, type_input=True), vocab_path=write_vocab(folder))
    assert typed.runtime.feeds_types and not tiny_embedder(folder).runtime.feeds_types
    assert np.allclose(typed.embed(["the cat"]), tiny_embedder(folder).embed(["the cat"]), atol=1e-6)


def test_stitched_tokens_come_from_the_window_where_they_sit_furthest_from_an_edge(folder):
    e = tiny_embedder(folder, max_tokens=16, window_overlap_tokens=4)
    rt = e.runtime
    text = " ".join(["cat", "dog", "bird", "fish"] * 10)  # 40 tokens: windows of 14, step 10
    vectors, _ = e.embed_tokens(text)
    ids = list(rt.tokenizer.encode(text, add_special_tokens=False).ids)
    assert rt.windows(len(ids), 4) == [(0, 14), (10, 24), (20, 34), (30, 40)]
    first = rt.forward([rt.prefix + ids[0:14] + rt.suffix])[0]
    second = rt.forward([rt.prefix + ids[10:24] + rt.suffix])[0]
    # the overlap [10, 14) is split at its middle: 10-11 from the first window, 12-13 from the second
    assert np.allclose(vectors[11], first[1 + 11]) and np.allclose(vectors[12], second[1 + 2])
    assert not np.allclose(first[1 + 12], second[1 + 2])  # positions differ, so the choice shows


def test_passes_stay_under_the_token_budget(folder):
    from beam_chunking.embeddings.onnx import MAX_BATCH_TOKENS

    rt = tiny_embedder(folder).runtime
    lengths = [300, 10, 256, 256, 256, 256, 256, 256, 256, 256, 256, 12, 5000]
    passes = rt.batches(lengths, 32)
    assert sorted(i for p in passes for i in p) == list(range(len(lengths)))
    for p in passes:
        assert len(p) == 1 or len(p) * max(lengths[i] for i in p) <= MAX_BATCH_TOKENS
    assert [12] in passes  # a sequence over the budget still gets a pass of its own
