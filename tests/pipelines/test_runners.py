"""The same job on every runner gives the same tables: the in-process runner, two local
processes, the BundleBasedDirectRunner, and Beam's DaskRunner on a real two-process
``dask.distributed.LocalCluster``. Each also keeps the accounting exact, spreads documents
over its workers, and publishes nothing after an injected failure.
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import List

import apache_beam as beam
import pytest
from apache_beam.options.pipeline_options import PipelineOptions

from beam_chunking.pipelines.run import release, resolve_runner, run
from beam_chunking.default_strategy import default_strategy
from beam_chunking.strategies import RecursiveChunker
from beam_chunking.transforms import ChunkDocuments, ParseDocuments, ReadDocuments, WriteChunkTable
from beam_chunking.transforms.manifest import read_manifest, read_table
from beam_chunking.types import Chunk, ParsedDocument
from tests.parsers.fixtures import pdf_bytes

distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")
MODES = ["in_process", "multi_processing", "bundle_based", "dask"]


@pytest.fixture(scope="module")
def dask_address():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=logging.ERROR)
    try:
        yield cluster.scheduler_address
    finally:
        cluster.close()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """40 Markdown files of different sizes, the examples, one empty file, one fake PDF and a real one."""
    src = tmp_path_factory.mktemp("corpus")
    for i in range(40):
        body = "".join(f"Sentence {j} of document {i} talks about topic {i % 7}. " for j in range(20 + 15 * (i % 9)))
        (src / f"doc{i:02d}.md").write_text(f"# Document {i}\n\n{body}\n\n## Details\n\n{body[:300]}\n")
    for name in os.listdir(EXAMPLES):
        (src / name).write_bytes(open(os.path.join(EXAMPLES, name), "rb").read())
    (src / "empty.txt").write_bytes(b"")
    (src / "broken.pdf").write_bytes(b"%PDF-1.4\nnot really")
    # A PDF whose paragraphs run over page turns: its chunks' boxes and page ranges too must
    # be the same on every runner.
    prose = " ".join(f"Line {k} of the printed report says something about part {k % 5}." for k in range(160))
    (src / "report.pdf").write_bytes(pdf_bytes([prose[:4000], prose[4000:]]))
    return str(src)


def runner_args(mode: str, dask_address: str) -> List[str]:
    return {
        "in_process": [],
        "multi_processing": ["--direct_running_mode", "multi_processing", "--direct_num_workers", "2"],
        "bundle_based": ["--runner", "BundleBasedDirectRunner"],
        "dask": ["--runner", "DaskRunner", "--dask_client_address", dask_address],
    }[mode]


def sorted_rows(output: str, table: str, key: str) -> list:
    return sorted(read_table(output, table).to_pylist(), key=lambda r: r[key])


@pytest.fixture(scope="module")
def baseline(corpus, tmp_path_factory):
    out = str(tmp_path_factory.mktemp("baseline") / "out")
    run(["--input", f"{corpus}/*", "--output", out])
    return sorted_rows(out, "chunks", "chunk_id"), sorted_rows(out, "documents", "document_id")


@pytest.mark.integration
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("num_shards", [0, 3])
def test_same_tables_on_every_runner(mode, num_shards, corpus, baseline, dask_address, tmp_path):
    out = str(tmp_path / "out")
    args = ["--input", f"{corpus}/*", "--output", out, "--num-shards", str(num_shards)]
    summary = run(args + runner_args(mode, dask_address))
    chunks, documents = baseline
    pdf = [c for c in chunks if c["uri"].endswith("report.pdf")]
    assert pdf and all(c["boxes"] for c in pdf) and any(c["page_end"] > c["page"] for c in pdf)
    assert sorted_rows(out, "chunks", "chunk_id") == chunks
    assert sorted_rows(out, "documents", "document_id") == documents
    files = len(os.listdir(corpus))
    assert (summary.documents, summary.ok, summary.empty, summary.failed) == (files, files - 2, 1, 1)
    assert summary.chunks == len(chunks)
    if num_shards:
        assert [len(summary.tables[t]) for t in ("chunks", "documents")] == [num_shards, num_shards]


@pytest.mark.integration
@pytest.mark.parametrize("mode", MODES)
def test_a_run_that_reads_no_document_still_commits_empty_tables(mode, corpus, dask_address, tmp_path):
    """The commit runs once also when no bundle reports a file (every matched file is
    excluded here): as one element reading the reports as a side input, or, on Dask, as the
    one group of a shuffle with a sentinel."""
    out = str(tmp_path / "out")
    summary = run(["--input", f"{corpus}/*", "--output", out, "--exclude", "*"] + runner_args(mode, dask_address))
    assert (summary.documents, summary.chunks) == (0, 0)
    assert all(read_table(out, t).num_rows == 0 for t in ("chunks", "documents"))
    assert os.path.isfile(os.path.join(out, "_manifest.json"))


@dataclass(frozen=True)
class PidChunker(RecursiveChunker):
    """Recursive chunking that stamps the worker process id on every chunk."""

    name = "pid_recursive"

    def chunk_document(self, doc: ParsedDocument) -> List[Chunk]:
        import dataclasses

        pid = os.getpid()
        return [dataclasses.replace(c, metadata={**c.metadata, "worker_pid": pid}) for c in super().chunk_document(doc)]


def run_stages(mode: str, dask_address: str, input: str, output: str, *middle, strategy=None, **write) -> None:
    """Run Read | Parse | Chunk | middle... | Write on ``mode``'s runner."""
    options = PipelineOptions(runner_args(mode, dask_address))
    resolve_runner(options)
    p = beam.Pipeline(options=options)
    docs = p | ReadDocuments(input) | ParseDocuments() | ChunkDocuments(strategy or default_strategy())
    for i, step in enumerate(middle):
        docs = docs | f"Middle{i}" >> step
    docs | WriteChunkTable(output, **write)
    result = p.run()
    try:
        result.wait_until_finish()
    finally:
        release(result)


