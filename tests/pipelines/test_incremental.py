"""Incremental re-ingestion end to end: unchanged documents keep their rows (embeddings
included) without being parsed, changed and new ones are processed, removed ones are listed
with their chunk ids, on the in-process runner, on two local processes and (integration) on
Beam's DaskRunner with a two-process cluster."""
from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from typing import List

import apache_beam as beam
import pytest
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from beam_chunking.config import JobConfig
from beam_chunking.errors import ConfigError, OutputExistsError
from beam_chunking.pipelines.run import run
from beam_chunking.pipelines.spec import parse_spec
from beam_chunking.strategies import RecursiveChunker
from beam_chunking.transforms import ChunkFiles
from beam_chunking.transforms.manifest import read_manifest, read_table, table_files
from beam_chunking.transforms.pgvector import ApplyChanges, DeleteDocument, DocumentRows
from beam_chunking.types import Chunk, ParsedDocument

from tests.embeddings.fixtures import write_model, write_vocab

MODES = ["in_process", "multi_processing", pytest.param("dask", marks=pytest.mark.integration)]


@pytest.fixture(scope="module")
def dask_address():
    distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=logging.ERROR)
    try:
        yield cluster.scheduler_address
    finally:
        cluster.close()


def runner_args(mode: str, request) -> List[str]:
    if mode == "dask":
        return ["--runner", "DaskRunner", "--dask_client_address", request.getfixturevalue("dask_address")]
    return {"in_process": [], "multi_processing": ["--direct_running_mode", "multi_processing",
                                                   "--direct_num_workers", "2"]}[mode]


def write_corpus(src, n: int = 8) -> None:
    os.makedirs(src, exist_ok=True)
    for i in range(n):
        body = " ".join(f"The cat {j} of file {i} sat on the mat with a dog." for j in range(12 + 4 * i))
        with open(os.path.join(src, f"doc{i:02d}.md"), "w") as f:
            f.write(f"# File {i}\n\n{body}\n")


def rows(out: str, table: str) -> List[dict]:
    key = "chunk_id" if table in ("chunks", "parents") else "document_id"
    return sorted(read_table(out, table).to_pylist(), key=lambda r: r[key])


def changes(out: str) -> dict:
    return {r["uri"].rsplit("/", 1)[-1]: (r["change"], r["delete_chunk_ids"]) for r in rows(out, "changes")}


@pytest.fixture(scope="module")
def embed_spec(tmp_path_factory):
    """The tiny ONNX embedder as spec options (the same model file in every run)."""
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    folder = tmp_path_factory.mktemp("model")
    return f"{{model_path: '{write_model(folder)}', vocab_path: '{write_vocab(folder)}', name: tiny}}"


def spec_file(tmp_path, src, out, *lines) -> str:
    path = tmp_path / f"spec{len(os.listdir(tmp_path))}.yaml"
    path.write_text("\n".join([f"input: '{src}/*'", f"output: '{out}'", *lines]) + "\n")
    return str(path)


@pytest.mark.parametrize("mode", MODES)
def test_nothing_changed_keeps_every_row(mode, tmp_path, request):
    src, out = str(tmp_path / "src"), str(tmp_path / "out")
    write_corpus(src)
    first = run(["--input", f"{src}/*", "--output", out, "--strategy", "recursive", "--max-chunk-size", "200"])
    assert first.changes == {"new": 8, "changed": 0, "unchanged": 0, "deleted": 0}  # a full run: all new
    before = {t: rows(out, t) for t in ("chunks", "documents", "parents")}
    files_before = {t: sorted(open(p, "rb").read() for p in table_files(out, t)) for t in ("chunks", "documents")}
    again = ["--input", f"{src}/*", "--output", out, "--strategy", "recursive", "--max-chunk-size", "200",
             "--incremental"]
    summary = run(again + runner_args(mode, request))
    # No document's rows go, so every previous file is copied as it is, byte for byte.
    assert {t: sorted(open(p, "rb").read() for p in table_files(out, t)) for t in files_before} == files_before
    assert summary.changes == {"new": 0, "changed": 0, "unchanged": 8, "deleted": 0}
    assert "changes:   0 new, 0 changed, 8 unchanged, 0 deleted" in summary.render()
    assert {t: rows(out, t) for t in before} == before
    assert all(r["delete_chunk_ids"] == [] for r in rows(out, "changes"))
    # The previous run's files are gone: only what the new manifest names is left.
    committed = {p for files in read_manifest(out)["tables"].values() for p in files}
    on_disk = {os.path.relpath(os.path.join(d, f), out) for d, _, fs in os.walk(out) for f in fs}
    assert on_disk == committed | {"_manifest.json"}


