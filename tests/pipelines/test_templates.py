"""Dataflow templates: Flex Template metadata and launcher, and classic template builds.

The classic template is built for real by DataflowRunner, offline: staging goes to
gcp-storage-emulator on 127.0.0.1, and any other Python socket connection (Cloud Storage,
OAuth, the metadata server, PyPI) is refused and recorded. The Dataflow API client speaks
gRPC, below Python sockets; a call to it would fail the build for want of real credentials.
"""
import io
import json
import os
import re
import socket
import subprocess
import sys
import tarfile

import pyarrow.parquet as pq
import pytest
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems
from apache_beam.portability.api import beam_runner_api_pb2

from beam_chunking.errors import ConfigError
from beam_chunking.pipelines import templates
from beam_chunking.pipelines.cli import main
from beam_chunking.pipelines.run import summarize
from beam_chunking.schema import COMPRESSIONS
from beam_chunking.registry import REGISTRY
from tests.pipelines.gcs_emulator import gcs_emulator

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")
METADATA = os.path.join(ROOT, "templates", "metadata.json")
BUCKET = "beam-chunking-templates"
DATAFLOW = ["--project=test-project", "--region=us-central1"]


@pytest.fixture(scope="module")
def gcs(tmp_path_factory):
    pytest.importorskip("gcp_storage_emulator")
    with gcs_emulator(tmp_path_factory.mktemp("gcs"), BUCKET) as root:
        yield root


