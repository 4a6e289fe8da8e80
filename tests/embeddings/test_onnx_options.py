"""OnnxEmbedder's options for models as published: pooling, prefixes, max_tokens from the
model's configuration, providers, the spec form and gs:// models.

Real onnxruntime sessions on tiny models the tests write (:mod:`tests.embeddings.fixtures`);
the known answers come from running the same session directly.
"""
from __future__ import annotations

import json
import os
import pickle
import warnings

import numpy as np
import pytest

from beam_chunking.embeddings import OnnxEmbedder, onnx as onnx_module
from beam_chunking.embeddings.base import embedder_label, normalize
from beam_chunking.errors import ConfigError
from tests.embeddings.fixtures import DIM, write_model, write_vocab

TEXTS = ["the cat and the dog.", "a horse with a cow.", "the stock market price.", "cat"]
LONG = "the cat " * 40 + "the stock market price " * 40  # 240 tokens: windowed at max_tokens=16


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("options")


def embedder(folder, **options):
    model = write_model(folder, **{k: options.pop(k) for k in ("cls", "mask_input", "type_input") if k in options})
    return OnnxEmbedder(model_path=model, vocab_path=write_vocab(folder), name="tiny", **options)


def hidden(e, text):
    """The model's token outputs for ``text`` as one input (special tokens included)."""
    rt = e.runtime
    ids = rt.prefix + list(rt.tokenizer.encode(text, add_special_tokens=False).ids) + rt.suffix
    return rt.forward([ids])[0]


@pytest.mark.parametrize("inputs", [{}, {"mask_input": False}, {"type_input": True}],
                         ids=["mask", "no-mask", "token-types"])
@pytest.mark.parametrize("pooling", ["mean", "cls", "last"])
def test_each_pooling_takes_the_right_tokens(folder, pooling, inputs):
    e = embedder(folder, pooling=pooling, **inputs)
    for text in TEXTS:  # one text per call: a model without attention_mask sees padding
        out = hidden(e, text)
        expected = {"mean": out.mean(axis=0), "cls": out[0], "last": out[-1]}[pooling]
        got = e.embed([text])[0]
        assert np.allclose(got, normalize(expected[None])[0], atol=1e-6)
        assert abs(np.linalg.norm(got) - 1) < 1e-5
    if inputs.get("mask_input", True):  # batched with padding: the same vectors
        assert np.allclose(e.embed(TEXTS), np.concatenate([e.embed([t]) for t in TEXTS]), atol=1e-6)


@pytest.mark.parametrize("inputs", [{}, {"type_input": True}, {"mask_input": False}],
                         ids=["mask", "token-types", "no-mask"])
def test_a_cls_model_pooled_by_cls_gives_its_summary_vector(folder, inputs):
    plain = embedder(folder)
    cls = embedder(folder, cls=True, pooling="cls", **inputs)
    for text in TEXTS:
        assert np.allclose(cls.embed([text]), plain.embed([text]), atol=1e-6)
    v = cls.embed(TEXTS[:3]) if inputs.get("mask_input", True) else np.concatenate([cls.embed([t]) for t in TEXTS[:3]])
    assert v[0] @ v[1] > 0.9 and v[0] @ v[2] < 0.3  # topical, as the model meant
    assert not np.allclose(embedder(folder, cls=True, **inputs).embed([TEXTS[0]]), v[:1], atol=1e-3)  # mean != cls


@pytest.mark.parametrize("pooling", ["cls", "last"])
def test_a_windowed_text_averages_its_windows_pooled_vectors(folder, pooling):
    e = embedder(folder, cls=True, pooling=pooling, max_tokens=16, window_overlap_tokens=4)
    rt = e.runtime
    ids = list(rt.tokenizer.encode(LONG, add_special_tokens=False).ids)
    wins = rt.windows(len(ids), 4)
    outs = [rt.forward([rt.prefix + ids[s:t] + rt.suffix])[0] for s, t in wins]
    at = 0 if pooling == "cls" else -1
    expected = normalize(np.mean([o[at] for o in outs], axis=0)[None])[0]
    got = e.embed([LONG])[0]
    assert len(wins) == 24 and np.allclose(got, expected, atol=1e-6)
    if pooling == "cls":  # not the first window's CLS alone: the tail counts
        assert got @ normalize(outs[0][0][None])[0] < 0.95
    assert np.allclose(e.embed([LONG, "cat", LONG]), np.stack([got, e.embed(["cat"])[0], got]), atol=1e-6)


