"""Beam YAML: the example pipelines of templates/yaml/ run with ``python -m apache_beam.yaml.main``
on the local runner, and the provider's transforms validate their config as the spec does."""
import json
import os
import subprocess
import sys

import pytest

from beam_chunking.errors import ConfigError
from beam_chunking.pipelines.cli import EXIT_USAGE, main
from beam_chunking.pipelines.spec import parse_spec
from beam_chunking.pipelines.yaml_provider import CHUNK_ROW, ChunkFiles, ChunkText
from beam_chunking.schema import CHUNKS_SCHEMA, decode_metadata
from beam_chunking.transforms.manifest import read_table

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")
TEMPLATES = os.path.join(ROOT, "templates", "yaml")

pytestmark = pytest.mark.integration


def run_yaml(pipeline: str, variables: dict, cwd) -> subprocess.CompletedProcess:
    """Run a YAML pipeline file in a subprocess on the in-process runner (no Prism download)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))}
    return subprocess.run(
        [sys.executable, "-m", "apache_beam.yaml.main", f"--yaml_pipeline_file={pipeline}", "--runner=FnApiRunner",
         f"--jinja_variables={json.dumps(variables)}"],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=180)


def json_lines(prefix) -> list:
    folder, name = os.path.split(str(prefix))
    rows = []
    for shard in sorted(n for n in os.listdir(folder) if n.startswith(name)):
        with open(os.path.join(folder, shard), encoding="utf-8") as f:
            rows += [json.loads(line) for line in f if line.strip()]
    return rows


def test_chunk_files_writes_the_same_tables_as_the_command_line(tmp_path):
    out, cli_out = tmp_path / "yaml-out", tmp_path / "cli-out"
    done = run_yaml(os.path.join(TEMPLATES, "chunk_files.yaml"), {"input": f"{EXAMPLES}/*", "output": str(out)},
                    tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    # The command line with the example's spec keys gives the very same chunks.
    spec = tmp_path / "spec.yaml"
    spec.write_text("strategy: {name: recursive, max_chunk_size: 800, overlap: 80}\n"
                    "routes: {text/markdown: {name: sentence, max_chunk_size: 256, overlap: 32}}\n"
                    "metadata: {team: search}\n")
    assert main(["run", "--config", str(spec), "--input", f"{EXAMPLES}/*", "--output", str(cli_out)]) == 0
    columns = ["chunk_id", "text", "strategy", "strategy_fingerprint", "token_count", "heading", "metadata"]
    ours, theirs = (sorted(read_table(str(o), "chunks", columns=columns).to_pylist(), key=lambda r: r["chunk_id"])
                    for o in (out, cli_out))
    assert len(ours) > 10 and ours == theirs
    assert {r["strategy"] for r in ours} == {"recursive", "sentence"}
    assert all(decode_metadata(r["metadata"])["team"] == "search" for r in ours)
    docs = read_table(str(out), "documents").to_pylist()
    assert len(docs) == len(os.listdir(EXAMPLES)) and {d["status"] for d in docs} == {"ok"}


def test_chunk_json_rows_keep_their_ids_fields_and_typed_columns(tmp_path):
    # Sections long enough (over the 32-token minimum) to stay chunks of their own.
    body = ("# Intro\n\n" + "First sentence here. Second sentence there. " * 4 + "\n\n## Details\n\n"
            + "Another paragraph of words about the details. " * 4)
    articles = [{"id": 7, "title": "Seven", "body": body}, {"id": 8, "title": "Eight", "body": "Short text."}]
    (tmp_path / "articles.jsonl").write_text("".join(json.dumps(a) + "\n" for a in articles))
    done = run_yaml(os.path.join(TEMPLATES, "chunk_json.yaml"),
                    {"input": str(tmp_path / "articles.jsonl"), "output": str(tmp_path / "out" / "chunks")}, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = json_lines(tmp_path / "out" / "chunks")
    assert set(rows[0]) == set(CHUNKS_SCHEMA.names)  # the chunks table's columns, no more, no fewer
    by_uri = {}
    for row in rows:
        by_uri.setdefault(row["uri"], []).append(row)
    assert sorted(by_uri) == ["7", "8"]  # the row's id, as a string
    texts = {"7": body, "8": "Short text."}
    for uri, chunks in by_uri.items():
        chunks.sort(key=lambda r: r["chunk_index"])
        for c in chunks:
            assert c["text"] == texts[uri][c["start"]:c["end"]]
            assert c["chunk_count"] == len(chunks) and c["chunk_id"] == f"{c['document_id']}:{c['start']:010d}"
            assert c["strategy"] == "sentence" and c["content_type"] == "text/markdown"
            assert isinstance(c["token_count"], int) and c["token_count"] > 0
            assert c["metadata"]["source"]["str"] == "articles"  # the config's tags
    seven = by_uri["7"]
    assert [c["heading"] for c in seven] == ["Intro", "Details"]  # parsed as Markdown
    assert seven[1]["section_path"] == ["Intro", "Details"]
    assert seven[0]["metadata"]["title"]["str"] == "Seven"  # metadata_fields
    assert by_uri["8"][0]["metadata"]["title"]["str"] == "Eight"


def test_chunk_files_to_json_sends_failed_files_to_the_error_output(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "notes.md").write_text("# Notes\n\nOne sentence. Two sentences.\n")
    (src / "broken.pdf").write_bytes(b"not a pdf at all")
    done = run_yaml(os.path.join(TEMPLATES, "chunk_files_to_json.yaml"),
                    {"input": f"{src}/*", "output": str(tmp_path / "chunks"), "errors": str(tmp_path / "failed")},
                    tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    chunks = json_lines(tmp_path / "chunks")
    assert {c["uri"] for c in chunks} == {str(src / "notes.md")}
    assert chunks[0]["heading"] == "Notes" and chunks[0]["text"].startswith("# Notes")
    failed = json_lines(tmp_path / "failed")
    assert [f["uri"] for f in failed] == [str(src / "broken.pdf")]
    assert "parse failed: ParseError" in failed[0]["msg"]


def test_a_bad_strategy_option_fails_with_the_command_lines_message(tmp_path, capsys):
    (tmp_path / "a.txt").write_text("Some text. More text.")
    assert main(["run", "--input", f"{tmp_path}/*.txt", "--output", str(tmp_path / "cli"), "--strategy", "sentence",
                 "--max-chunk-size", "10", "--overlap", "20"]) == EXIT_USAGE
    cli_line = capsys.readouterr().err.strip().splitlines()[-1]
    message = cli_line.removeprefix("beam-chunking: ")
    assert message.startswith("strategy.overlap: ")
    pipeline = tmp_path / "bad.yaml"
    pipeline.write_text(f"""