@pytest.mark.parametrize("mode", MODES)
def test_edited_removed_and_added_files_with_embeddings(mode, tmp_path, embed_spec, request):
    src, out = str(tmp_path / "src"), str(tmp_path / "out")
    write_corpus(src)
    spec = spec_file(tmp_path, src, out, f"embed: {embed_spec}")
    run(["--config", spec])
    before = rows(out, "chunks")
    assert before and all(r["embedding"] is not None for r in before)
    ids_of = {name: sorted(r["chunk_id"] for r in before if r["uri"].endswith(name))
              for name in ("doc02.md", "doc05.md")}
    with open(os.path.join(src, "doc02.md"), "a") as f:
        f.write("\nA new closing line about the bird and the fish.\n")
    os.remove(os.path.join(src, "doc05.md"))
    with open(os.path.join(src, "doc09.md"), "w") as f:
        f.write("# File 9\n\nThe horse and the cow.\n")
    summary = run(["--config", spec, "--incremental"] + runner_args(mode, request))
    assert summary.changes == {"new": 1, "changed": 1, "unchanged": 6, "deleted": 1}
    found = changes(out)
    assert found["doc02.md"] == ("changed", ids_of["doc02.md"])
    assert found["doc05.md"] == ("deleted", ids_of["doc05.md"])
    assert found["doc09.md"] == ("new", [])
    others = [v for k, v in found.items() if k not in ("doc02.md", "doc05.md", "doc09.md")]
    assert others == [("unchanged", [])] * 6
    after = rows(out, "chunks")
    untouched = lambda r: not r["uri"].endswith(("doc02.md", "doc05.md", "doc09.md"))  # noqa: E731
    assert [r for r in after if untouched(r)] == [r for r in before if untouched(r)]  # embeddings identical
    edited = [r for r in after if r["uri"].endswith("doc02.md")]
    assert "bird and the fish" in edited[-1]["text"] and edited[-1]["embedding"] is not None
    assert not [r for r in after if r["uri"].endswith("doc05.md")]
    assert [r["document_id"] for r in rows(out, "documents")] == sorted({r["document_id"] for r in after})


def test_nightly_runs_do_not_gather_small_files(tmp_path):
    """Every run changes a different document: its rows go to a new file each time, until the
    table holds more small files than the limit and the next run merges them."""
    from beam_chunking.transforms.incremental import MERGE_SMALL_FILES

    src, out = str(tmp_path / "src"), str(tmp_path / "out")
    write_corpus(src, n=MERGE_SMALL_FILES + 4)
    args = ["--input", f"{src}/*", "--output", out, "--strategy", "recursive", "--max-chunk-size", "200"]
    run(args)
    counts = []
    for night in range(MERGE_SMALL_FILES + 2):
        with open(os.path.join(src, f"doc{night:02d}.md"), "a") as f:
            f.write(f"\nNight {night}: the cat moved to the sofa.\n")
        summary = run(args + ["--incremental"])
        assert summary.changes["changed"] == 1 and summary.changes["unchanged"] == MERGE_SMALL_FILES + 3
        counts.append(len(table_files(out, "chunks")))
    # One file more each night, until the run that finds more than the limit merges them all
    # into one (beside that night's new file).
    assert counts == [*range(2, MERGE_SMALL_FILES + 2), 2, 3], counts
    fresh = str(tmp_path / "fresh")
    run(["--input", f"{src}/*", "--output", fresh, "--strategy", "recursive", "--max-chunk-size", "200"])
    for table in ("chunks", "documents"):
        assert {r["document_id"] for r in rows(out, table)} == {r["document_id"] for r in rows(fresh, table)}
    assert [(r["chunk_id"], r["text"]) for r in rows(out, "chunks")] == [
        (r["chunk_id"], r["text"]) for r in rows(fresh, "chunks")]


