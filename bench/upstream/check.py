"""Check the proposed change to Beam's DaskRunner against the installed Beam, and time it.

``beam-dask-bundles.patch`` is a change to Beam's own sources
(``sdks/python/apache_beam/runners/dask/``), prepared for Beam upstream; this package
never ships it. This script copies the installed ``transform_evaluator.py`` and
``dask_runner_test.py`` to a temporary folder, applies the patch there with ``git apply``,
and then:

1. runs the patch's new tests against the installed (stock) DaskRunner: they must fail,
   or the patch fixes nothing;
2. runs Beam's whole DaskRunner test file, new tests included, against the patched
   module (loaded in place of the installed one, in the test process and in every Dask
   worker process, through a ``sitecustomize`` on ``PYTHONPATH``): it must pass;
3. with ``--timing``, runs a DoFn that sets up a real model (an onnxruntime session of
   the bundled MiniLM) over Beam's default partitions on one Dask worker, stock and
   patched in turn; with ``--corpus``, this package's CLI job on one Dask worker too
   (``bench/corpus.py`` builds the stdlib corpus, ``bench/mixed_corpus.py`` the files of
   1 KB to 1 MB, prose and code).

Usage::

    python bench/upstream/check.py            # the tests, stock and patched (about 3 minutes)
    python bench/upstream/check.py --timing   # and the model DoFn's timing (a minute more)
    python bench/upstream/check.py --timing --corpus "$PWD/bench/corpus/docs/*" \
        --corpus "$PWD/bench/corpus/mixed-sizes/mixed/*"   # and the CLI job on each corpus
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE.parent.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent.parent))

from bench.interleave import Impl, ratio  # noqa: E402

PATCH = HERE / "beam-dask-bundles.patch"
FILES = ("transform_evaluator.py", "dask_runner_test.py")
NEW_TESTS = "DaskRunnerBundleTest or DaskBundleLifecycleTest"
PATCHED_MODULE = "apache_beam.runners.dask.transform_evaluator"


def installed_dask_runner() -> Path:
    """The installed ``apache_beam/runners/dask`` folder."""
    import apache_beam.runners.dask as package

    return Path(package.__file__).parent


def prepare(work: Path) -> tuple[Path, Path]:
    """``(patched, overlay)``: the installed files with the patch applied, and a folder
    whose ``sitecustomize`` makes every Python process import the patched module."""
    patched, overlay = work / "patched", work / "overlay"
    patched.mkdir()
    overlay.mkdir()
    for name in FILES:
        shutil.copy(installed_dask_runner() / name, patched / name)
    # The patch names Beam's repository paths; -p6 leaves the file names.
    subprocess.run(["git", "apply", "-p6", str(PATCH)], cwd=patched, check=True)
    (overlay / "sitecustomize.py").write_text(textwrap.dedent(f"""\
        import importlib.abc, importlib.util, sys

        class _Patched(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name == {PATCHED_MODULE!r}:
                    return importlib.util.spec_from_file_location(
                        name, {str(patched / 'transform_evaluator.py')!r})
                return None

        sys.meta_path.insert(0, _Patched())
        """))
    return patched, overlay


def environment(overlay: Path | None) -> dict:
    """The environment of a child process: with the patched module when ``overlay``."""
    env = dict(os.environ)
    if overlay is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(overlay), env.get("PYTHONPATH")]))
    return env


def loaded_from(overlay: Path | None) -> str:
    """Where a child process imports the DaskRunner's evaluator from."""
    out = subprocess.run([sys.executable, "-c", f"import {PATCHED_MODULE} as m; print(m.__file__)"],
                         env=environment(overlay), check=True, capture_output=True, text=True)
    return out.stdout.strip()


def run_tests(test_file: Path, select: str | None, overlay: Path | None) -> tuple[int, str]:
    """Run ``test_file`` (only the tests ``select`` names, if given); the exit code and the
    summary line."""
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test_file)]
    if select:
        command += ["-k", select]
    done = subprocess.run(command, cwd=test_file.parent, env=environment(overlay),
                          capture_output=True, text=True)
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    return done.returncode, lines[-1] if lines else done.stderr.strip()[-300:]


