"""A local run and reading its tables import neither pyarrow.compute nor pyarrow.dataset
(60-75 ms of start-up between them, bench/README.md), when pandas, which imports them for
itself, is not installed."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_SCRIPT = """
import sys

class WithoutPandas:
    def find_spec(self, name, path=None, target=None):
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)

sys.meta_path.insert(0, WithoutPandas())
from beam_chunking.pipelines.run import run
from beam_chunking.transforms.manifest import read_table

src, out = sys.argv[1], sys.argv[2]
run(["--input", src + "/*", "--output", out])
run(["--input", src + "/*", "--output", out, "--incremental"])
assert read_table(out, "chunks", columns=["text"]).num_rows > 0
print(sorted(m for m in ("pyarrow.compute", "pyarrow.dataset") if m in sys.modules))
"""


def test_a_local_run_imports_neither_pyarrow_compute_nor_dataset(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    (src / "a.txt").write_text("Some text to chunk. " * 100)
    done = subprocess.run([sys.executable, "-c", _SCRIPT, str(src), str(tmp_path / "out")], capture_output=True,
                          text=True, timeout=180, env={**os.environ, "PYTHONPATH": ROOT})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout
