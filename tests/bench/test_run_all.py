"""bench/run_all.py: every area has its block in bench/README.md, runs scripts with options
they declare, and renders what they print; no bench is run here."""
import ast
import os

import pytest

from bench import run_all
from bench.areas import AREAS, interleaved, peers
from bench.report import Check, at_least, tables, with_targets

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
README = os.path.join(ROOT, "bench", "README.md")


def readme() -> str:
    with open(README, encoding="utf-8") as f:
        return f.read()


def test_every_area_has_one_block_in_the_readme_in_the_same_order():
    text = readme()
    names = [a.name for a in AREAS]
    assert len(set(names)) == len(names)
    assert run_all.marker_names(text) == names
    for name in names:
        assert len(run_all.block_pattern(name).findall(text)) == 1, name
        assert text.count(f"\n<!-- /bench:{name} -->\n") == 1, name


def test_every_block_is_stamped_with_a_date_a_commit_and_a_command():
    text = readme()
    for a in AREAS:
        body = run_all.block_pattern(a.name).search(text).group(2)
        if a.render is None:  # left to the area's owner
            continue
        assert body.lstrip().startswith("_20"), a.name
        stamp = body.lstrip().splitlines()[0]
        assert " · commit " in stamp and "`python bench/" in stamp, a.name
        assert "| target | met? |" in body or "No target was set" in body or "| target (issue" in body, a.name


