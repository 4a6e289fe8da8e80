"""The guard against a run that would delete most of an output: the mistyped pattern itself."""
import os

import pytest

from beam_chunking.pipelines.cli import main
from beam_chunking.transforms.manifest import read_manifest, read_table

RUNNERS = {"in_process": [], "multi_processing": ["--direct_running_mode", "multi_processing",
                                                  "--direct_num_workers", "2"]}


@pytest.fixture
def indexed(tmp_path):
    """An output of 10 documents: 8 in docs/md/guides/, 2 in docs/md/."""
    docs = tmp_path / "docs" / "md"
    (docs / "guides").mkdir(parents=True)
    for k in range(10):
        folder = docs / "guides" if k < 8 else docs
        (folder / f"d{k}.md").write_text(f"# Document {k}\n\nSome text of document {k}.\n")
    out = str(tmp_path / "out")
    assert main(["run", "--input", f"{tmp_path}/docs/**", "--output", out]) == 0
    return tmp_path, out


@pytest.mark.parametrize("mode", sorted(RUNNERS))
@pytest.mark.parametrize("replace", ["--incremental", "--overwrite"])
def test_a_mistyped_pattern_is_refused_before_any_work(indexed, mode, replace, capsys):
    root, out = indexed
    before = read_manifest(out)
    # 'docs/md/*' for 'docs/**': 2 of the 10 documents, so 8 would leave the output.
    code = main(["run", "--input", f"{root}/docs/md/*", "--output", out, replace, *RUNNERS[mode]])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert (f"{replace}: this run would delete 8 of the 10 documents of {out} (80%; such as" in err
            and "over --max-deletions 50%" in err and "pass --max-deletions 8 (or 100%)" in err), err
    assert read_manifest(out) == before and not os.path.exists(os.path.join(out, "_lease.json"))
    assert main(["run", "--input", f"{root}/docs/md/*", "--output", out, replace, "--max-deletions", "8",
                 *RUNNERS[mode]]) == 0
    assert read_table(out, "documents").num_rows == 2


def test_within_the_limit_a_run_replaces_the_output(indexed):
    root, out = indexed
    for k in range(4):  # 4 of 10 documents removed from the corpus: 40%
        os.remove(root / "docs" / "md" / "guides" / f"d{k}.md")
    assert main(["run", "--input", f"{root}/docs/**", "--output", out, "--incremental"]) == 0
    assert sorted(read_table(out, "changes").column("change").to_pylist()).count("deleted") == 4


def test_a_bad_limit_is_one_line(indexed, capsys):
    root, out = indexed
    assert main(["run", "--input", f"{root}/docs/**", "--output", out, "--overwrite", "--max-deletions", "lots"]) == 2
    assert "max_deletions: expected a count such as 3 or a percentage such as 5%, got 'lots'" in capsys.readouterr().err


def test_a_damaged_manifest_is_said_at_once_and_overwrite_replaces_it(indexed, capsys, caplog):
    root, out = indexed
    with open(os.path.join(out, "_manifest.json"), "w") as f:
        f.write('{"tables": {"chunks": [')  # cut short, as by a full disk
    assert main(["run", "--input", f"{root}/docs/**", "--output", out, "--incremental"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a valid manifest" in err and "run with --overwrite instead" in err
    with caplog.at_level("WARNING"):
        assert main(["run", "--input", f"{root}/docs/**", "--output", out, "--overwrite"]) == 0
    assert "not a valid manifest" in caplog.text and "--overwrite replaces it" in caplog.text
    assert read_table(out, "documents").num_rows == 10
