"""The strategy a job uses when it names none: routed by content type."""
import subprocess
import sys

import pytest

from beam_chunking.config import JobConfig
from beam_chunking.default_strategy import DEFAULT_ROUTES, default_strategy
from beam_chunking.errors import ConfigError
from beam_chunking.parsers import parse
from beam_chunking.pipelines.spec import parse_spec
from beam_chunking.registry import DEFAULT_STRATEGY, get
from beam_chunking.strategies import Router
from beam_chunking.types import Document

SOURCE = b"def one():\n    return 1\n\n\ndef two():\n    return 2\n"
VTT = b"WEBVTT\n\n" + b"\n\n".join(b"00:00:%02d.000 --> 00:00:%02d.000\nCue number %d says a few words." % (i, i + 1, i)
                                  for i in range(30))


def docs():
    return {
        "text/x-python": parse(Document("py", "tool.py", SOURCE, "text/x-python")),
        "text/vtt": parse(Document("vtt", "talk.vtt", VTT, "text/vtt")),
        "text/markdown": parse(Document("md", "notes.md", b"# Title\n\nSome prose.\n", "text/markdown")),
        "application/json": parse(Document("js", "data.json", b'{"a": [1, 2]}', "application/json")),
    }


def test_code_and_transcripts_have_their_strategies_and_everything_else_structural():
    chosen = {ctype: default_strategy().select(doc).name for ctype, doc in docs().items()}
    assert chosen == {"text/x-python": "code", "text/vtt": "transcript", "text/markdown": "structural",
                      "application/json": "code"}
    assert DEFAULT_STRATEGY == "structural" and DEFAULT_ROUTES["application/x-subrip"] == "transcript"


def test_transcript_cues_are_grouped_not_chunked_one_by_one():
    doc = docs()["text/vtt"]
    assert len(default_strategy().chunk_document(doc)) < len(get("recursive").chunk_document(doc)) == 30


def test_a_job_naming_no_strategy_routes_by_content_type():
    assert JobConfig(input=("x",), output="o").strategy == default_strategy()
    assert parse_spec({"input": "x", "output": "o"}).strategy == default_strategy()
    assert JobConfig.of(input="x", output="o", strategy=None).strategy == default_strategy()


def test_a_named_strategy_serves_every_document():
    spec = parse_spec({"input": "x", "output": "o", "strategy": "recursive"})
    assert spec.strategy == get("recursive")


def test_the_spec_routes_replace_the_default_ones_they_cover():
    spec = parse_spec({"input": "x", "output": "o", "routes": {"text/*": "sentence", "text/vtt": "token"}})
    router = spec.strategy
    assert isinstance(router, Router) and router.default == get("structural")
    chosen = {ctype: router.select(doc).name for ctype, doc in docs().items()}
    # text/x-python falls under the spec's text/*; JSON keeps its default route.
    assert chosen == {"text/x-python": "sentence", "text/vtt": "token", "text/markdown": "sentence",
                      "application/json": "code"}


def test_options_without_a_strategy_name_are_refused():
    with pytest.raises(ConfigError, match=r"strategy\.name: required with options \(max_chunk_size\)"):
        parse_spec({"input": "x", "output": "o", "strategy": {"max_chunk_size": 300}})


def test_a_nested_strategy_without_a_name_changes_its_sides_default():
    spec = parse_spec({"input": "x", "output": "o",
                       "strategy": {"name": "parent_child", "parent": {"max_chunk_size": 2048}}})
    assert spec.strategy.parent == get("token", max_chunk_size=2048, overlap=0)


def test_the_cli_refuses_a_strategy_flag_without_a_strategy(tmp_path):
    done = subprocess.run([sys.executable, "-m", "beam_chunking.pipelines.cli", "run", "--input",
                           str(tmp_path / "*.txt"), "--output", str(tmp_path / "out"), "--max-chunk-size", "300"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "--max-chunk-size: a strategy option needs --strategy NAME" in done.stderr


def test_strategy_null_leaves_only_the_routes_and_unrouted_documents_fail():
    from beam_chunking.errors import UnsupportedContentType

    spec = parse_spec({"input": "x", "output": "o", "strategy": None, "routes": {"text/markdown": "sentence"}})
    assert spec.strategy == Router({"text/markdown": get("sentence")}, default=None)
    with pytest.raises(UnsupportedContentType, match="no chunking strategy is routed for content type 'text/x-python'"):
        spec.strategy.select(docs()["text/x-python"])
    with pytest.raises(ConfigError, match=r"strategy: null .* needs routes"):
        parse_spec({"input": "x", "output": "o", "strategy": None})


def test_strategy_none_on_the_command_line(tmp_path):
    from beam_chunking.pipelines.run import pipeline_options

    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text("routes: {text/markdown: sentence}\n")
    _, spec = pipeline_options(["--config", str(spec_file), "--input", "x", "--output", "o", "--strategy", "none"])
    assert spec.strategy == Router({"text/markdown": get("sentence")}, default=None)


def test_embed_context_on_the_command_line_keeps_non_ascii_text_and_reads_newlines():
    from beam_chunking.pipelines.run import pipeline_options

    _, spec = pipeline_options(["--input", "x", "--output", "o", "--embed-context", "{title} — Überblick\\n\\n{text}"])
    assert spec.embed_context == "{title} — Überblick\n\n{text}"