def test_normalize_off_returns_the_pooled_vectors(folder):
    raw = embedder(folder, pooling="cls", normalize=False).embed(TEXTS)
    assert raw.dtype == np.float32 and not np.allclose(np.linalg.norm(raw, axis=1), 1, atol=1e-3)
    assert np.allclose(normalize(raw), embedder(folder, pooling="cls").embed(TEXTS), atol=1e-6)
    with pytest.raises(ConfigError, match="normalize must be true or false"):
        embedder(folder, normalize="yes")


def test_prefixes_are_encoded_with_the_text_and_change_the_vectors(folder):
    plain = embedder(folder)
    e5 = embedder(folder, passage_prefix="the bank ", query_prefix="a loan ")
    assert not np.allclose(e5.embed(TEXTS), plain.embed(TEXTS), atol=1e-3)
    assert np.allclose(e5.embed(TEXTS), plain.embed(["the bank " + t for t in TEXTS]), atol=1e-6)
    assert np.allclose(e5.embed_queries(TEXTS), plain.embed(["a loan " + t for t in TEXTS]), atol=1e-6)
    assert np.allclose(plain.embed_queries(TEXTS), plain.embed(TEXTS))  # no prefixes: the same vectors
    # token vectors: the prefix is fed, not returned; offsets stay offsets into the text
    vectors, offsets = e5.embed_tokens("the cat")
    assert [tuple(o) for o in offsets] == [(0, 3), (4, 7)]
    assert np.allclose(vectors, hidden(plain, "the bank the cat")[3:5], atol=1e-6)
    assert e5.identity == "tiny[passage_prefix='the bank ', query_prefix='a loan ']" == embedder_label(e5)
    assert plain.identity == "tiny" and embedder(folder, pooling="cls", normalize=False).identity == \
        "tiny[pooling=cls, normalize=False]"


def test_each_window_of_a_long_text_gets_the_prefix(folder):
    e = embedder(folder, pooling="cls", max_tokens=16, window_overlap_tokens=4, passage_prefix="the bank ")
    rt = e.runtime
    head = list(rt.tokenizer.encode("the bank ", add_special_tokens=False).ids)
    ids = list(rt.tokenizer.encode(LONG, add_special_tokens=False).ids)
    wins = rt.windows(len(ids), 4, rt.window - len(head))
    outs = [rt.forward([rt.prefix + head + ids[s:t] + rt.suffix])[0] for s, t in wins]
    assert all(len(rt.prefix + head + ids[s:t] + rt.suffix) <= 16 for s, t in wins)
    assert np.allclose(e.embed([LONG])[0], normalize(np.mean([o[0] for o in outs], axis=0)[None])[0], atol=1e-6)
    vectors, offsets = e.embed_tokens(LONG)
    assert len(vectors) == len(ids) and offsets[-1][1] == len(LONG.rstrip())
    with pytest.raises(ConfigError, match="the prefix takes 12 tokens"):
        embedder(folder, max_tokens=16, window_overlap_tokens=4, passage_prefix="the bank " * 6).embed(["cat"])


def write_config(where, name, data):
    os.makedirs(where, exist_ok=True)
    with open(os.path.join(where, name), "w") as f:
        json.dump(data, f)


