"""End-to-end runs of the CLI into tmp_path, read back with pyarrow."""
import os
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from beam_chunking.errors import ConfigError
from beam_chunking.pipelines.cli import EXIT_TOO_MANY_FAILURES, EXIT_USAGE, main
from beam_chunking.pipelines.spec import load_spec, parse_spec
from beam_chunking.strategies import Router, SentenceChunker
from beam_chunking.transforms.manifest import read_manifest, table_files
from tests.helpers import parsed_text

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")


def files_under(folder):
    return sorted(os.path.relpath(os.path.join(d, f), folder) for d, _, fs in os.walk(folder) for f in fs)


def read(out, table):
    return pq.read_table(os.path.join(out, table)).to_pylist()


def make_corpus(folder, n):
    os.makedirs(folder, exist_ok=True)
    for i in range(n):
        with open(os.path.join(folder, f"doc{i:03d}.md"), "w") as f:
            f.write(f"# Doc {i}\n\n" + "Sentence about topic %d. " % i * 60 + "\n\n## Part\n\nMore words.\n")


def test_cli_run_examples(tmp_path, capsys):
    out = str(tmp_path / "out")
    assert main(["run", "--input", os.path.join(EXAMPLES, "*"), "--output", out]) == 0
    printed = capsys.readouterr().out
    assert "documents: 5 in, 5 ok, 0 empty, 0 failed" in printed and "MB/s" in printed
    chunks = read(out, "chunks")
    # offsets refer to the parsed text (for HTML the text the parser extracted)
    texts = {name: parsed_text(os.path.join(EXAMPLES, name)) for name in os.listdir(EXAMPLES)}
    for c in chunks:
        assert c["text"] == texts[os.path.basename(c["uri"])][c["start"]:c["end"]]
        assert c["token_count"] > 0 and c["chunk_count"] >= 1
    md = [c for c in chunks if c["uri"].endswith("chunking-basics.md")]
    assert any(c["section_path"] == ["Chunking basics", "Overlap", "Measuring overlap"] for c in md)
    html = [c for c in chunks if c["uri"].endswith(".html")]
    assert any(c["chunk_kind"] == "table" and "| Chain | every 500 km |" in c["text"] for c in html)
    assert not any("analytics" in c["text"] or "Workshop home" in c["text"] for c in html)


def test_rerun_with_fewer_documents_leaves_no_stale_chunks(tmp_path):
    src, out = str(tmp_path / "src"), str(tmp_path / "out")
    make_corpus(src, 30)
    assert main(["run", "--input", f"{src}/*", "--output", out, "--num-shards", "3"]) == 0
    assert len({c["document_id"] for c in read(out, "chunks")}) == 30
    for name in sorted(os.listdir(src))[5:]:
        os.remove(os.path.join(src, name))
    # a non-empty output is refused without --overwrite and left intact
    assert main(["run", "--input", f"{src}/*", "--output", out]) == 2
    assert len(read(out, "documents")) == 30
    # 25 of 30 documents go: over the default --max-deletions, so it is allowed here
    assert main(["run", "--input", f"{src}/*", "--output", out, "--overwrite", "--num-shards", "1",
                 "--max-deletions", "25"]) == 0
    assert len({c["document_id"] for c in read(out, "chunks")}) == 5
    assert len(read(out, "documents")) == 5
    manifest = read_manifest(out)
    committed = sorted(p for files in manifest["tables"].values() for p in files)
    assert [f for f in files_under(out) if f.endswith(".parquet")] == committed  # nothing of the first run
    tables = ("changes", "chunks", "documents", "parents")
    assert [p.split("/")[:2] for p in committed] == [[t, manifest["run_id"]] for t in tables]


def test_overwrite_removes_only_what_runs_wrote(tmp_path):
    src, out = str(tmp_path / "src"), tmp_path / "out"
    make_corpus(src, 3)
    mine = ["chunks/README.md", "documents/notes/deep/keep.parquet", "chunks/run-2019-backup/old.parquet",
            "notes.txt"]
    for name in mine:
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text("mine")
    for _ in range(2):
        assert main(["run", "--input", f"{src}/*", "--output", str(out), "--overwrite"]) == 0
        committed = [p for files in read_manifest(str(out))["tables"].values() for p in files]
        assert files_under(out) == sorted(["_manifest.json", *committed, *mine])
    assert all((out / name).read_text() == "mine" for name in mine)