pipeline:
  type: chain
  transforms:
    - type: Create
      config: {{elements: [{{id: 1, body: "Some text. More text."}}]}}
    - type: ChunkText
      config:
        id_field: id
        text_field: body
        strategy: {{name: sentence, max_chunk_size: 10, overlap: 20}}
    - type: LogForTesting
providers:
  - include: {os.path.join(TEMPLATES, "provider.yaml")}
""")
    done = run_yaml(str(pipeline), {}, tmp_path)
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.endswith(f": {message}") and "ChunkText" in last, last


@pytest.mark.parametrize("strategy", [
    {"name": "sentence", "max_chunk_size": 0},
    {"name": "sentense"},
    {"name": "token", "max_chunk_sise": 100},
])
def test_both_transforms_raise_the_specs_errors(strategy):
    with pytest.raises(ConfigError) as spec_error:
        parse_spec({"strategy": strategy})
    for build in (lambda: ChunkFiles(input="docs/*", strategy=strategy),
                  lambda: ChunkText(id_field="id", text_field="body", strategy=strategy)):
        with pytest.raises(ConfigError) as ours:
            build()
        assert str(ours.value) == str(spec_error.value)


def test_keys_that_do_not_apply_are_refused():
    with pytest.raises(ConfigError, match=r"ChunkText: unknown key 'output'"):
        ChunkText(id_field="id", text_field="body", output="out")
    with pytest.raises(ConfigError, match=r"^overwrite: applies to the tables"):
        ChunkFiles(input="docs/*", overwrite=True)
    with pytest.raises(ConfigError, match=r"^content_type: 'text/plane' has no parser; did you mean 'text/plain'"):
        ChunkText(id_field="id", text_field="body", content_type="text/plane")
    with pytest.raises(ConfigError, match=r"parents of parent_child"):
        ChunkText(id_field="id", text_field="body", strategy={"name": "parent_child"})


def test_fields_the_input_rows_lack_are_named_when_the_pipeline_is_built():
    import apache_beam as beam

    with pytest.raises(ConfigError, match=r"^text_field: the input rows have no field 'text' \(fields: id, body\)"):
        with beam.Pipeline(runner="FnApiRunner") as p:
            (p | beam.Create([beam.Row(id=1, body="x")]) | ChunkText(id_field="id", text_field="text"))


def test_config_survives_the_expansion_service_that_dataflow_uses():
    """With ``packages:`` (how workers get beam-chunking on Dataflow), Beam sends the config to
    an expansion service as a schema'd payload; the transform built there is the same."""
    from apache_beam.transforms.external import ImplicitSchemaPayloadBuilder
    from apache_beam.transforms.fully_qualified_named_transform import FullyQualifiedNamedTransform

    config = {"id_field": "id", "text_field": "body", "metadata_fields": ["title"], "metadata": {"team": "x", "n": 3},
              "strategy": {"name": "sentence", "max_chunk_size": 256, "overlap": 32}}
    payload = ImplicitSchemaPayloadBuilder({"constructor": "beam_chunking.pipelines.yaml_provider.ChunkText",
                                            "kwargs": config}).build()
    received = FullyQualifiedNamedTransform.from_runner_api_parameter(None, payload, None)._kwargs
    there, here = ChunkText(**received), ChunkText(**config)
    assert there.config == here.config and there.metadata_fields == ("title",)
    assert there.config.strategy.fingerprint == here.config.strategy.fingerprint


