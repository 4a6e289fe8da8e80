"""The résumé template against the local OpenAI-compatible test server."""
import pytest

from beam_chunking.domains.resume import ResumeChunker, render
from beam_chunking.errors import ConfigError
from beam_chunking.llm import LLMConfig
from beam_chunking.types import ParsedDocument, Section

CV = """Ada Lovelace
ada@example.org, London

Experience
Analyst, Analytical Engine Project, 1842-1843. Wrote the first published program.

Education
Private tutoring in mathematics, 1830s.

Skills: mathematics, translation, poetry
"""

EXTRACTED = {
    "contact": {"name": "Ada Lovelace", "email": "ada@example.org", "phone": None, "location": "London", "links": []},
    "summary": None,
    "experience": [{"title": "Analyst", "organization": "Analytical Engine Project", "start": "1842", "end": "1843",
                    "description": "Wrote the first published program."}],
    "education": [{"degree": "Private tutoring in mathematics", "start": "1830s"}],
    "skills": ["mathematics", "translation", "poetry"],
    "certifications": [],
}


def template(server, tmp_path, **options):
    llm = LLMConfig(model="test", base_url=server.base_url, cache=str(tmp_path / "c"), max_retries=0)
    return ResumeChunker(llm=llm, **options)


def doc():
    return ParsedDocument("cv", "file:///cv.pdf", "application/pdf", CV, (Section(0, len(CV), page=1),))


def test_each_section_and_entry_is_a_field_chunk(chat_server, tmp_path):
    chat_server.answer = lambda system, user: EXTRACTED
    chunks, usage = template(chat_server, tmp_path).chunk_with_usage(doc())
    assert [(c.metadata["resume_field"], c.metadata.get("resume_entry")) for c in chunks] == [
        ("contact", None), ("experience", 1), ("education", 1), ("skills", None)]
    assert chunks[0].text == "Contact:\nName: Ada Lovelace\nEmail: ada@example.org\nLocation: London"
    assert chunks[1].text.startswith("Experience:\nTitle: Analyst\nOrganization: Analytical Engine Project")
    assert chunks[3].text == "Skills: mathematics, translation, poetry"
    for k, c in enumerate(chunks):
        assert (c.start, c.end, c.ordinal, c.index) == (0, 0, k + 1, k)
        assert c.metadata["rewrite"] is True and c.metadata["template"] == "resume"
        assert "page" not in c.metadata and "page_end" not in c.metadata
    assert len({c.id for c in chunks}) == len(chunks)
    assert usage.calls == 1 and usage.fallbacks == 0 and chat_server.calls == 1


@pytest.mark.parametrize("answer", ["not json", ["a list"], {"hobbies": ["chess"]}])
def test_an_unusable_answer_keeps_the_whole_text(chat_server, tmp_path, answer):
    chat_server.answer = lambda system, user: answer
    chunks, usage = template(chat_server, tmp_path).chunk_with_usage(doc())
    assert len(chunks) == 1 and chunks[0].text == CV and (chunks[0].start, chunks[0].end) == (0, len(CV))
    assert chunks[0].metadata["chunk_kind"] == "document" and chunks[0].metadata["page"] == 1
    assert usage.fallbacks == 1


def test_a_failed_call_keeps_the_whole_text(chat_server, tmp_path):
    chat_server.failures = [503]
    chunks, usage = template(chat_server, tmp_path).chunk_with_usage(doc())
    assert [c.metadata["chunk_kind"] for c in chunks] == ["document"] and usage.calls == 0


def test_the_prompt_is_replaceable_and_sent(chat_server, tmp_path):
    chat_server.answer = lambda system, user: {"skills": ["x"]} if system == "Only skills, as JSON." else {}
    chunks = template(chat_server, tmp_path, prompt="Only skills, as JSON.").chunk_document(doc())
    assert [c.text for c in chunks] == ["Skills: x"]
    with pytest.raises(ConfigError, match="prompt"):
        ResumeChunker(prompt=" ")


def test_render():
    assert render({"first_name": "A", "skip": None, "tags": ["x", "", "y"]}) == "First name: A\nTags: x, y"
    assert render(True) == "" and render(3) == "3"