@pytest.mark.integration
@pytest.mark.parametrize("mode", ["multi_processing", "dask"])
def test_documents_spread_over_workers(mode, corpus, dask_address, tmp_path):
    out = str(tmp_path / "out")
    run_stages(mode, dask_address, f"{corpus}/*", out, strategy=PidChunker())
    from beam_chunking.schema import decode_metadata

    per_document = {r["document_id"]: decode_metadata(r["metadata"])["worker_pid"] for r in read_table(out).to_pylist()}
    per_worker = {pid: list(per_document.values()).count(pid) for pid in set(per_document.values())}
    assert len(per_worker) == 2, per_worker
    if mode == "multi_processing":  # a static split; Dask balances dynamically (a busy worker takes less)
        assert min(per_worker.values()) >= len(per_document) // 5, per_worker


def explode_on(doc):
    if not isinstance(doc, ParsedDocument) and getattr(doc, "uri", "").endswith("doc17.md"):
        raise RuntimeError("injected failure")
    return doc


@pytest.mark.integration
@pytest.mark.parametrize("mode", MODES)
def test_failed_run_publishes_nothing(mode, corpus, dask_address, tmp_path):
    out = str(tmp_path / "out")
    run(["--input", f"{corpus}/doc0*.md", "--output", out])
    before = read_manifest(out)
    rows = sorted_rows(out, "chunks", "chunk_id")
    with pytest.raises(Exception, match="injected failure"):
        run_stages(mode, dask_address, f"{corpus}/*", out, beam.Map(explode_on), overwrite=True)
    assert read_manifest(out) == before
    assert sorted_rows(out, "chunks", "chunk_id") == rows


def die_once(doc, marker: str):
    """Kill this worker process the first time ``doc07.md`` comes by."""
    if getattr(doc, "uri", "").endswith("doc07.md") and not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(1)
    return doc


@pytest.mark.integration
def test_dask_worker_killed_mid_run_still_gives_the_same_tables(corpus, baseline, dask_address, tmp_path):
    """Dask reruns the lost partitions on another worker: their first attempts' files are
    orphans that no committed bundle names, so nothing is duplicated or lost."""
    out = str(tmp_path / "out")
    run_stages("dask", dask_address, f"{corpus}/*", out, beam.Map(die_once, str(tmp_path / "died")))
    assert os.path.exists(tmp_path / "died")
    chunks, documents = baseline
    pdf = [c for c in chunks if c["uri"].endswith("report.pdf")]
    assert pdf and all(c["boxes"] for c in pdf) and any(c["page_end"] > c["page"] for c in pdf)
    assert sorted_rows(out, "chunks", "chunk_id") == chunks
    assert sorted_rows(out, "documents", "document_id") == documents
    committed = {p for files in read_manifest(out)["tables"].values() for p in files}
    on_disk = {os.path.relpath(os.path.join(d, f), out) for d, _, fs in os.walk(out) for f in fs}
    assert on_disk == committed | {"_manifest.json"}  # the orphans were removed


@pytest.mark.integration
def test_embedding_on_dask_matches_in_process(corpus, dask_address, tmp_path):
    """EmbedChunks emits from process() on Dask (which drops finish_bundle output), so no
    document is lost there and the vectors match the in-process run's."""
    pytest.importorskip("onnxruntime")
    import numpy as np

    tables = {}
    for mode in ("in_process", "dask"):
        out = str(tmp_path / mode)
        spec = tmp_path / f"{mode}.yaml"
        spec.write_text(f"input: '{corpus}/doc0*.md'\noutput: '{out}'\nembed: minilm\n")
        summary = run(["--config", str(spec)] + runner_args(mode, dask_address))
        assert (summary.documents, summary.ok) == (10, 10)
        tables[mode] = sorted_rows(out, "chunks", "chunk_id")
    local, dask = tables["in_process"], tables["dask"]
    assert [r["chunk_id"] for r in local] == [r["chunk_id"] for r in dask] and local
    for a, b in zip(local, dask):
        assert b["embedding"] is not None and np.allclose(a["embedding"], b["embedding"], atol=1e-5)
