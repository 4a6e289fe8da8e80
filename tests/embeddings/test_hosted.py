"""HostedEmbedder against a real local /v1/embeddings server: retries, batching, pacing, cache."""
import pickle
import time

import numpy as np
import pytest

from beam_chunking.embeddings import HostedEmbedder, resolve_embedder
from beam_chunking.embeddings.hosted import with_options
from beam_chunking.embeddings.hosted_client import split_tokens
from beam_chunking.errors import ConfigError, EmbeddingError
from beam_chunking.ids import fingerprint
from tests.embeddings.server import unit_vector_of


def hosted(server, tmp_path, **options):
    options.setdefault("cache", str(tmp_path / "cache"))
    options.setdefault("model", "test-embed")
    return HostedEmbedder(base_url=server.base_url, retry_initial_delay=0.01, retry_max_delay=0.05, **options)


def test_vectors_are_the_servers_normalised_in_input_order(embedding_server, tmp_path):
    texts = ["alpha beta", "gamma", "delta epsilon zeta"]
    out = hosted(embedding_server, tmp_path).embed(texts)
    assert out.dtype == np.float32 and out.shape == (3, 8)
    np.testing.assert_allclose(out, np.stack([unit_vector_of(t, 8) for t in texts]), rtol=1e-6)
    assert embedding_server.requests[0]["encoding_format"] == "base64"
    assert "dimensions" not in embedding_server.requests[0]


def test_retries_429_and_5xx_with_backoff_then_succeeds(embedding_server, tmp_path):
    embedding_server.failures = [429, 500, 503]
    out = hosted(embedding_server, tmp_path).embed(["one", "two"])
    np.testing.assert_allclose(out[1], unit_vector_of("two", 8), rtol=1e-6)
    assert embedding_server.calls == 4
    gaps = [b - a for a, b in zip(embedding_server.started, embedding_server.started[1:])]
    assert all(g >= 0.01 for g in gaps)  # each retry waited


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_other_4xx_is_not_retried(embedding_server, tmp_path, status):
    embedding_server.failures = [status]
    with pytest.raises(EmbeddingError, match=f"HTTP {status}"):
        hosted(embedding_server, tmp_path).embed(["one"])
    assert embedding_server.calls == 1


def test_gives_up_after_max_retries_and_a_timeout_is_retried(embedding_server, tmp_path):
    embedding_server.failures = [500] * 10
    with pytest.raises(EmbeddingError, match="HTTP 500"):
        hosted(embedding_server, tmp_path, max_retries=2).embed(["one"])
    assert embedding_server.calls == 3
    embedding_server.failures, embedding_server.latency = [], 0.5
    with pytest.raises(EmbeddingError, match="could not be reached after 1 retries"):
        hosted(embedding_server, tmp_path, timeout=0.1, max_retries=1).embed(["two"])
    assert embedding_server.calls == 5


def test_batches_by_count_and_by_tokens(embedding_server, tmp_path):
    texts = [f"text number {k}" for k in range(10)]  # 4 cl100k tokens (13 bytes) each
    one_at_a_time = dict(max_concurrency=1, cache=None)  # requests arrive in the order they were packed
    hosted(embedding_server, tmp_path, max_batch_size=4, **one_at_a_time).embed(texts)
    assert [len(r["input"]) for r in embedding_server.requests] == [4, 4, 2]
    embedding_server.requests.clear()
    hosted(embedding_server, tmp_path, max_batch_tokens=8, **one_at_a_time).embed(texts)
    assert [len(r["input"]) for r in embedding_server.requests] == [2] * 5  # counted: the bytes would give 1
    embedding_server.requests.clear()
    hosted(embedding_server, tmp_path, max_batch_tokens=26, **one_at_a_time).embed(texts)
    assert [len(r["input"]) for r in embedding_server.requests] == [6, 4]  # 24 tokens fit, by count
    embedding_server.requests.clear()
    long = "word " * 50  # over the token budget alone: sent alone, never split or dropped
    hosted(embedding_server, tmp_path, max_batch_tokens=7, **one_at_a_time).embed(["a b", long, "c d"])
    assert [r["input"] for r in embedding_server.requests] == [["a b"], [long], ["c d"]]


