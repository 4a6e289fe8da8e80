"""What parsers drop by default, the ``keep`` switch, and how drops are recorded."""
import pytest

from beam_chunking.errors import ConfigError
from beam_chunking.parsers._build import TextBuilder
from beam_chunking.parsers.drops import DROPS, check_keep
from beam_chunking.pipelines.run import pipeline_options
from beam_chunking.pipelines.spec import parse_spec
from beam_chunking.strategies import RecursiveChunker
from beam_chunking.strategies.base import chunk_recording_drops
from beam_chunking.types import Document


def test_keep_accepts_known_parts_and_names_the_known_ones_otherwise():
    assert check_keep(["contents", "page_furniture"]) == frozenset(DROPS)
    assert check_keep("contents") == {"contents"}
    with pytest.raises(ConfigError, match="unknown part 'headers'.*contents, page_furniture"):
        check_keep(["headers"])


def test_keep_in_the_spec_and_on_the_command_line():
    assert parse_spec({"keep": "page_furniture"}).keep == ("page_furniture",)
    assert parse_spec({"keep": ["page_furniture", "contents"]}).keep == ("contents", "page_furniture")
    with pytest.raises(ConfigError, match="keep: unknown part 'toc'"):
        parse_spec({"keep": ["toc"]})
    with pytest.raises(ConfigError, match="keep: expected a part name"):
        parse_spec({"keep": {"contents": True}})
    _, spec = pipeline_options(["--input", "x/*", "--output", "out", "--keep", "contents"])
    assert spec.keep == ("contents",)


def test_parser_drops_are_reported_before_the_strategy_drops():
    builder = TextBuilder()
    builder.add("Body text that stays.")
    builder.drop("running header", "Chapter 1  Intro\n")
    builder.drop("running header", "Chapter 1  Intro")
    builder.add_drops((("page number", 2),))
    parsed = builder.build(Document("d", "u", b"", "application/pdf"))
    # whitespace is not counted: 13 visible characters per header
    assert parsed.dropped == (("running header", 26), ("page number", 2))
    chunks, dropped = chunk_recording_drops(RecursiveChunker(max_chunk_size=100, overlap=0), parsed)
    assert [c.text for c in chunks] == ["Body text that stays."]
    assert dropped == parsed.dropped