def test_changed_strategy_option_changes_every_document(tmp_path):
    src, out = str(tmp_path / "src"), str(tmp_path / "out")
    write_corpus(src, 4)
    run(["--input", f"{src}/*", "--output", out, "--strategy", "recursive", "--max-chunk-size", "200"])
    chunks = rows(out, "chunks")
    previous = {d["document_id"]: sorted(c["chunk_id"] for c in chunks if c["document_id"] == d["document_id"])
                for d in rows(out, "documents")}
    summary = run(["--input", f"{src}/*", "--output", out, "--strategy", "recursive", "--max-chunk-size", "150",
                   "--incremental"])
    assert summary.changes == {"new": 0, "changed": 4, "unchanged": 0, "deleted": 0}
    assert {r["document_id"]: r["delete_chunk_ids"] for r in rows(out, "changes")} == previous
    assert max(len(r["text"]) for r in rows(out, "chunks")) <= 150


def test_changed_job_option_changes_every_document(tmp_path):
    src, out = str(tmp_path / "src"), str(tmp_path / "out")
    write_corpus(src, 3)
    # recursive: a strategy sized in characters, whose token counts come from the token counter
    run(["--input", f"{src}/*", "--output", out, "--strategy", "recursive"])
    summary = run(["--input", f"{src}/*", "--output", out, "--strategy", "recursive", "--token-counter", "none",
                   "--incremental"])
    assert summary.changes["changed"] == 3
    assert all(r["token_count"] is None for r in rows(out, "chunks"))


class Crash(BaseException):
    """Not an Exception: a stage lets it through, so the pipeline fails."""


@dataclass(frozen=True)
class CrashingChunker(RecursiveChunker):
    """Recursive chunking that crashes the job on ``doc03.md``."""

    name = "crashing_recursive"

    def chunk_document(self, doc: ParsedDocument) -> List[Chunk]:
        if doc.uri.endswith("doc03.md"):
            raise Crash("injected crash")
        return super().chunk_document(doc)


def test_crash_before_commit_leaves_previous_output(tmp_path):
    src, out = str(tmp_path / "src"), str(tmp_path / "out")
    write_corpus(src, 5)
    run(["--input", f"{src}/*", "--output", out])
    manifest, tables = read_manifest(out), {t: rows(out, t) for t in ("chunks", "documents", "changes")}
    with open(os.path.join(src, "doc01.md"), "a") as f:
        f.write("\nAn edit.\n")
    config = JobConfig.of(input=f"{src}/*", output=out, strategy=CrashingChunker(), incremental=True)
    with pytest.raises((Exception, Crash), match="injected crash"):
        with beam.Pipeline(options=PipelineOptions(["--runner", "FnApiRunner"])) as p:
            p | ChunkFiles(config=config)
    assert read_manifest(out) == manifest
    assert {t: rows(out, t) for t in tables} == tables


def test_incremental_needs_a_previous_output_or_an_empty_folder(tmp_path):
    src, out = str(tmp_path / "src"), tmp_path / "out"
    write_corpus(src, 2)
    assert run(["--input", f"{src}/*", "--output", str(out), "--incremental"]).changes["new"] == 2  # first run
    stranger = tmp_path / "stranger"
    stranger.mkdir()
    (stranger / "notes.txt").write_text("not an output")
    with pytest.raises(OutputExistsError, match="no _manifest.json.*--overwrite"):
        run(["--input", f"{src}/*", "--output", str(stranger), "--incremental"])
    with pytest.raises(ConfigError, match="num_shards"):
        ChunkFiles(config=JobConfig.of(input=f"{src}/*", output=str(out), incremental=True, num_shards=2))
    with pytest.raises(ConfigError, match="incremental: expected true or false"):
        parse_spec({"incremental": "yes"})
    assert parse_spec({"incremental": True}).incremental


@pytest.mark.skipif(os.name != "posix", reason="needs a file name that is not valid UTF-8")
@pytest.mark.parametrize("mode", ["in_process", "multi_processing"])
def test_a_name_that_is_not_valid_utf8_is_compared_like_any_other(mode, tmp_path, request):
    src, out = tmp_path / "src", str(tmp_path / "out")
    write_corpus(str(src), 2)
    with open(os.fsencode(str(src)) + b"/bad\xff.md", "wb") as f:
        f.write(b"# Odd name\n\nThe fox and the hen.\n")
    assert run(["--input", f"{src}/*", "--output", out]).changes["new"] == 3
    with open(src / "doc00.md", "a") as f:
        f.write("\nOne more line.\n")
    summary = run(["--input", f"{src}/*", "--output", out, "--incremental"] + runner_args(mode, request))
    assert summary.changes == {"new": 0, "changed": 1, "unchanged": 2, "deleted": 0}
    assert changes(out)["bad%FF.md"] == ("unchanged", [])


