"""The documentation: generated blocks current, every link of the README resolving, the site
building with ``mkdocs build --strict``, and the README's quickstarts running as written."""
import importlib.util
import os
import re
import shutil
import subprocess
import sys

import pytest

from beam_chunking.docs import COMMAND, blocks, pages, refresh
from beam_chunking.docs.columns import COLUMNS
from beam_chunking.registry import BUILTIN
from beam_chunking.transforms.write import SCHEMAS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _read(page: str) -> str:
    with open(os.path.join(ROOT, page), encoding="utf-8") as f:
        return f.read()


def test_every_generated_block_is_current():
    stale = refresh(ROOT, write=False)
    assert stale == [], f"stale generated blocks {stale}: run {COMMAND} to refresh them"


def test_what_the_code_can_say_is_generated_somewhere():
    names = {name for page in pages(ROOT) for name in blocks(_read(page))}
    wanted = {"strategies", "flex-parameters", "spec-example",
              *(f"strategy {s}" for s in BUILTIN),
              *(f"columns {t}" for t in ("chunks", "documents", "changes")),
              *(f"cli {c}" for c in ("run", "inspect", "preview", "template"))}
    assert wanted - names == set(), "add these generated blocks to a page under docs/"


def test_every_column_of_every_table_has_its_help():
    for table, schema in SCHEMAS.items():
        missing = [f.name for f in schema if not COLUMNS[table].get(f.name)]
        assert missing == [], f"beam_chunking/docs/columns.py: say what {table}.{missing} hold"
    for table, helps in COLUMNS.items():
        assert set(helps) <= set(SCHEMAS[table].names), f"{table}: help for columns it does not have"


def test_a_block_is_refreshed_in_place(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (tmp_path / "README.md").write_text("# r\n")
    page = docs / "p.md"
    page.write_text("before\n\n<!-- generated: columns changes -->\n\nold\n\n<!-- /generated -->\n\nafter\n")
    assert refresh(str(tmp_path)) == [("docs/p.md", "columns changes")]
    text = page.read_text()
    assert text.startswith("before\n\n<!-- generated: columns changes -->\n\n| column |") and text.endswith("after\n")
    assert "`delete_chunk_ids`" in text and refresh(str(tmp_path)) == []


_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_the_readme_links_resolve():
    """The README is read on the forge, not in the site: its links point at files."""
    broken = [target for target in _LINK.findall(_read("README.md"))
              if "://" not in target and not os.path.exists(os.path.join(ROOT, target))]
    assert broken == []


def test_the_readme_keeps_the_two_set_up_commands_first():
    readme = _read("README.md")
    assert len(readme.splitlines()) < 300
    commands = re.findall(r"```bash\n(.*?)\n```", readme, re.S)
    assert commands[:2] == [
        "python3 -m venv .venv && . .venv/bin/activate && pip install -e \".[parsers]\" && "
        "beam-chunking run --input 'examples/*' --output out --overwrite",
        "python3 -m venv .venv && . .venv/bin/activate && pip install -e \".[test]\" && python -m pytest -q",
    ]


@pytest.mark.integration
def test_the_site_builds_strictly(tmp_path):
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocstrings_handlers") is None:
        pytest.skip("MkDocs is not installed: pip install -e '.[docs]' (the test extra has it)")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    built = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-f",
                            os.path.join(ROOT, "mkdocs.yml"), "-d", str(tmp_path / "site")],
                           cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    assert (tmp_path / "site" / "reference" / "api" / "strategies" / "index.html").exists()


def _quickstart(section: str, language: str) -> str:
    readme = _read("README.md")
    body = readme.split(f"## {section}\n", 1)[1]
    return re.search(rf"```{language}\n(.*?)\n```", body, re.S).group(1)


@pytest.fixture
def examples_dir(tmp_path):
    """A folder holding a copy of examples/, where a quickstart may write out/."""
    shutil.copytree(os.path.join(ROOT, "examples"), tmp_path / "examples")
    return tmp_path


def _env():
    return dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))


@pytest.mark.integration
def test_the_readme_python_quickstart_runs(examples_dir):
    pytest.importorskip("selectolax", reason="the quickstart follows set-up command 1 (the parsers extra)")
    code = _quickstart("Python quickstart", "python")
    # Beam's threads can abort the interpreter's teardown; the CLI ends the same way.
    ran = subprocess.run([sys.executable, "-c", code + "\nimport os, sys; sys.stdout.flush(); os._exit(0)"],
                         cwd=examples_dir, env=_env(), capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert ran.stdout.splitlines()[-1].endswith("chunks in out/chunks")


@pytest.mark.integration
def test_the_readme_command_line_quickstart_runs(examples_dir):
    pytest.importorskip("selectolax", reason="the quickstart follows set-up command 1 (the parsers extra)")
    cli = f"{sys.executable} -m beam_chunking.pipelines.cli"
    lines = [line.split("  #")[0].replace("beam-chunking ", cli + " ", 1)
             for line in _quickstart("Command-line quickstart", "bash").splitlines()]
    ran = subprocess.run(["bash", "-euo", "pipefail", "-c", "\n".join(lines)], cwd=examples_dir, env=_env(),
                         capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert "0 new, 0 changed, 5 unchanged, 0 deleted" in ran.stdout