def test_max_tokens_is_read_from_the_published_configuration(tmp_path, monkeypatch):
    model = write_model(tmp_path / "onnx", positions=128)  # a Hugging Face layout: onnx/model.onnx
    vocab = write_vocab(tmp_path)

    def window(**options):
        monkeypatch.setattr(onnx_module, "_RUNTIMES", {})  # a model loads once per process: load it afresh
        return OnnxEmbedder(model_path=model, vocab_path=vocab, window_overlap_tokens=8, **options).window_tokens

    write_config(tmp_path, "config.json", {"model_type": "bert", "max_position_embeddings": 128})
    assert window() == 128
    write_config(tmp_path, "config.json", {"model_type": "xlm-roberta", "max_position_embeddings": 66})
    assert window() == 64  # RoBERTa-style position tables reserve two rows
    write_config(tmp_path, "tokenizer_config.json", {"model_max_length": int(1e30)})  # "no limit": ignored
    assert window() == 64
    write_config(tmp_path, "tokenizer_config.json", {"model_max_length": 96})
    assert window() == 96
    write_config(tmp_path, "sentence_bert_config.json", {"max_seq_length": 48})  # what sentence-transformers uses
    assert window() == 48
    assert window(max_tokens=32) == 32  # given wins
    write_config(tmp_path, "sentence_bert_config.json", {"max_seq_length": 4096})
    with pytest.raises(ConfigError, match=r"max_tokens=4096 \(read from .*sentence_bert_config.json\): the model "
                                          "cannot take"):
        window()


def test_max_tokens_defaults_to_256_without_configuration(tmp_path):
    e = OnnxEmbedder(model_path=write_model(tmp_path), vocab_path=write_vocab(tmp_path))
    assert e.max_tokens is None and e.window_tokens == 256