def test_failed_run_keeps_previous_output(tmp_path):
    src, out = str(tmp_path / "src"), str(tmp_path / "out")
    make_corpus(src, 3)
    assert main(["run", "--input", f"{src}/*", "--output", out]) == 0
    before = files_under(out)
    # an input pattern that matches nothing is refused before any work
    assert main(["run", "--input", f"{tmp_path}/nothing/*", "--output", out, "--overwrite"]) == EXIT_USAGE
    assert files_under(out) == before
    assert len(read(out, "documents")) == 3


def test_bad_input_counts_add_up(tmp_path):
    src, out = tmp_path / "src", str(tmp_path / "out")
    src.mkdir()
    (src / "garbage.txt").write_bytes(os.urandom(2048) + b"\x00")
    (src / "empty.txt").write_bytes(b"")
    (src / "noise.txt").write_bytes(b"ca\x81\x02")  # neither UTF-8 nor any legacy encoding
    (src / "paper.pdf").write_bytes(b"%PDF-1.4\n%binary")
    (src / "archive.zip").write_bytes(b"PK\x03\x04rest")
    (src / "good.md").write_bytes(b"# Fine\n\nA good document.\n")
    assert main(["run", "--input", f"{src}/*", "--output", out]) == EXIT_TOO_MANY_FAILURES
    docs = {os.path.basename(d["uri"]): d for d in read(out, "documents")}
    assert len(docs) == 6
    assert {k: d["status"] for k, d in docs.items()} == {
        "garbage.txt": "failed", "empty.txt": "empty", "noise.txt": "failed", "paper.pdf": "failed",
        "archive.zip": "failed", "good.md": "ok"}
    assert "byte offset 2" in docs["noise.txt"]["error_message"]
    assert docs["paper.pdf"]["error_type"] == "ParseError" and "truncated" in docs["paper.pdf"]["error_message"]
    assert docs["archive.zip"]["error_type"] == "UnsupportedContentType"
    assert all(d["stage"] == "parse" for d in docs.values() if d["status"] == "failed")


def test_replace_policy_counts_and_zstd_output(tmp_path):
    src, out = tmp_path / "src", str(tmp_path / "out")
    src.mkdir()
    (src / "noise.txt").write_bytes(b"ok \x81\x02\xfe")  # neither UTF-8 nor any legacy encoding
    assert main(["run", "--input", f"{src}/*", "--output", out, "--decode-errors", "replace"]) == 0
    [doc] = read(out, "documents")
    assert doc["status"] == "ok" and doc["decode_replacements"] == 2
    assert (doc["encoding"], doc["encoding_confidence"]) == ("utf-8", 0.0)
    meta = pq.ParquetFile(table_files(out, "chunks")[0]).metadata
    assert meta.row_group(0).column(0).compression == "ZSTD"


def test_flags_overlay_the_spec_strategy(tmp_path):
    from beam_chunking.pipelines.options import ChunkingOptions
    from beam_chunking.pipelines.run import spec_from_options
    from beam_chunking.strategies import TokenChunker

    spec = tmp_path / "spec.yaml"
    spec.write_text("input: a/*\noutput: b\nstrategy: {name: token, max_chunk_size: 64, overlap: 8}\n")
    opts = ChunkingOptions(["--config", str(spec), "--strategy-option", "overlap=4"])
    assert spec_from_options(opts).strategy == TokenChunker(max_chunk_size=64, overlap=4)
    opts = ChunkingOptions(["--config", str(spec), "--strategy", "fixed", "--max-chunk-size", "100"])
    assert spec_from_options(opts).strategy.max_chunk_size == 100
    with pytest.raises(ConfigError, match=r"strategy\.overlap"):
        spec_from_options(ChunkingOptions(["--config", str(spec), "--strategy-option", "overlap=64"]))


