"""Context templates: what is embedded for a chunk, checked where the job is built."""
import pytest

from beam_chunking.config import JobConfig
from beam_chunking.embeddings.context import check_context, render_context
from beam_chunking.errors import ConfigError
from beam_chunking.pipelines.spec import parse_spec
from beam_chunking.transforms.incremental import options_fingerprint

TEMPLATE = "{title}\n{section_path}\n\n{text}"


def test_fields_come_from_the_chunk_and_its_document():
    meta = {"section_path": ["Install", "From source"], "title": "Guide", "page": 3}
    assert render_context(TEMPLATE, "Run make.", meta, "/docs/guide.pdf") == "Guide\nInstall > From source\n\nRun make."
    assert render_context("{uri} p{page} {author}: {text}", "x", meta, "gs://b/a.pdf") == "gs://b/a.pdf p3 : x"
    # No title metadata: the file's name without its extension.
    assert render_context(TEMPLATE, "x", {}, "gs://bucket/manuals/setup.guide.md") == "setup.guide\n\n\nx"
    assert render_context(None, "x", meta, "u") == "x"


@pytest.mark.parametrize("template, says", [
    ("{title}", "no {text} field"),
    ("{text", "expected '}'"),
    ("{page:03d} {text}", "must be a plain name"),
    ("{meta.title} {text}", "must be a plain name"),
    (["{text}"], "expected a template string"),
])
def test_a_bad_template_is_refused_in_one_line(template, says):
    with pytest.raises(ConfigError) as info:
        check_context(template)
    assert says in str(info.value) and "\n" not in str(info.value)


def test_the_spec_takes_the_template_under_embed():
    spec = parse_spec({"input": "x", "output": "o", "embed": {"context": TEMPLATE}})
    assert spec.embed_context == TEMPLATE and spec.embed == parse_spec({"input": "x", "output": "o", "embed": "minilm"}).embed
    with pytest.raises(ConfigError, match=r"^embed\.context: the template has no \{text\} field"):
        parse_spec({"input": "x", "output": "o", "embed": {"context": "{title}"}})


def test_a_template_needs_a_model_and_changes_the_options_fingerprint():
    with pytest.raises(ConfigError, match="needs an embedding model"):
        JobConfig(input=("x",), output="o", embed_context=TEMPLATE)
    bare = JobConfig(input=("x",), output="o", embed="minilm")
    framed = JobConfig(input=("x",), output="o", embed="minilm", embed_context=TEMPLATE)
    assert options_fingerprint(bare, "m") != options_fingerprint(framed, "m")
