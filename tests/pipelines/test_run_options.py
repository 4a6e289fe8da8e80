"""Runner selection: the local default, short names, Dataflow's required options, and Beam's
own options passing through to the runner unchanged."""
import os

import pytest

from beam_chunking.errors import ConfigError
from beam_chunking.pipelines.cli import main
from beam_chunking.pipelines.run import LOCAL_RUNNER, pipeline_options

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
JOB = ["--input", "in/*", "--output", "out"]
DATAFLOW = ["--runner", "DataflowRunner", "--project", "my-project", "--region", "europe-west1",
            "--temp_location", "gs://bucket/tmp"]


def test_local_runner_by_default():
    options, spec = pipeline_options(JOB)
    assert options.get_all_options()["runner"] == LOCAL_RUNNER and spec.input == ("in/*",)


def test_dask_runner_short_name_resolves():
    options, _ = pipeline_options(JOB + ["--runner", "DaskRunner", "--dask_client_address", "tcp://127.0.0.1:1"])
    assert options.get_all_options()["runner"] == "apache_beam.runners.dask.dask_runner.DaskRunner"


def test_dataflow_without_project_fails_before_any_work(tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["run", "--input", f"{ROOT}/examples/*", "--output", str(out), "--runner", "DataflowRunner",
                 "--region", "us-central1"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert "--project" in err[0] and "--temp_location" in err[0] and "--region" not in err[0]
    assert not out.exists()


@pytest.mark.parametrize("missing", ["--project", "--region", "--temp_location"])
def test_dataflow_names_each_missing_option(missing):
    args = list(DATAFLOW)
    del args[args.index(missing):args.index(missing) + 2]
    with pytest.raises(ConfigError, match=missing):
        pipeline_options(JOB + args)


def test_beam_options_pass_through_unchanged():
    extra = ["--num_workers", "5", "--max_num_workers", "20", "--machine_type", "n2-highmem-4",
             "--sdk_container_image", "europe-docker.pkg.dev/p/r/beam-chunking:1", "--experiments", "use_runner_v2",
             "--experiments", "no_use_multiple_sdk_containers", "--setup_file", "./setup.py", "--disk_size_gb", "50"]
    options, _ = pipeline_options(JOB + DATAFLOW + extra)
    got = options.get_all_options(drop_default=True)
    assert got["num_workers"] == 5 and got["max_num_workers"] == 20 and got["machine_type"] == "n2-highmem-4"
    assert got["sdk_container_image"] == "europe-docker.pkg.dev/p/r/beam-chunking:1"
    assert got["experiments"] == ["use_runner_v2", "no_use_multiple_sdk_containers"]
    assert got["setup_file"] == "./setup.py" and got["disk_size_gb"] == 50


def test_dataflow_workers_get_this_checkout_when_nothing_installs_it():
    options, _ = pipeline_options(JOB + DATAFLOW)
    assert options.get_all_options()["setup_file"] == os.path.join(ROOT, "setup.py")
    options, _ = pipeline_options(JOB + DATAFLOW + ["--sdk_container_image", "img"])
    assert options.get_all_options()["setup_file"] is None


# Runs the command line in a fresh interpreter where Beam's Google Cloud clients cannot be
# imported, as after an install without the gcp extra (apitools is in the core install).
_WITHOUT_GCP = """
import sys

class WithoutGcp:
    def find_spec(self, name, path=None, target=None):
        if name.startswith("google.cloud"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)

sys.meta_path.insert(0, WithoutGcp())
for name in [m for m in sys.modules if m.startswith("google.cloud")]:  # namespace stubs made at start-up
    del sys.modules[name]
from beam_chunking.pipelines.cli import console_main
sys.argv[0] = "beam-chunking"
console_main()
"""


@pytest.mark.parametrize("args", [["--input", "gs://bucket/in/*", "--output", "OUT"],
                                  ["--input", f"{ROOT}/examples/*", "--output", "gs://bucket/out"],
                                  ["--input", f"{ROOT}/examples/*", "--output", "OUT", *DATAFLOW],
                                  ["--config", "gs://bucket/spec.yaml"],
                                  ["--input", f"{ROOT}/examples/*", "--output", "OUT", "--strategy", "proposition",
                                   "--llm-model", "m", "--llm-cache", "gs://bucket/answers"]])
def test_gs_paths_and_dataflow_without_the_gcp_extra_name_it(tmp_path, args):
    import subprocess
    import sys

    args = [str(tmp_path / "out") if a == "OUT" else a for a in args]
    done = subprocess.run([sys.executable, "-c", _WITHOUT_GCP, "run", *args], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": ROOT})
    err = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(err) == 1, done.stderr
    assert 'pip install "beam-chunking[gcp]"' in err[0]
    assert not (tmp_path / "out").exists()


def test_only_stores_with_an_extra_are_checked_here():
    from beam_chunking.transforms.read import require_filesystem

    for path in ("/local/x", "hdfs://host/path/*", "gs://bucket/x"):  # gs:// has its extra in the tests
        assert require_filesystem(path) is None
