"""The registry and the option declarations everything else is derived from."""
import dataclasses
import os
import subprocess
import sys
import textwrap

import pytest

from beam_chunking.docs import BLOCK, COMMAND
from beam_chunking.errors import ConfigError
from beam_chunking.pipelines.options import strategy_flags
from beam_chunking.pipelines.run import pipeline_options
from beam_chunking.registry import BUILTIN, ENTRY_POINT_GROUP, JOB_WIDE_OPTION, listing, markdown_table, options, registry, unit_of

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIZE_BOUNDED = ("fixed", "recursive", "token", "sentence", "structural", "code", "semantic", "late")


def test_the_docs_strategy_table_matches_the_registry():
    page = open(os.path.join(ROOT, "docs", "strategies", "index.md"), encoding="utf-8").read()
    block = next((m for m in BLOCK.finditer(page) if m.group("name") == "strategies"), None)
    assert block, "docs/strategies/index.md lost its generated strategy table (<!-- generated: strategies -->)"
    assert block.group("body") == markdown_table(), f"the docs' strategy table drifted: run {COMMAND} to refresh it"


def test_every_option_has_one_line_of_help():
    for name, cls in BUILTIN.items():
        for option in options(cls):
            assert option.help, f"{name}.{option.name} has no Args: entry in {cls.__name__}'s docstring"


def test_one_vocabulary_for_size():
    for name in SIZE_BOUNDED:
        fields = {f.name for f in dataclasses.fields(BUILTIN[name])}
        assert "max_chunk_size" in fields, name
        assert not fields & {"max_tokens", "window_tokens", "overlap_tokens", "model", "encoding"}, name
    assert unit_of(BUILTIN["token"]) == "cl100k_base tokens" and unit_of(BUILTIN["recursive"]) == "characters"
    assert unit_of(BUILTIN["hierarchical"]) == "unbounded"


@pytest.mark.parametrize("name", ["recursive", "token", "sentence", "structural", "code"])
def test_generic_size_flags_work_for_every_size_bounded_strategy(name):
    _, spec = pipeline_options(["--input", "a", "--output", "b", "--strategy", name, "--max-chunk-size", "300"])
    assert spec.strategy.max_chunk_size == 300


def test_every_option_is_a_flag_and_wrong_ones_name_the_strategy():
    flags = strategy_flags()
    # llm is the one option without its own flag: the job's --llm-* flags set it.
    assert {o.name for cls in BUILTIN.values() for o in options(cls)} - {JOB_WIDE_OPTION} == set(flags)
    _, spec = pipeline_options(["--input", "a", "--output", "b", "--strategy", "sentence", "--tokenizer", "gpt-4",
                                "--overlap", "8"])
    assert (spec.strategy.tokenizer, spec.strategy.overlap) == ("gpt-4", 8)
    with pytest.raises(ConfigError, match=r"strategy\.separators: unknown option of strategy 'sentence'"):
        pipeline_options(["--input", "a", "--output", "b", "--strategy", "sentence", "--separators", "['x']"])


def test_listing_shows_units_defaults_and_help():
    text = listing()
    assert "token  (TokenChunker; sizes in cl100k_base tokens)" in text
    assert "--breakpoint-percentile 0.25: " in text and "seed" not in text.lower()


PLUGIN = textwrap.dedent('''
    from dataclasses import dataclass
    from beam_chunking.strategies import SectionChunker


    @dataclass(frozen=True)
    class LineChunker(SectionChunker):
        """One chunk per non-empty line.

        Args:
            max_lines: Lines per chunk. Default 1.
        """

        name = "lines"
        max_lines: int = 1

        def section_spans(self, text, start, end):
            pos = start
            for line in text[start:end].splitlines(keepends=True):
                if line.strip():
                    yield pos, pos + len(line.rstrip("\\n")), None
                pos += len(line)
''')


@pytest.fixture
def plugin_site(tmp_path):
    """A tiny plugin distribution, installed the way pip lays one out: a module and its
    .dist-info with an entry point in the beam_chunking.strategies group."""
    site = tmp_path / "site"
    (site / "bc_lines_plugin").mkdir(parents=True)
    (site / "bc_lines_plugin" / "__init__.py").write_text(PLUGIN)
    info = site / "bc_lines_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: bc-lines-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\nlines = bc_lines_plugin:LineChunker\n")
    return str(site)


def test_plugin_strategy_works_from_the_cli_and_the_spec(plugin_site, tmp_path):
    out = tmp_path / "out"
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"input: {ROOT}/examples/*.txt\noutput: {out}\nstrategy: {{name: lines, max_lines: 1}}\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([plugin_site, ROOT]))
    listed = subprocess.run([sys.executable, "-m", "beam_chunking.pipelines.cli", "strategies"], env=env,
                            capture_output=True, text=True, timeout=120)
    assert "lines  (LineChunker; sizes in characters)" in listed.stdout and "--max-lines 1" in listed.stdout
    code = ("import sys; from beam_chunking.pipelines.cli import main; from beam_chunking import read_table;"
            f"rc = main(['run', '--config', {str(spec)!r}, '--max-lines', '1']);"
            f"t = read_table({str(out)!r}); print(rc, set(t.column('strategy').to_pylist()), t.num_rows, flush=True);"
            # Beam's threads can abort the interpreter's teardown; the CLI ends the same way.
            "import os; os._exit(0)")
    ran = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr[-2000:]
    rc, strategies, rows = ran.stdout.strip().splitlines()[-1].split(" ", 2)
    assert rc == "0" and strategies.startswith("{'lines'}") and int(rows.split()[-1]) > 3


def test_plugin_may_not_replace_a_builtin(tmp_path, monkeypatch):
    site = tmp_path / "site"
    info = site / "evil-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: evil\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\nrecursive = os:path\n")
    monkeypatch.syspath_prepend(str(site))
    from beam_chunking import registry as module

    monkeypatch.setattr(module, "_LOADED", {})
    with pytest.raises(ConfigError, match="would replace a built-in"):
        registry()
