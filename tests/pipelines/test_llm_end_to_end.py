"""Propositions, résumés, parent–child, sanitisers and transcripts through the CLI into Parquet.

The chat model is the local OpenAI-compatible test server; the real ``openai`` client and the
real pipeline run against it.
"""
import duckdb
import pytest

from beam_chunking.pipelines.cli import EXIT_OK, main
from beam_chunking.schema import decode_metadata
from beam_chunking.transforms.manifest import read_table, table_files

PROSE = {
    "curie.md": "# Curie\n\nMarie Curie was born in Warsaw. She won two Nobel prizes.\n",
    "lovelace.txt": "Ada Lovelace wrote the first program. She worked with Charles Babbage.\n",
}


@pytest.fixture
def corpus(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name, text in PROSE.items():
        (src / name).write_text(text)
    return src


def run(corpus, out, server, *extra):
    return main(["run", "--input", f"{corpus}/*", "--output", str(out), "--overwrite",
                 "--llm-base-url", server.base_url, "--llm-model", "test", "--llm-retry-initial-delay", "0.01",
                 "--llm-max-retries", "1", *extra])


def rows(out, table):
    return sorted(read_table(str(out), table).to_pylist(), key=lambda r: (r["uri"] or "", r.get("chunk_index") or 0))


def test_propositions_into_parquet_with_every_call_counted(corpus, tmp_path, chat_server, capsys):
    cache = tmp_path / "cache"
    out = tmp_path / "out"
    assert run(corpus, out, chat_server, "--strategy", "proposition", "--llm-cache", str(cache)) == EXIT_OK
    chunks = rows(out, "chunks")
    # The test server answers each sentence of the passage as one proposition.
    assert [c["text"] for c in chunks] == ["# Curie Marie Curie was born in Warsaw.", "She won two Nobel prizes.",
                                           "Ada Lovelace wrote the first program.", "She worked with Charles Babbage."]
    for c in chunks:
        meta = decode_metadata(c["metadata"])
        assert c["chunk_kind"] == "proposition" and meta["rewrite"] is True and c["chunk_id"].endswith(("#1", "#2"))
        assert c["token_count"] > 0 and meta["parent_end"] == c["end"]
    docs = rows(out, "documents")
    assert [(d["llm_calls"], d["llm_cached_calls"], d["llm_fallbacks"]) for d in docs] == [(1, 0, 0), (1, 0, 0)]
    assert all(d["llm_prompt_tokens"] > 0 and d["llm_completion_tokens"] > 0 for d in docs)
    assert "llm:       2 calls (0 from the cache, 0 more failed)" in capsys.readouterr().out
    assert chat_server.calls == 2

    # A re-run with --overwrite pays nothing: every answer comes from the cache.
    assert run(corpus, out, chat_server, "--strategy", "proposition", "--llm-cache", str(cache)) == EXIT_OK
    assert chat_server.calls == 2
    assert [(d["llm_calls"], d["llm_cached_calls"], d["llm_prompt_tokens"]) for d in rows(out, "documents")] == [
        (1, 1, 0), (1, 1, 0)]
    assert rows(out, "chunks") == chunks


def test_a_failing_server_falls_back_to_passages_and_the_job_goes_on(corpus, tmp_path, chat_server):
    chat_server.failures = [500] * 10
    out = tmp_path / "out"
    assert run(corpus, out, chat_server, "--strategy", "proposition", "--llm-cache", "none") == EXIT_OK
    chunks = rows(out, "chunks")
    assert [c["chunk_kind"] for c in chunks] == ["passage", "passage"]
    assert [c["text"] for c in chunks] == [PROSE["curie.md"].strip(), PROSE["lovelace.txt"].strip()]
    assert [(d["status"], d["llm_calls"], d["llm_failed_calls"], d["llm_fallbacks"])
            for d in rows(out, "documents")] == [("ok", 0, 1, 1), ("ok", 0, 1, 1)]


def test_parents_table_joins_children_in_duckdb(corpus, tmp_path, chat_server):
    out = tmp_path / "out"
    assert run(corpus, out, chat_server, "--strategy", "parent_child",
               "--child", "{name: sentence, max_chunk_size: 8, overlap: 0}") == EXIT_OK
    children, parents = table_files(str(out), "chunks"), table_files(str(out), "parents")
    joined = duckdb.sql(f"""
        SELECT c.text AS child, p.text AS parent, c."start" >= p."start" AND c."end" <= p."end" AS inside
        FROM read_parquet({children!r}) c JOIN read_parquet({parents!r}) p ON p.chunk_id = c.parent_id
        ORDER BY c.uri, c.chunk_index""").fetchall()
    assert len(joined) == len(rows(out, "chunks")) > len(rows(out, "parents")) == 2
    assert all(inside for _, _, inside in joined)
    assert all(child in parent for child, parent, _ in joined)


def test_sanitise_redacts_and_says_so(tmp_path, chat_server):
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.txt").write_text("Write to ada@example.org or call +44 20 7946 0958.\n")
    out = tmp_path / "out"
    assert main(["run", "--input", f"{src}/*", "--output", str(out), "--sanitise", "redact"]) == EXIT_OK
    [chunk] = rows(out, "chunks")
    assert chunk["text"] == "Write to [EMAIL] or call [PHONE]."
    assert decode_metadata(chunk["metadata"])["sanitised"] == ["email", "phone"]
    assert chunk["token_count"] == 10  # counted on the sanitised text, not on its source span
    assert (chunk["start"], chunk["end"]) == (0, 50)  # the source span stays


def test_transcripts_chunk_by_time(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    cues = "".join(f"00:00:{k * 10:02d}.000 --> 00:00:{k * 10 + 9:02d}.000\nCue number {k} says something.\n\n"
                   for k in range(6))
    (src / "talk.vtt").write_text("WEBVTT\n\n" + cues)
    out = tmp_path / "out"
    assert main(["run", "--input", f"{src}/*", "--output", str(out), "--strategy", "transcript",
                 "--window-seconds", "30", "--min-chunk-size", "0"]) == EXIT_OK
    chunks = rows(out, "chunks")
    times = [(decode_metadata(c["metadata"])["timestamp_seconds"], decode_metadata(c["metadata"])["timestamp_end_seconds"])
             for c in chunks]
    assert times == [(0.0, 29.0), (30.0, 59.0)] and all(c["page"] is None for c in chunks)


def test_resume_template_end_to_end(tmp_path, chat_server):
    src = tmp_path / "src"
    src.mkdir()
    (src / "cv.txt").write_text("Grace Hopper\nRear admiral. Skills: COBOL, compilers.\n")
    chat_server.answer = lambda system, user: {"contact": {"name": "Grace Hopper"}, "skills": ["COBOL", "compilers"]}
    out = tmp_path / "out"
    assert run(src, out, chat_server, "--strategy", "resume", "--llm-cache", "none") == EXIT_OK
    chunks = rows(out, "chunks")
    assert [c["text"] for c in chunks] == ["Contact: Name: Grace Hopper", "Skills: COBOL, compilers"]
    assert all(c["template"] == "resume" and (c["start"], c["end"]) == (0, 0) for c in chunks)
    [doc] = rows(out, "documents")
    assert (doc["llm_calls"], doc["llm_fallbacks"]) == (1, 0)