def test_spec_validation_names_key_paths(tmp_path):
    with pytest.raises(ConfigError, match=r"routes\.text/markdown\.max_chunk_size"):
        parse_spec({"routes": {"text/markdown": {"name": "sentence", "max_chunk_size": 2}}})
    with pytest.raises(ConfigError, match=r"strategy\.sizee: unknown option"):
        parse_spec({"strategy": {"name": "recursive", "sizee": 3}})
    with pytest.raises(ConfigError, match="unknown key 'inputs'"):
        parse_spec({"inputs": "x"})
    with pytest.raises(ConfigError, match="compression"):
        parse_spec({"compression": "lz9"})
    with pytest.raises(ConfigError, match=r"limits\.max_pages: .*positive number, got 0"):
        parse_spec({"limits": {"max_pages": 0}})
    with pytest.raises(ConfigError, match=r"limits\.max_pagez: unknown limit"):
        parse_spec({"limits": {"max_pagez": 3}})
    with pytest.raises(ConfigError, match="max_bytes: expected a positive integer"):
        parse_spec({"max_bytes": "1MB"})
    assert parse_spec({"limits": {"max_rows": 10}, "max_bytes": 99}).limits.max_rows == 10
    assert parse_spec({"limits": {"watchdog": False}}).limits.watchdog is False
    with pytest.raises(ConfigError, match=r"limits\.watchdog: .*must be true or false, got 'off'"):
        parse_spec({"limits": {"watchdog": "off"}})
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text("input: a/*\noutput: b\nroutes:\n  text/markdown: {name: sentence, max_chunk_size: 64, overlap: 8}\n")
    spec = load_spec(str(spec_file))
    assert isinstance(spec.strategy, Router)
    assert spec.strategy.routes["text/markdown"] == SentenceChunker(max_chunk_size=64, overlap=8)


def test_cli_with_spec_and_flags(tmp_path):
    out = str(tmp_path / "out")
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"input: {EXAMPLES}/*.md\noutput: {out}\nstrategy: {{name: token, max_chunk_size: 64, overlap: 8}}\n"
                    "metadata: {team: search, version: 2}\n")
    assert main(["run", "--config", str(spec)]) == 0
    chunks = read(out, "chunks")
    assert {c["strategy"] for c in chunks} == {"token"} and max(c["token_count"] for c in chunks) <= 64
    from beam_chunking.schema import decode_metadata

    # The job's tags, and the decoding the text parsers record for every document.
    assert decode_metadata(chunks[0]["metadata"]) == {"team": "search", "version": 2, "encoding": "utf-8",
                                                      "encoding_confidence": 1.0}
    assert main(["run", "--config", str(spec), "--strategy", "bogus"]) == 2


def _run_subprocess(src, out, seed, extra):
    env = dict(os.environ, PYTHONHASHSEED=str(seed))
    proc = subprocess.run([sys.executable, "-m", "beam_chunking.pipelines.cli", "run", "--input", f"{src}/*",
                           "--output", out, *extra], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return sorted((c["chunk_id"], c["text"], c["start"], c["end"], c["token_count"]) for c in read(out, "chunks"))


@pytest.mark.integration
def test_deterministic_across_hash_seeds(tmp_path):
    src = str(tmp_path / "src")
    make_corpus(src, 12)
    a = _run_subprocess(src, str(tmp_path / "a"), 1, [])
    b = _run_subprocess(src, str(tmp_path / "b"), 987, [])
    assert a == b and len(a) > 12


@pytest.mark.integration
def test_deterministic_across_running_modes(tmp_path):
    src = str(tmp_path / "src")
    make_corpus(src, 12)
    a = _run_subprocess(src, str(tmp_path / "a"), 1, [])
    b = _run_subprocess(src, str(tmp_path / "b"), 987, ["--direct_running_mode", "multi_processing",
                                                      "--direct_num_workers", "2"])
    assert a == b and len(a) > 12


@pytest.mark.parametrize("extra", [[], ["--num-shards", "2"], ["--strategy", "parent_child"]])
def test_token_counts_are_each_chunks_own(tmp_path, extra):
    """Small documents (rows checked in Python) and large ones, parents, and rows shuffled
    into fixed shards all get the exact counts of their own text."""
    from beam_chunking.sizing import TiktokenSizer

    src, out = tmp_path / "src", str(tmp_path / "out")
    src.mkdir()
    (src / "small.txt").write_text("One short note. " * 20)
    (src / "large.md").write_text("# Title\n\n" + "".join(f"Paragraph {i}: 日本語 and prose, code(x). " * 9 + "\n\n"
                                                          for i in range(120)))
    (src / "crlf.txt").write_text("Line one\r\nline two 👩‍👩‍👧\r\n" * 300)
    assert main(["run", "--input", f"{src}/*", "--output", out, *extra]) == 0
    sizer = TiktokenSizer()
    tables = ["chunks", "parents"] if "parent_child" in extra else ["chunks"]
    for table in tables:
        rows = read(out, table)
        assert len(rows) > 20 and all(r["token_count"] == sizer.count(r["text"]) for r in rows), table
