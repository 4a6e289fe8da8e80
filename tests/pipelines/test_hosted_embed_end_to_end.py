"""``beam-chunking run --embed openai:MODEL`` into Parquet, against the local /v1/embeddings server.

The real ``openai`` client and the real pipeline run against the stub; what is asserted is
read back from the committed tables and the printed summary.
"""
import numpy as np

from beam_chunking.embeddings.hosted_client import PROBE_TEXT
from beam_chunking.pipelines.cli import EXIT_OK, EXIT_TOO_MANY_FAILURES, EXIT_USAGE, main
from beam_chunking.schema import EMBED_COLUMNS
from beam_chunking.transforms.manifest import read_table
from tests.embeddings.server import unit_vector_of
from tests.pipelines.test_llm_end_to_end import corpus  # noqa: F401 - the same two files, a fixture


def run(corpus, out, server, cache, *extra):
    return main(["run", "--input", f"{corpus}/*", "--output", str(out), "--strategy", "sentence",
                 "--max-chunk-size", "12", "--overlap", "0", "--embed", "openai:test-embed",
                 "--embed-base-url", server.base_url, "--embed-cache", str(cache),
                 "--embed-retry-initial-delay", "0.01", *extra])


def rows(out, table):
    return sorted(read_table(str(out), table).to_pylist(), key=lambda r: (r["uri"] or "", r.get("chunk_index") or 0))


def counters(out):
    return [tuple(d[k] for k in EMBED_COLUMNS) for d in rows(out, "documents")]


def test_embeds_through_retries_counts_and_reruns_from_the_cache(corpus, tmp_path, embedding_server, capsys):
    out, cache = tmp_path / "out", tmp_path / "cache"
    embedding_server.failures = [429, 500]  # the first request is retried twice, then answered
    assert run(corpus, out, embedding_server, cache) == EXIT_OK
    chunks = rows(out, "chunks")
    per_doc = [d["chunk_count"] for d in rows(out, "documents")]
    for c in chunks:
        np.testing.assert_allclose(c["embedding"], unit_vector_of(c["text"], 8), rtol=1e-5)
    # The model's dimension is unknown: one probe per worker process, retried, then the chunks.
    sent = embedding_server.calls
    assert embedding_server.texts[0] == PROBE_TEXT and embedding_server.requests[2]["input"] == [PROBE_TEXT]
    assert sorted(embedding_server.texts[3:]) == sorted(c["text"] for c in chunks)
    docs = counters(out)
    assert [d[:2] for d in docs] == [(n, 0) for n in per_doc] and sum(d[2] for d in docs) == sent - 3
    assert sum(d[3] for d in docs) == sum(len(c["text"].split()) for c in chunks)  # the stub's tokens: words
    printed = capsys.readouterr().out
    assert f"embed:     {sent - 3} requests for {len(chunks)} texts (0 from the cache)" in printed

    # --overwrite pays nothing: every vector comes from the cache.
    assert run(corpus, out, embedding_server, cache, "--overwrite") == EXIT_OK
    assert embedding_server.calls == sent
    assert counters(out) == [(n, n, 0, 0) for n in per_doc]
    assert [c["embedding"] for c in rows(out, "chunks")] == [c["embedding"] for c in chunks]

    # An incremental run copies unchanged documents (their rows, vectors and counters): only
    # the new one is embedded. With nothing changed, no request at all.
    (corpus / "new.txt").write_text("Brand new words here.\n")
    assert run(corpus, out, embedding_server, cache, "--incremental") == EXIT_OK
    assert embedding_server.texts[-1:] == ["Brand new words here."] and embedding_server.calls == sent + 1
    assert run(corpus, out, embedding_server, cache, "--incremental") == EXIT_OK
    assert embedding_server.calls == sent + 1


def test_a_refused_request_fails_its_documents_at_embed(corpus, tmp_path, embedding_server, capsys):
    embedding_server.failures = [401] * 5
    out = tmp_path / "out"
    # Asking the model its dimension is refused: nothing could be embedded, the job stops at once.
    assert run(corpus, out, embedding_server, "none") == EXIT_USAGE  # one line: what the server said
    assert "HTTP 401" in capsys.readouterr().err
    assert embedding_server.calls == 1
    # With dimensions given there is no probe: each refused request fails its documents.
    assert run(corpus, out, embedding_server, "none", "--embed-dimensions", "8") == EXIT_TOO_MANY_FAILURES
    docs = rows(out, "documents")
    assert {(d["status"], d["stage"], d["error_type"]) for d in docs} == {("failed", "embed", "EmbeddingError")}
    assert "HTTP 401" in docs[0]["error_message"]
    assert embedding_server.calls <= 3  # one per bundle of documents, never retried


def test_the_spec_form_and_its_dimensions(corpus, tmp_path, embedding_server):
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"input: {corpus}/*\noutput: {tmp_path / 'out'}\nstrategy: {{name: sentence, max_chunk_size: 12, "
                    f"overlap: 0}}\nembed: {{provider: openai, model: test-embed, base_url: '{embedding_server.base_url}',"
                    f" dimensions: 4, cache: none, max_batch_size: 1}}\n")
    assert main(["run", "--config", str(spec)]) == EXIT_OK
    chunks = rows(tmp_path / "out", "chunks")
    assert all(len(c["embedding"]) == 4 for c in chunks)
    assert {r["dimensions"] for r in embedding_server.requests} == {4}
    assert all(len(r["input"]) == 1 for r in embedding_server.requests)


def test_two_local_processes(corpus, tmp_path, embedding_server):
    out = tmp_path / "out"
    assert run(corpus, out, embedding_server, "none", "--direct_num_workers", "2",
               "--direct_running_mode", "multi_processing") == EXIT_OK
    assert all(c["embedding"] is not None for c in rows(out, "chunks"))
    assert [d[0] for d in counters(out)] == [d["chunk_count"] for d in rows(out, "documents")]


def test_the_beam_yaml_transform_takes_the_mapping(embedding_server):
    import apache_beam as beam
    from apache_beam.testing.util import assert_that

    from beam_chunking.pipelines.yaml_provider import ChunkText

    text = "One sentence here. Another sentence there. " * 5
    embed = {"provider": "openai", "model": "m", "base_url": embedding_server.base_url, "dimensions": 6,
             "cache": "none"}

    def check(rows):
        assert len(rows) > 1 and all(len(r.embedding) == 6 for r in rows)
        assert all(r.metadata["embedding_model"].str == "openai:m:6" for r in rows)

    with beam.Pipeline(runner="FnApiRunner") as p:
        rows = p | beam.Create([beam.Row(id="a", body=text)])
        assert_that(rows | ChunkText(id_field="id", text_field="body", embed=embed,
                                     strategy={"name": "sentence", "max_chunk_size": 8, "overlap": 0}), check)
    assert embedding_server.calls >= 1