def test_duplicates_and_empty_texts_cost_no_request(embedding_server, tmp_path):
    used = hosted(embedding_server, tmp_path).embed_with_usage(["same", "", "same", "other"])
    assert embedding_server.texts == ["same", "other"]
    assert np.all(used.vectors[1] == 0) and np.array_equal(used.vectors[0], used.vectors[2])
    assert used.cached.tolist() == [False, False, True, False]
    assert used.columns() == {"embed_texts": 4, "embed_cached_texts": 1, "embed_requests": 1, "embed_tokens": 2}


def test_a_re_run_is_answered_from_the_cache_with_no_request(embedding_server, tmp_path):
    texts = [f"sentence {k}" for k in range(7)]
    first = hosted(embedding_server, tmp_path, max_batch_size=3).embed_with_usage(texts)
    assert embedding_server.calls == 3 and first.columns()["embed_requests"] == 3
    again = hosted(embedding_server, tmp_path, max_batch_size=3).embed_with_usage(texts)
    assert embedding_server.calls == 3  # nothing sent
    assert np.array_equal(first.vectors, again.vectors)
    assert again.columns() == {"embed_texts": 7, "embed_cached_texts": 7, "embed_requests": 0, "embed_tokens": 0}
    # The key is (model, dimensions, text): another model or size asks again.
    hosted(embedding_server, tmp_path, model="other").embed(texts[:1])
    hosted(embedding_server, tmp_path, dimensions=4).embed(texts[:1])
    assert embedding_server.calls == 5


def test_a_failed_call_keeps_what_its_finished_requests_paid_for(embedding_server, tmp_path):
    texts = [f"t{k}" for k in range(4)]
    embedding_server.failures = [200, 401]
    with pytest.raises(EmbeddingError, match="HTTP 401"):
        hosted(embedding_server, tmp_path, max_batch_size=2, max_concurrency=1).embed(texts)
    embedding_server.requests.clear()
    hosted(embedding_server, tmp_path, max_batch_size=2).embed(texts)
    assert embedding_server.texts == ["t2", "t3"]


def test_dimensions_are_asked_for_and_checked(embedding_server, tmp_path):
    e = hosted(embedding_server, tmp_path, dimensions=5)
    assert e.embed(["x"]).shape == (1, 5) and embedding_server.requests[0]["dimensions"] == 5
    assert e.name == "openai:test-embed:5" and e.dimension == 5
    embedding_server.ignore_dimensions, embedding_server.dimension = True, 3  # a server ignoring "dimensions"
    with pytest.raises(EmbeddingError, match=r"\[3\] dimensions; expected 5"):
        HostedEmbedder(model="m", base_url=embedding_server.base_url, dimensions=5, cache=None).embed(["y"])


def test_an_unknown_models_dimension_is_learnt_once(embedding_server, tmp_path):
    e = hosted(embedding_server, tmp_path)
    assert e.dimension == 8 and e.dimension == 8
    assert embedding_server.calls == 1
    assert HostedEmbedder.of("openai:text-embedding-3-large").dimension == 3072  # known: no request


def test_a_server_without_base64_is_asked_for_floats(embedding_server, tmp_path):
    embedding_server.refuse_base64 = True
    e = hosted(embedding_server, tmp_path, cache=None)
    np.testing.assert_allclose(e.embed(["x"])[0], unit_vector_of("x", 8), rtol=1e-6)
    e.embed(["y"])
    assert [r["encoding_format"] for r in embedding_server.requests] == ["base64", "float", "float"]


def test_tokens_are_the_servers_split_by_size_or_ours_without_usage(embedding_server, tmp_path):
    used = hosted(embedding_server, tmp_path, cache=None).embed_with_usage(["a b c", "d"])
    assert used.tokens.tolist() == [3, 1]  # the stub reports words
    embedding_server.usage = False
    used = hosted(embedding_server, tmp_path, cache=None).embed_with_usage(["hello world", "x"])
    assert used.tokens.tolist() == [2, 1]  # cl100k counts
    assert split_tokens(10, [1, 1, 1]) == [4, 3, 3] and split_tokens(5, [0, 0]) == [3, 2]
    assert sum(split_tokens(1001, [7, 13, 2, 0])) == 1001