def test_an_unavailable_provider_warns_once_and_runs_on_the_cpu(folder, monkeypatch):
    import onnxruntime

    if "CUDAExecutionProvider" in onnxruntime.get_available_providers():
        pytest.skip("this machine has CUDA: the fallback is tested where it has not")
    monkeypatch.setattr(onnx_module, "_WARNED", set())
    cpu = embedder(folder)
    with pytest.warns(onnx_module.ProviderUnavailable) as caught:
        gpu = embedder(folder, providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
        vectors = gpu.embed(TEXTS)
    assert len(caught) == 1 and "CUDAExecutionProvider not available" in str(caught[0].message)
    assert gpu.runtime.providers == ("CPUExecutionProvider",)
    assert np.array_equal(vectors, cpu.embed(TEXTS))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a second model asking for CUDA in this process: no second warning
        embedder(folder, pooling="cls", providers=("CUDAExecutionProvider",), max_tokens=64,
                 window_overlap_tokens=16).embed(TEXTS)
    assert gpu == cpu and gpu.identity == cpu.identity  # where it runs is not what it computes
    with pytest.raises(ConfigError, match="providers must be a list of onnxruntime provider names"):
        embedder(folder, providers=["cuda"])


def test_options_validate_and_pickle(folder):
    with pytest.raises(ConfigError, match="pooling must be one of mean, cls, last, got 'max'"):
        embedder(folder, pooling="max")
    with pytest.raises(ConfigError, match="passage_prefix must be a string"):
        embedder(folder, passage_prefix=1)
    e = embedder(folder, pooling="last", passage_prefix="the ", providers="CPUExecutionProvider")
    assert e.providers == ("CPUExecutionProvider",)
    clone = pickle.loads(pickle.dumps(e))
    assert clone == e and clone.identity == e.identity and np.array_equal(clone.embed(TEXTS), e.embed(TEXTS))


def test_the_spec_accepts_the_options_and_names_an_unknown_one(folder):
    from beam_chunking.pipelines.spec import parse_spec

    base = {"model_path": write_model(folder), "vocab_path": write_vocab(folder)}
    spec = parse_spec({"embed": dict(base, pooling="cls", passage_prefix="passage: ", normalize=False,
                                     providers=["CUDAExecutionProvider", "CPUExecutionProvider"])})
    assert (spec.embed.pooling, spec.embed.passage_prefix, spec.embed.normalize) == ("cls", "passage: ", False)
    assert spec.embed.providers == ("CUDAExecutionProvider", "CPUExecutionProvider")
    with pytest.raises(ConfigError) as bad:
        parse_spec({"embed": dict(base, poolng="cls")})
    assert str(bad.value).startswith("embed: unknown OnnxEmbedder option 'poolng'; the options are: model_path, ")
    assert "\n" not in str(bad.value) and "pooling" in str(bad.value)
    with pytest.raises(ConfigError, match="^embed: OnnxEmbedder.pooling must be one of mean, cls, last"):
        parse_spec({"embed": dict(base, pooling="CLS")})
    with pytest.raises(ConfigError, match="^embed: OnnxEmbedder needs model_path"):
        parse_spec({"embed": {"vocab_path": base["vocab_path"]}})


@pytest.mark.integration
def test_a_model_on_gcs_is_copied_once_per_process(tmp_path):
    pytest.importorskip("gcp_storage_emulator")
    from google.cloud import storage

    from beam_chunking.embeddings import files
    from tests.pipelines.gcs_emulator import gcs_emulator

    local = tmp_path / "local"
    model, vocab = write_model(local / "onnx", cls=True), write_vocab(local)
    write_config(local, "tokenizer_config.json", {"model_max_length": 64})
    with gcs_emulator(tmp_path, "models") as root:
        bucket = storage.Client().bucket("models")
        for path, key in ((model, "bge/onnx/model.onnx"), (vocab, "bge/vocab.txt"),
                          (str(local / "tokenizer_config.json"), "bge/tokenizer_config.json")):
            bucket.blob(key).upload_from_filename(path)
        cache = str(tmp_path / "cache")
        remote = OnnxEmbedder(model_path=f"{root}/bge/onnx/model.onnx", vocab_path=f"{root}/bge/vocab.txt",
                              pooling="cls", cache_dir=cache, window_overlap_tokens=16)
        here = OnnxEmbedder(model_path=model, vocab_path=vocab, pooling="cls", window_overlap_tokens=16)
        assert np.array_equal(remote.embed(TEXTS), here.embed(TEXTS))
        assert remote.window_tokens == 64 == here.window_tokens  # the parent's configuration came along
        copied = files._COPIES[f"{root}/bge/onnx/model.onnx"]
        assert copied.startswith(cache) and open(copied, "rb").read() == open(model, "rb").read()
        bucket.blob("bge/onnx/model.onnx").delete()  # a second model on the same file: no second copy
        again = OnnxEmbedder(model_path=f"{root}/bge/onnx/model.onnx", vocab_path=f"{root}/bge/vocab.txt",
                             pooling="mean", cache_dir=cache, max_tokens=32, window_overlap_tokens=16)
        assert again.embed(TEXTS).shape == (len(TEXTS), DIM)
        # The same path re-exported (same size, new bytes): another process must not reuse the old copy.
        files._COPIES.clear()
        changed = bytearray(open(model, "rb").read())
        changed[-1] ^= 1
        bucket.blob("bge/onnx/model.onnx").upload_from_string(bytes(changed))
        fresh = files.local_copy(f"{root}/bge/onnx/model.onnx", cache)
        assert open(fresh, "rb").read() == bytes(changed)
        with pytest.raises(ConfigError, match="gs://models/bge/missing.onnx: no such object"):
            OnnxEmbedder(model_path=f"{root}/bge/missing.onnx", vocab_path=f"{root}/bge/vocab.txt",
                         cache_dir=cache).setup()


def test_new_options_at_their_defaults_keep_the_options_fingerprint():
    from beam_chunking.ids import fingerprint

    before = OnnxEmbedder(model_path="m.onnx", vocab_path="v", max_tokens=256)
    same = OnnxEmbedder(model_path="m.onnx", vocab_path="v", max_tokens=256, pooling="mean", normalize=True,
                        providers=["CUDAExecutionProvider", "CPUExecutionProvider"], cache_dir="/elsewhere")
    assert fingerprint(same) == fingerprint(before)  # an incremental run keeps its rows
    for changed in ({"pooling": "cls"}, {"passage_prefix": "passage: "}, {"normalize": False}):
        assert fingerprint(OnnxEmbedder(model_path="m.onnx", vocab_path="v", max_tokens=256, **changed)) != \
            fingerprint(before)  # ... and re-embeds when the vectors would change


def test_the_options_fingerprint_of_an_explicit_window_is_the_one_older_versions_wrote():
    from beam_chunking.ids import fingerprint

    # Pinned: the value an output written before these options exist records for this model.
    assert fingerprint(OnnxEmbedder(model_path="m.onnx", vocab_path="v", max_tokens=256)) == "adec9bc45a39"
    # A configuration naming no window reads it from the model's files: a new fingerprint.
    assert fingerprint(OnnxEmbedder(model_path="m.onnx", vocab_path="v")) != "adec9bc45a39"
