"""Token strategies sized in an embedding model's own tokens (``tokenizer: embedder`` / ``hf:PATH``).

Real tokenizers only: the packaged MiniLM (WordPiece, lowercasing, [CLS] and [SEP]) and a
byte-level BPE trained in the test with ``<s>`` and ``</s>``.
"""
import glob
import json
import os

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from beam_chunking.config import JobConfig, token_count_units
from beam_chunking.errors import ConfigError
from beam_chunking.sizing import HFTokenizerSizer, package_path
from beam_chunking.strategies import (ClusterSemanticChunker, Router, SentenceChunker, StructuralChunker,
                                      TokenChunker)
from tests.helpers import adversarial_text, check_chunks, check_pickle, check_properties
from tests.hf_tokenizers import build_bpe, minilm_tokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def documentation() -> str:
    """Every page of docs/, as one long Markdown text: headings, prose, tables and code."""
    pages = sorted(glob.glob(os.path.join(ROOT, "docs", "**", "*.md"), recursive=True))
    return "\n\n".join(open(p, encoding="utf-8").read() for p in pages)


PROSE = ("Cats sleep most of the day. They wake at dusk and hunt. " * 40
         + "\n\nBond yields rose as inflation data surprised the markets. " * 30)


@pytest.fixture(scope="module", params=["minilm", "bytelevel"])
def tokenizer(request, tmp_path_factory):
    if request.param == "minilm":
        return "hf:" + minilm_tokenizer()
    return "hf:" + build_bpe(str(tmp_path_factory.mktemp("bpe")), "bytelevel")