@pytest.fixture
def offline(monkeypatch):
    """Refuse, and record, every connection that does not go to 127.0.0.1."""
    attempts = []
    connect = socket.socket.connect

    def guarded(sock, address):
        if sock.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in ("127.0.0.1", "::1", "localhost"):
            attempts.append(address)
            raise OSError(f"network access outside 127.0.0.1 refused in this test: {address}")
        return connect(sock, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    return attempts


def metadata():
    with open(METADATA, encoding="utf-8") as f:
        return json.load(f)


def params_by_name():
    return {p["name"]: p for p in metadata()["parameters"]}


# -- Flex Template metadata ------------------------------------------------------------------

def test_metadata_declares_exactly_the_launcher_parameters():
    data = metadata()
    assert data["name"] and data["description"]
    declared = [p["name"] for p in data["parameters"]]
    assert len(declared) == len(set(declared))
    assert declared == [p.name for p in templates.PARAMETERS]
    for p in templates.PARAMETERS:
        entry = params_by_name()[p.name]
        assert entry["label"] and entry["helpText"], p.name
        assert entry.get("isOptional", False) is (not p.required), p.name
        assert set(entry) <= {"name", "label", "helpText", "isOptional", "regexes"}, p.name


def test_metadata_regexes_accept_what_the_launcher_accepts():
    regexes = {name: [re.compile(r) for r in p.get("regexes", [])] for name, p in params_by_name().items()}

    def ok(name, value):
        return all(r.fullmatch(value) for r in regexes[name])

    for name in ("input", "output", "strategy", "overwrite", "compression", "num_shards", "embed"):
        assert regexes[name], f"{name} has a shape and should declare regexes"
    assert ok("input", "gs://bucket/docs/**") and not ok("input", "docs/*")
    assert ok("output", "gs://bucket/chunks") and not ok("output", "gs://bucket/a\nb")
    assert ok("spec", "gs://bucket/spec.yaml") and ok("spec", "/template/spec.yaml") and not ok("spec", "spec.yaml")
    assert {s for s in REGISTRY if ok("strategy", s)} == set(REGISTRY)  # every strategy, kept in sync
    assert not ok("strategy", "nope")
    assert {c for c in COMPRESSIONS if ok("compression", c)} == set(COMPRESSIONS)
    assert ok("overwrite", "true") and ok("overwrite", "false") and not ok("overwrite", "yes")
    assert ok("num_shards", "0") and ok("num_shards", "12") and not ok("num_shards", "-1")
    assert ok("embed", "minilm") and ok("embed", "none") and not ok("embed", "bert")


# -- Flex Template launcher ------------------------------------------------------------------

def test_parameters_map_onto_run_flags_and_everything_else_passes_through():
    values, rest = templates.split_parameters([
        "--input=gs://b/in/*", "--output=gs://b/out", "--overwrite=true", "--num_shards=3", "--strategy=token",
        "--compression=gzip", "--project=p", "--temp_location", "gs://b/tmp", "--experiments=a,b", "--outputs=x",
    ])
    assert rest == ["--project=p", "--temp_location", "gs://b/tmp", "--experiments=a,b", "--outputs=x"]
    assert templates.parameter_flags(values) == [
        "--input=gs://b/in/*", "--output=gs://b/out", "--strategy=token", "--overwrite", "--compression=gzip",
        "--num-shards=3"]
    assert "--overwrite" not in templates.parameter_flags({**values, "overwrite": "False"})


@pytest.mark.parametrize("argv, message", [
    (["--output=o"], "input: required"),
    (["--input=i", "--output=o", "--overwrite=yes"], "overwrite: expected true or false, got 'yes'"),
    (["--input=i", "--output=o", "--num_shards=-1"], "num_shards: expected a whole number"),
    (["--input=i", "--output=o", "--strategy=nope"], "'nope' is not a strategy"),
    (["--input=i", "--output=o", "--embed=bert"], "embed"),
    (["--input=i", "--output=o", "--runner=DataflowRunner", "--region=r"], "--project"),
])
def test_bad_parameters_fail_before_any_work(argv, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        templates.template_options(argv)


def test_embed_parameter_sets_and_clears_the_spec_key(tmp_path):
    _, spec = templates.template_options(["--input=i", "--output=o", "--embed=minilm"])
    assert spec.embed is not None and spec.embed.name == "minilm"
    path = tmp_path / "spec.yaml"
    path.write_text("embed: minilm\n")
    _, spec = templates.template_options(["--input=i", "--output=o", f"--spec={path}", "--embed=none"])
    assert spec.embed is None


def test_dataflow_launch_off_cloud_storage_fails_fast(capsys, offline):
    # Beam would otherwise try to create a default bucket in the project, retrying for minutes.
    argv = ["--input=gs://my-bucket/in/*", "--output=gs://my-bucket/out", "--runner=DataflowRunner", *DATAFLOW,
            "--temp_location=/tmp/beam", "--sdk_container_image=example.com/beam-chunking:1"]
    assert templates.flex_main(argv) == 2
    assert capsys.readouterr().err.strip() == (
        "beam-chunking: --temp_location '/tmp/beam': Dataflow needs a gs://BUCKET/FOLDER path")
    assert offline == []


@pytest.mark.integration
def test_launcher_runs_the_job_on_the_local_runner(gcs, tmp_path):
    # The spec comes from gs:// (the emulator): markdown is routed to `fixed`; the strategy
    # parameter replaces the spec's default strategy.
    spec_uri = f"{gcs}/specs/chunking.yaml"
    with FileSystems.create(spec_uri) as f:
        f.write(b"strategy: {name: recursive, max_chunk_size: 300, overlap: 30}\n"
                b"routes:\n  text/markdown: {name: fixed, max_chunk_size: 200, overlap: 0}\n")
    out = str(tmp_path / "out")
    templates.launch([f"--input={EXAMPLES}/*", f"--output={out}", "--num_shards=2"]).wait_until_finish()
    # A non-empty output: replaced because overwrite=true, none of the first run's shards left.
    result = templates.launch([
        f"--input={EXAMPLES}/*", f"--output={out}", "--overwrite=true", "--strategy=sentence",
        f"--spec={spec_uri}", "--compression=snappy", "--num_shards=1",
    ])
    result.wait_until_finish()
    summary = summarize(out, 0.0)
    assert summary.documents == len(os.listdir(EXAMPLES)) == summary.ok
    chunks = pq.read_table(out + "/chunks")
    assert chunks.num_rows == summary.chunks > 0
    rows = chunks.select(["strategy", "content_type"]).to_pylist()
    assert {r["strategy"] for r in rows if r["content_type"] == "text/markdown"} == {"fixed"}
    assert {r["strategy"] for r in rows if r["content_type"] != "text/markdown"} == {"sentence"}
    files = summary.tables["chunks"]
    assert len(files) == 1
    assert pq.ParquetFile(files[0]).metadata.row_group(0).column(0).compression == "SNAPPY"


@pytest.mark.integration
def test_flex_entry_point_script(tmp_path):
    out = str(tmp_path / "out")
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "templates", "main.py"), f"--input={EXAMPLES}/*.md",
         f"--output={out}", "--overwrite=false", "--strategy=structural"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = summarize(out, 0.0)
    assert summary.documents == summary.ok == 2 and summary.chunks > 0
    bad = subprocess.run([sys.executable, os.path.join(ROOT, "templates", "main.py"), f"--input={EXAMPLES}/*"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines()[-1] == "beam-chunking: output: required template parameter (--output=...)"


# -- Classic template --------------------------------------------------------------------------

def _read(path, binary=True):
    with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as f:
        data = f.read()
    return data if binary else data.decode("utf-8")


def _gs(location):
    """The job file names staged files as storage.googleapis.com/BUCKET/PATH."""
    prefix = "storage.googleapis.com/"
    return "gs://" + location[len(prefix):] if location.startswith(prefix) else location


@pytest.mark.integration
def test_classic_template_is_built_offline_against_the_emulator(gcs, offline, capsys):
    location = f"{gcs}/templates/chunk-sentence"
    argv = ["template", "--template-location", location, *DATAFLOW, f"--temp_location={gcs}/tmp",
            f"--staging_location={gcs}/staging", f"--setup_file={os.path.join(ROOT, 'setup.py')}",
            "--input", f"{gcs}/in/**", "--output", f"{gcs}/out", "--strategy", "sentence", "--overwrite"]
    assert main(argv) == 0, capsys.readouterr().err
    assert capsys.readouterr().out.strip() == f"template written: {location}"
    assert offline == []  # nothing but the emulator was contacted: no Dataflow API, no SDK download

    job = json.loads(_read(location, binary=False))
    assert job["type"] == "JOB_TYPE_BATCH"
    options = job["environment"]["sdkPipelineOptions"]["options"]
    # The job's parameters are fixed in the template.
    assert (options["input"], options["output"], options["strategy"], options["overwrite"]) == (
        [f"{gcs}/in/**"], f"{gcs}/out", "sentence", True)  # --input repeats, so it is a list
    assert options["project"] == "test-project" and options["region"] == "us-central1"
    assert options["staging_location"].startswith(f"{gcs}/staging/")

    # The steps: Runner v2 keeps them in the staged pipeline proto the job file points to.
    proto = beam_runner_api_pb2.Pipeline.FromString(_read(options["pipelineUrl"]))
    names = {t.unique_name for t in proto.components.transforms.values()}
    assert "ChunkFiles" in names
    assert len([n for n in names if n.startswith("ChunkFiles/")]) >= 4

    # The package built from setup.py, staged for the workers as workflow.tar.gz.
    packages = {p["name"]: _gs(p["location"]) for p in job["environment"]["workerPools"][0]["packages"]}
    assert packages["workflow.tar.gz"].startswith(options["staging_location"])
    with tarfile.open(fileobj=io.BytesIO(_read(packages["workflow.tar.gz"])), mode="r:gz") as tar:
        members = tar.getnames()
    assert any(m.endswith("/setup.py") for m in members)
    assert any(m.endswith("beam_chunking/pipelines/templates.py") for m in members)
    assert not [n for n in packages if "sdk" in n.lower() or n.startswith("apache_beam")]  # no SDK staged


TEMPLATE = ["--template-location=gs://my-bucket/t", "--input=gs://my-bucket/in", "--output=gs://my-bucket/out"]


@pytest.mark.parametrize("argv, message", [
    ([], "--template-location PATH: required"),
    ([*TEMPLATE, "--region=r", "--temp_location=gs://my-bucket/tmp", "--setup_file=setup.py"], "--project"),
    ([*TEMPLATE, *DATAFLOW, "--temp_location=/tmp/x", "--setup_file=setup.py"],
     "--temp_location '/tmp/x': Dataflow needs a gs://BUCKET/FOLDER path"),
    ([*TEMPLATE, *DATAFLOW, "--temp_location=gs://my-bucket/tmp", "--staging_location=staging",
      "--setup_file=setup.py"], "--staging_location 'staging'"),
    ([*TEMPLATE, *DATAFLOW, "--temp_location=gs://my-bucket/tmp", "--setup_file=setup.py", "--runner=FnApiRunner"],
     "templates need DataflowRunner"),
])
def test_classic_template_fails_fast_with_one_line(argv, message, capsys, offline):
    assert main(["template", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("beam-chunking: ") and message in err, err
    assert offline == []


def test_template_help():
    assert main(["template", "--help"]) == 0