def test_a_manifest_without_a_documents_table_is_not_compared_with(tmp_path):
    src, out = str(tmp_path / "src"), str(tmp_path / "out")
    write_corpus(src, 2)
    run(["--input", f"{src}/*", "--output", out])
    path = os.path.join(out, "_manifest.json")
    with open(path) as f:
        manifest = json.load(f)
    del manifest["tables"]["documents"]
    with open(path, "w") as f:
        json.dump(manifest, f)
    summary = run(["--input", f"{src}/*", "--output", out, "--incremental"])
    assert summary.changes == {"new": 2, "changed": 0, "unchanged": 0, "deleted": 0}
    chunk_ids = [r["chunk_id"] for r in rows(out, "chunks")]
    assert chunk_ids and len(chunk_ids) == len(set(chunk_ids))  # replaced, not copied beside the new rows


def test_apply_changes_gives_the_sink_its_inputs():
    chunk = {"chunk_id": "b:0000000000", "document_id": "b", "start": 0}
    change_rows = [{"document_id": d, "uri": f"/{d}", "change": c, "delete_chunk_ids": []}
                   for d, c in (("a", "unchanged"), ("b", "changed"), ("c", "deleted"), ("d", "new"))]
    chunks = [{"chunk_id": "a:0000000000", "document_id": "a", "start": 0}, chunk]
    with TestPipeline() as p:
        out = (p | "Changes" >> beam.Create(change_rows), p | "Chunks" >> beam.Create(chunks)) | ApplyChanges()
        assert_that(out, equal_to([DocumentRows("b", (chunk,)), DeleteDocument("c"), DocumentRows("d", ())]))


@pytest.mark.parametrize("mode", MODES)
def test_apply_changes_keeps_pgvector_equal_to_the_chunks_table(mode, tmp_path, embed_spec, request):
    """A store fed from each run through ApplyChanges holds exactly the output's chunks, on
    every runner: several workers stream their batches (of 8 rows, so a run has several) at
    once, and each one creates the table if it is missing."""
    psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed")
    from apache_beam.io.parquetio import ReadAllFromParquet

    from beam_chunking.pipelines.run import resolve_runner
    from beam_chunking.transforms import table_files
    from beam_chunking.transforms.pgvector import WriteToPgVector
    from tests.pg_server import PgServer, find_binaries

    bin_dir, why = find_binaries()
    if bin_dir is None:
        pytest.skip(why)
    src, out = str(tmp_path / "src"), str(tmp_path / "out")
    write_corpus(src, 4)
    spec = spec_file(tmp_path, src, out, f"embed: {embed_spec}")
    with PgServer(bin_dir) as pg:
        for incremental in (False, True):
            run(["--config", spec] + (["--incremental"] if incremental else []))
            options = PipelineOptions(runner_args(mode, request) if mode != "in_process" else ["--runner", "FnApiRunner"])
            resolve_runner(options)  # as the command line does: DaskRunner by its short name
            with beam.Pipeline(options=options) as p:
                tables = [p | f"{t}Files" >> beam.Create(table_files(out, t)) | f"Read{t}" >> ReadAllFromParquet()
                          for t in ("changes", "chunks")]
                tuple(tables) | ApplyChanges() | WriteToPgVector(pg.dsn, "chunks", create=True, dimension=16,
                                                                 batch_size=8)
            with psycopg.connect(pg.dsn) as conn:
                stored = conn.execute("SELECT chunk_id, text FROM chunks ORDER BY chunk_id").fetchall()
            assert stored == [(r["chunk_id"], r["text"]) for r in rows(out, "chunks")]
            with open(os.path.join(src, "doc01.md"), "a") as f:  # the next run: one edited, one gone
                f.write("\nThe fox and the wolf.\n")
            if not incremental:
                os.remove(os.path.join(src, "doc03.md"))
        assert changes(out)["doc03.md"][0] == "deleted"


def test_the_watchdog_switch_is_not_part_of_the_options_fingerprint():
    from beam_chunking.parsers.limits import ParseLimits
    from beam_chunking.transforms.incremental import options_fingerprint

    base = options_fingerprint(JobConfig())
    assert options_fingerprint(JobConfig(limits=ParseLimits(watchdog=False))) == base
    assert options_fingerprint(JobConfig(limits=ParseLimits(max_pages=10))) != base