def check(work: Path) -> bool:
    """The tests, stock and patched; whether both came out as they must."""
    patched, overlay = prepare(work)
    print(f"stock module:   {loaded_from(None)}")
    print(f"patched module: {loaded_from(overlay)}")
    rc_stock, summary_stock = run_tests(patched / "dask_runner_test.py", NEW_TESTS, None)
    print(f"the patch's new tests on the stock DaskRunner (must fail): {summary_stock}")
    rc_patched, summary_patched = run_tests(patched / "dask_runner_test.py", None, overlay)
    print(f"Beam's DaskRunner tests, new ones included, on the patched DaskRunner (must pass): "
          f"{summary_patched}")
    every_new_test_failed = rc_stock != 0 and " passed" not in summary_stock
    return every_new_test_failed and rc_patched == 0


DRIVER = textwrap.dedent("""\
    # One Dask worker (one thread), started here so that it imports what this process does.
    import sys, time
    import apache_beam as beam
    import dask.distributed as ddist
    from apache_beam.options.pipeline_options import PipelineOptions
    from apache_beam.runners.dask.dask_runner import DaskRunner

    class Embed(beam.DoFn):
        \"\"\"Loads a model in setup, as Beam's docs advise, and runs it once per element.\"\"\"
        def setup(self):
            import numpy as np, onnxruntime
            from beam_chunking.embeddings.minilm import minilm_paths
            self.np = np
            self.session = onnxruntime.InferenceSession(minilm_paths()[0], providers=["CPUExecutionProvider"])

        def process(self, n):
            ids = self.np.full((1, 16), 1000 + n % 1000, dtype=self.np.int64)
            feed = {i.name: ids if i.name == "input_ids" else
                    self.np.ones_like(ids) if "mask" in i.name else self.np.zeros_like(ids)
                    for i in self.session.get_inputs()}
            yield float(self.session.run(None, feed)[0].sum())

    if __name__ == "__main__":
        with ddist.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                dashboard_address=None) as cluster:
            start = time.perf_counter()
            if sys.argv[1] == "model":
                options = PipelineOptions(["--dask_client_address", cluster.scheduler_address])
                with beam.Pipeline(runner=DaskRunner(), options=options) as p:
                    p | beam.Create(list(range(int(sys.argv[2])))) | beam.ParDo(Embed())
            else:
                from beam_chunking.pipelines.cli import main
                code = main(["run", *sys.argv[2:], "--runner", "DaskRunner",
                             "--dask_client_address", cluster.scheduler_address])
                assert code == 0, code
            print(time.perf_counter() - start)
    """)


def timed(arguments: list, overlay: Path | None, work: Path) -> float:
    """Seconds the driver's job took (from the cluster's start to the job's end, the
    cluster's own start-up excluded), the patched module in place when ``overlay``."""
    done = subprocess.run([sys.executable, str(work / "driver.py"), *arguments], cwd=work,
                          env=environment(overlay), check=True, capture_output=True, text=True)
    return float(done.stdout.strip().splitlines()[-1])


def timing(work: Path, corpora: list, rounds: int) -> None:
    """Stock against patched, interleaved (stock, patched, stock, ...): the model DoFn and,
    for each corpus, the CLI job; the best of ``rounds``, with the per-round spread."""
    overlay = work / "overlay"
    (work / "driver.py").write_text(DRIVER)
    jobs = {"a DoFn that loads MiniLM in setup, 2,048 elements (Beam's default partitions)":
            ["model", "2048"]}
    for corpus in corpora:
        jobs[f"beam-chunking run --strategy sentence --input {corpus!r}"] = [
            "cli", "--input", corpus, "--output", str(work / "out"), "--overwrite", "--max-deletions", "100%",
            "--strategy", "sentence"]
    for label, arguments in jobs.items():
        stock, patched = Impl("stock", None), Impl("patched", None)
        for _ in range(rounds):
            stock.times.append(timed(arguments, None, work))
            patched.times.append(timed(arguments, overlay, work))
        print(f"{label}: stock {min(stock.times):.1f} s, patched {min(patched.times):.1f} s, "
              f"patched against stock {ratio(patched, stock)} (best of {rounds} [per-round range, median])")


def main(argv=None) -> int:
    """Entry point: the tests, and the timings with ``--timing``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timing", action="store_true", help="also time stock against patched")
    parser.add_argument("--corpus", action="append", default=[],
                        help="a glob of files for the CLI job's timing; repeat it for more corpora (default: none)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds per timing (default 3)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        ok = check(work)
        print("patch checked: the new tests fail on stock Beam and pass with the patch" if ok
              else "PATCH CHECK FAILED")
        if ok and args.timing:
            timing(work, args.corpus, args.rounds)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
