"""bench/upstream: the change prepared for Beam's DaskRunner applies to the Beam this package
pins, and its new tests fail on that Beam and pass with the change."""
import shutil

import pytest

pytest.importorskip("distributed", reason="the dask extra is not installed")
if shutil.which("git") is None:
    pytest.skip("git is not installed (the check applies the patch with git apply)", allow_module_level=True)

from bench.upstream import check  # noqa: E402


def test_the_patch_applies_to_the_pinned_beam(tmp_path):
    patched, overlay = check.prepare(tmp_path)
    for name in check.FILES:
        assert (check.installed_dask_runner() / name).read_text() != (patched / name).read_text()
    assert check.loaded_from(None) != check.loaded_from(overlay) == str(patched / "transform_evaluator.py")


@pytest.mark.integration
def test_its_tests_fail_on_stock_beam_and_pass_with_it(tmp_path):
    patched, overlay = check.prepare(tmp_path)
    code, summary = check.run_tests(patched / "dask_runner_test.py", check.NEW_TESTS, None)
    assert code != 0 and " passed" not in summary, summary
    code, summary = check.run_tests(patched / "dask_runner_test.py", check.NEW_TESTS, overlay)
    assert code == 0 and "7 passed" in summary, summary