def test_requests_per_minute_and_tokens_per_minute_space_the_starts(embedding_server, tmp_path):
    hosted(embedding_server, tmp_path, max_batch_size=1, requests_per_minute=600, cache=None).embed(
        [f"s{k}" for k in range(5)])  # one per 0.1 s
    assert embedding_server.started[-1] - embedding_server.started[0] >= 0.3  # 0.4 s, less arrival jitter
    embedding_server.started.clear()
    # 2 tokens a request at 1200 tokens a minute: one start per 0.1 s.
    hosted(embedding_server, tmp_path, max_batch_size=1, tokens_per_minute=1200, cache=None).embed(
        [f"w w{k}" for k in range(5)])
    assert embedding_server.started[-1] - embedding_server.started[0] >= 0.3  # 0.4 s, less arrival jitter


def test_max_concurrency_bounds_requests_in_flight(embedding_server, tmp_path):
    embedding_server.latency = 0.2
    began = time.monotonic()
    hosted(embedding_server, tmp_path, max_batch_size=1, max_concurrency=2, cache=None).embed(
        [f"c{k}" for k in range(4)])
    assert time.monotonic() - began >= 0.4  # two waves of two


def test_the_key_comes_from_the_environment(embedding_server, tmp_path, monkeypatch):
    monkeypatch.setenv("MY_EMBED_KEY", "sk-test")
    hosted(embedding_server, tmp_path, api_key_env="MY_EMBED_KEY", cache=None).embed(["x"])
    assert embedding_server.requests[0]["model"] == "test-embed"
    assert embedding_server.headers[0]["authorization"] == "Bearer sk-test"


def test_spellings_validation_identity_and_pickling():
    assert resolve_embedder("openai:text-embedding-3-small", "embed") == HostedEmbedder()
    e = resolve_embedder({"provider": "openai", "model": "m", "base_url": "http://127.0.0.1:1/v1", "dimensions": 64},
                         "SemanticChunker")
    assert (e.model, e.dimensions, e.name) == ("m", 64, "openai:m:64")
    assert pickle.loads(pickle.dumps(e)) == e
    # Calling options neither change the identity nor the fingerprint an incremental run compares.
    busier = HostedEmbedder(model="m", base_url="http://127.0.0.1:1/v1", dimensions=64, max_concurrency=16)
    assert busier == e and fingerprint(busier) == fingerprint(e) != fingerprint(HostedEmbedder(model="m"))
    with pytest.raises(ConfigError, match="embed.max_concurrency"):
        HostedEmbedder(max_concurrency=0)
    with pytest.raises(ConfigError, match="unknown option 'modle'"):
        HostedEmbedder.of({"modle": "x"})
    with pytest.raises(ConfigError, match="embed.provider"):
        HostedEmbedder(provider="cohere")
    with pytest.raises(ConfigError, match="openai:MODEL"):
        HostedEmbedder.of("openai:")
    assert with_options("openai:m", {"dimensions": 8}) == {"provider": "openai", "model": "m", "dimensions": 8}
    with pytest.raises(ConfigError, match="--embed-dimensions: options of a hosted"):
        with_options("minilm", {"dimensions": 8})


def test_late_refuses_a_hosted_embedder_in_one_line():
    from beam_chunking.strategies.late import LateChunker

    with pytest.raises(ConfigError, match="late chunking pools token vectors") as caught:
        LateChunker(embedder="openai:text-embedding-3-small")
    assert "\n" not in str(caught.value)


def test_semantic_and_cluster_semantic_chunk_with_a_hosted_embedder(embedding_server, tmp_path):
    from beam_chunking.registry import get

    text = "Cats purr softly. Dogs bark loudly. Markets fell today. Bonds rose again. " * 3
    spec = {"provider": "openai", "model": "m", "base_url": embedding_server.base_url, "cache": str(tmp_path / "c")}
    for name in ("semantic", "cluster_semantic"):
        chunks = get(name, embedder=spec, max_chunk_size=60, min_chunk_size=10).chunk(text)
        assert chunks and all(text[c.start:c.end] == c.text for c in chunks)
    assert embedding_server.calls > 0