def test_the_examples_switch_to_an_installed_package_with_the_packages_variable():
    from apache_beam.yaml.yaml_provider import ExternalPythonProvider, InlineProvider, parse_providers
    from apache_beam.yaml.yaml_transform import SafeLineLoader, expand_jinja
    import yaml

    for name in ("chunk_files.yaml", "chunk_json.yaml", "chunk_files_to_json.yaml"):
        with open(os.path.join(TEMPLATES, name), encoding="utf-8") as f:
            template = f.read()
        for variables, kind in (({}, InlineProvider),
                                ({"packages": ["gs://bucket/beam-chunking-0.1.0.tar.gz"]}, ExternalPythonProvider)):
            spec = yaml.load(expand_jinja(template, {"input": "i", "output": "o", "errors": "e", **variables}),
                             Loader=SafeLineLoader)
            (provider,) = parse_providers("", spec["providers"])
            assert isinstance(provider, kind), (name, variables)
            assert set(provider.provided_transforms()) == {"ChunkFiles", "ChunkText"}


def test_chunk_rows_have_the_chunks_tables_types():
    from apache_beam.typehints.schemas import named_fields_from_element_type

    fields = dict(named_fields_from_element_type(CHUNK_ROW))
    assert list(fields) == CHUNKS_SCHEMA.names
    assert "int32" in str(fields["chunk_index"]) and "int64" in str(fields["start"])
    assert "Mapping" in str(fields["metadata"]) and "float32" in str(fields["embedding"])


def test_chunk_text_from_python_embeds_with_the_specs_embed_key():
    """The transforms are plain PTransforms too; ``embed: minilm`` fills the embedding column."""
    import apache_beam as beam
    from apache_beam.testing.util import assert_that

    text = "One sentence here. Another sentence there. " * 20

    def check(rows):
        assert len(rows) > 1 and all(len(r.embedding) == 384 for r in rows)
        assert all(r.metadata["embedding_model"].str == "minilm" and r.uri == "a" for r in rows)
        assert all(r.text == text[r.start:r.end] for r in rows)

    with beam.Pipeline(runner="FnApiRunner") as p:
        rows = p | beam.Create([beam.Row(id="a", body=text)])
        chunks = rows | ChunkText(id_field="id", text_field="body", embed="minilm",
                                  strategy={"name": "sentence", "max_chunk_size": 32, "overlap": 0})
        assert chunks.element_type == CHUNK_ROW
        assert_that(chunks, check)