def make(kind, tokenizer, size):
    if kind == "token":
        return TokenChunker(max_chunk_size=size, overlap=size // 8, tokenizer=tokenizer, min_chunk_size=0)
    if kind == "sentence":
        return SentenceChunker(max_chunk_size=size, overlap=size // 8, tokenizer=tokenizer)
    return StructuralChunker(max_chunk_size=size, tokenizer=tokenizer)


@pytest.mark.parametrize("kind", ["token", "sentence", "structural"])
def test_ceiling_counts_special_tokens(kind, tokenizer):
    sizer = HFTokenizerSizer(tokenizer[3:])
    strategy = make(kind, tokenizer, 48)
    chunks = check_properties(strategy, PROSE, 48, measure=sizer.count)
    assert len(chunks) > 5
    # The counts are what the model sees: its special tokens plus the text's own tokens.
    tok = sizer._tokenizer()
    assert all(c.token_count == len(tok.encode(c.text, add_special_tokens=True).ids) for c in chunks)
    check_pickle(strategy, PROSE[:500])


@pytest.mark.parametrize("kind", ["token", "sentence", "structural"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=adversarial_text, size=st.integers(8, 64))
def test_adversarial_text(kind, tokenizer, text, size):
    sizer = HFTokenizerSizer(tokenizer[3:])
    check_properties(make(kind, tokenizer, size), text, size, measure=sizer.count)


def test_unit_names_the_tokenizer_and_its_specials():
    path = minilm_tokenizer()
    assert TokenChunker(tokenizer="hf:" + path).unit == "hf:all-MiniLM-L6-v2-onnx-int8/tokenizer.json tokens (2 special included)"
    assert TokenChunker().unit == "cl100k_base tokens"


def test_ceiling_must_leave_room_for_specials():
    with pytest.raises(ConfigError, match="max_chunk_size=5 must be >= 6: .* adds 2 special tokens"):
        TokenChunker(max_chunk_size=5, overlap=0, tokenizer="hf:" + minilm_tokenizer())


def test_minilm_sized_chunks_are_never_windowed_by_minilm():
    pytest.importorskip("onnxruntime")
    from beam_chunking.embeddings.minilm import minilm

    rt = minilm().runtime  # max_tokens 256: 254 content tokens plus [CLS] and [SEP]
    config = JobConfig(strategy=StructuralChunker(max_chunk_size=256, tokenizer="embedder"), embed="minilm")
    text = documentation()
    chunks = config.strategy.chunk_markdown(text)
    assert len(chunks) > 20
    longest = max(len(rt.tokenizer.encode(c.text, add_special_tokens=False).ids) for c in chunks)
    assert longest <= rt.window and max(c.token_count for c in chunks) <= 256
    # The same nominal size in cl100k tokens: some chunks pass MiniLM's window.
    cl = StructuralChunker(max_chunk_size=256).chunk_markdown(text)
    assert max(len(rt.tokenizer.encode(c.text, add_special_tokens=False).ids) for c in cl) > rt.window


def test_cluster_semantic_in_model_tokens():
    pytest.importorskip("onnxruntime")
    path = minilm_tokenizer()
    strategy = ClusterSemanticChunker(max_chunk_size=64, tokenizer="hf:" + path)
    check_properties(strategy, PROSE, 64, measure=HFTokenizerSizer(path).count)


# -- tokenizer: embedder ---------------------------------------------------------------------
def test_embedder_resolves_to_the_jobs_model_everywhere_in_the_strategy():
    router = Router({"text/markdown": SentenceChunker(tokenizer="embedder", max_chunk_size=256, overlap=16)},
                    default=TokenChunker(tokenizer="embedder", max_chunk_size=256, overlap=16))
    config = JobConfig(strategy=router, embed="minilm")
    path = "hf:" + package_path(minilm_tokenizer())
    assert config.strategy.routes["text/markdown"].tokenizer == path
    assert config.strategy.default.tokenizer == path
    units = token_count_units(config)
    assert units["sentence"] == units["token"] == "hf:all-MiniLM-L6-v2-onnx-int8/tokenizer.json tokens (2 special included)"


def test_embedder_from_a_spec_and_an_onnx_mapping():
    from beam_chunking.embeddings.minilm import minilm_paths
    from beam_chunking.pipelines.spec import parse_spec

    model, tok = minilm_paths()
    config = parse_spec({"strategy": {"name": "token", "tokenizer": "embedder", "max_chunk_size": 128, "overlap": 8},
                         "embed": {"model_path": model, "tokenizer_path": tok}})
    assert config.strategy.tokenizer == "hf:" + package_path(tok)


def test_embedder_without_an_embedding_model_fails_in_one_line():
    with pytest.raises(ConfigError) as err:
        JobConfig(strategy=TokenChunker(tokenizer="embedder"))
    assert "\n" not in str(err.value) and "no embedding model" in str(err.value) and "hf:PATH" in str(err.value)
    with pytest.raises(ConfigError, match="outside a job"):
        TokenChunker(tokenizer="embedder").chunk("Some text.")


class RemoteEmbedder:
    """An embedder without a local tokenizer, as a hosted model is (vectors come from a server)."""

    name = "text-embedding-3-small"

    def embed(self, texts):  # pragma: no cover - never called: the job fails at construction
        raise AssertionError("not called")


def test_embedder_that_has_no_local_tokenizer_fails_in_one_line():
    with pytest.raises(ConfigError) as err:
        JobConfig(strategy=SentenceChunker(tokenizer="embedder", max_chunk_size=256), embed=RemoteEmbedder())
    message = str(err.value)
    assert "\n" not in message and "'text-embedding-3-small' has none" in message


def test_ceiling_above_the_models_window_is_logged(caplog):
    JobConfig(strategy=TokenChunker(tokenizer="embedder", max_chunk_size=512), embed="minilm")
    assert "above the embedding model's max_tokens=256" in caplog.text


def test_manifest_says_which_tokenizer_counted(tmp_path):
    from beam_chunking.transforms.compose import TOKEN_COUNT_FIELD, ChunkFiles

    config = JobConfig(input=(str(tmp_path / "*.txt"),), output=str(tmp_path / "out"),
                       strategy=TokenChunker(tokenizer="embedder", max_chunk_size=256, overlap=16), embed="minilm")
    fields = ChunkFiles(config=config).write.manifest_fields
    assert json.loads(json.dumps(fields[TOKEN_COUNT_FIELD])) == {
        "token": "hf:all-MiniLM-L6-v2-onnx-int8/tokenizer.json tokens (2 special included)"}


def test_chunk_documents_refuses_an_unresolved_embedder_tokenizer():
    from beam_chunking.transforms.chunk import ChunkDocuments

    with pytest.raises(ConfigError, match="ChunkDocuments has no embedding model"):
        ChunkDocuments(TokenChunker(tokenizer="embedder"))


def test_a_packaged_model_tokenizer_is_named_relative_to_its_package(tmp_path, monkeypatch):
    """The same value on every machine, whatever folder the package is installed in: the job's
    fingerprint does not change with the virtual environment, and a worker finds the file."""
    pytest.importorskip("onnxruntime")
    import os

    from beam_chunking.sizing import HFTokenizerSizer, local_path, package_path

    config = JobConfig(strategy=StructuralChunker(max_chunk_size=256, tokenizer="embedder"), embed="minilm")
    value = config.strategy.tokenizer
    assert value.startswith("hf:pkg:") and "site-packages" not in value and not os.path.isabs(value[7:]), value
    assert os.path.samefile(local_path(value[3:]), minilm_tokenizer())
    assert HFTokenizerSizer(value[3:]).count("hello world") == HFTokenizerSizer(minilm_tokenizer()).count("hello world")
    mine = tmp_path / "tokenizer.json"
    mine.write_text("{}")
    assert package_path(str(mine)) == str(mine)  # a user's own file stays as given
    models = tmp_path / "models" / "bge"
    models.mkdir(parents=True)
    (models / "tokenizer.json").write_text("{}")
    monkeypatch.syspath_prepend(str(tmp_path))  # a folder on the path is a namespace package
    assert package_path(str(models / "tokenizer.json")) == str(models / "tokenizer.json")
    with pytest.raises(ConfigError, match="package 'no_such_package' is not installed here"):
        HFTokenizerSizer("pkg:no_such_package/tokenizer.json")