def declared_options(script: str) -> set:
    """The option strings a script's argparse declares (read from its source, not run)."""
    with open(os.path.join(ROOT, script), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument":
            found.update(a.value for a in node.args if isinstance(a, ast.Constant) and str(a.value).startswith("-"))
    return found


@pytest.mark.parametrize("quick", [False, True])
def test_every_run_passes_only_options_its_script_declares(quick):
    for a in AREAS:
        for script, *args in run_all.commands(a, quick):
            assert os.path.isfile(os.path.join(ROOT, script)), script
            unknown = {x for x in args if x.startswith("--")} - declared_options(script)
            assert not unknown, (a.name, script, unknown)


def test_every_need_is_known():
    assert {n for a in AREAS for n in a.needs} <= set(run_all.NEEDS)


def test_list_names_every_area(capsys):
    assert run_all.main(["--list"]) == 0
    out = capsys.readouterr().out
    for a in AREAS:
        assert out.count(f"\n{a.name} ") + out.startswith(f"{a.name} ") == 1, a.name


def test_an_unknown_area_is_refused(capsys):
    with pytest.raises(SystemExit):
        run_all.main(["--only", "no-such-area", "--no-write"])
    assert "no bench area 'no-such-area'" in capsys.readouterr().err


def test_a_block_is_replaced_and_nothing_else():
    text = "intro\n<!-- bench:a -->\nold\n<!-- /bench:a -->\nmiddle\n<!-- bench:b -->\nkept\n<!-- /bench:b -->\n"
    once = run_all.replace_block(text, "a", "_stamp_\n\n| x |\n|---|\n| 1 |\n")
    assert once == run_all.replace_block(once, "a", "_stamp_\n\n| x |\n|---|\n| 1 |\n")
    assert "old" not in once and "kept" in once and once.startswith("intro\n") and "\nmiddle\n" in once
    with pytest.raises(ValueError, match="bench:c"):
        run_all.replace_block(text, "c", "x")


def test_a_stamp_names_the_date_commit_machine_and_commands():
    line = run_all.stamp(["python bench/code.py"], quick=True)
    assert " · commit " in line and " cores, " in line and "Python " in line and "`python bench/code.py`" in line
    assert "--quick" in line and "--quick" not in run_all.stamp(["python bench/code.py"], quick=False)


THROUGHPUT = """#### Recursive 512/50 characters, small (ratio vs semantic-text-splitter)

2.20 MB; best of 5 rounds, interleaved

| implementation | best s | CPU s | MB/s | chunks | offset violations | ceiling violations | ratio [per-round range, median] |
|---|---:|---:|---:|---:|---:|---:|---:|
| beam-chunking RecursiveChunker 512/50 | 0.006 | 0.006 | 360 | 6298 | 0 | 0 | 2.39x [2.04-2.39, median 2.11] |
| semantic-text-splitter TextSplitter(512, overlap=50) | 0.015 | 0.015 | 151 | 5640 | 0 | 0 | reference |

#### Token windows 512/50 cl100k, cjk (ratio vs bare encode)

7.23 MB; best of 5 rounds, interleaved

| implementation | best s | CPU s | MB/s | chunks | offset violations | ceiling violations | ratio [per-round range, median] |
|---|---:|---:|---:|---:|---:|---:|---:|
| bare tiktoken cl100k encode_ordinary | 0.481 | 0.481 | 15 | n/a | n/a | n/a | reference |
| beam-chunking TokenChunker 512/50 cl100k | 0.552 | 0.552 | 13.1 | 7313 | 0 | 0 | 0.87x [0.85-0.90, median 0.86] |

### Against the targets

| comparison | target | measured: ratio of bests [per-round range, median] | met? |
|---|---|---|---|
| Recursive 512/50 vs semantic-text-splitter, small | >= 1.2x | 2.39x [2.04-2.39, median 2.11] | yes |
| TokenChunker vs bare encode, cjk | >= 0.9x | 0.87x [0.85-0.90, median 0.86] | no |
| CLI start-up to the first document | <= 50% of today's | 1.26 s, no --baseline-tree given | - |
"""


def test_throughput_rows_get_the_scripts_own_targets():
    [table] = tables(interleaved([THROUGHPUT]))
    assert table.header[0] == "comparison" and table.header[-2:] == ["target", "met?"]
    rows = {r[1]: r for r in table.rows}
    assert rows["beam-chunking RecursiveChunker 512/50"][-2:] == [">= 1.2x", "yes"]
    assert rows["beam-chunking TokenChunker 512/50 cl100k"][-2:] == [">= 0.9x", "no"]
    assert rows["bare tiktoken cl100k encode_ordinary"][-2:] == ["none", ""]
    assert rows["semantic-text-splitter TextSplitter(512, overlap=50)"][0] == "Recursive 512/50 characters, small"
    # a target whose figure no row shows is a row of its own
    last = table.rows[-1]
    assert last[0] == "CLI start-up to the first document" and last[-3:] == [
        "1.26 s, no --baseline-tree given", "<= 50% of today's", "-"]


def test_peers_judge_only_our_rows():
    out = """
### Recursive, 512/50 characters (ratio vs semantic-text-splitter)

| implementation | MB/s | chunks | offset violations | ceiling violations | ratio |
|---|---:|---:|---:|---:|---:|
| beam-chunking RecursiveChunker | 115.23 | 8801 | 0 | 0 | 1.06x |
| semantic-text-splitter TextSplitter | 108.95 | 7837 | 0 | 0 | 1.00x |

### Sentences, 512/64 tokens (ratio vs chonkie)

| implementation | MB/s | chunks | offset violations | ceiling violations | ratio |
|---|---:|---:|---:|---:|---:|
| beam-chunking SentenceChunker | 4.1 | 1714 | 0 | 0 | 1.80x |
| chonkie SentenceChunker | 2.3 | 1609 | 0 | 0 | 1.00x |
"""
    [table] = tables(peers([out]))
    assert [r[0] for r in table.rows] == ["Recursive, 512/50 characters"] * 2 + ["Sentences, 512/64 tokens"] * 2
    assert [r[-2:] for r in table.rows] == [[">= 1.0x", "yes"], ["none", ""], [">= 2.0x", "no"], ["none", ""]]


def test_a_check_that_cannot_read_its_figure_leaves_met_empty():
    [table] = tables("| name | ratio |\n|---|---:|\n| ours | not run |\n| ours | 0.5x |\n")
    judged = with_targets(table, [Check("ours", ">= 1.0x", at_least("ratio", 1.0))])
    assert [r[-2:] for r in judged.rows] == [[">= 1.0x", ""], [">= 1.0x", "no"]]
