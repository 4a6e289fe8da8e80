"""Proposition chunking against the local OpenAI-compatible test server."""
import pickle

import pytest

from beam_chunking.errors import ConfigError
from beam_chunking.llm import LLMConfig
from beam_chunking.strategies.proposition import PropositionChunker
from beam_chunking.types import ParsedDocument, Section

TEXT = ("Marie Curie was born in Warsaw. She won two Nobel prizes.\n\n"
        "The first prize was in physics. It was shared with Pierre Curie.")


def strategy(server, tmp_path, **options):
    llm = LLMConfig(model="test", base_url=server.base_url, cache=str(tmp_path / "cache"), max_retries=1,
                    retry_initial_delay=0.01, retry_max_delay=0.02)
    return PropositionChunker(llm=llm, **options)


def two_pages():
    cut = TEXT.index("The first")
    return ParsedDocument("doc", "file:///doc.pdf", "application/pdf", TEXT,
                          (Section(0, cut - 2, page=1), Section(cut, len(TEXT), page=2)))


def test_each_proposition_is_a_chunk_pointing_at_its_passage(chat_server, tmp_path):
    chunks, usage = strategy(chat_server, tmp_path).chunk_with_usage(two_pages())
    assert [c.text for c in chunks] == ["Marie Curie was born in Warsaw.", "She won two Nobel prizes.",
                                        "The first prize was in physics.", "It was shared with Pierre Curie."]
    assert chat_server.calls == 1  # both pages fit one passage of 1000 tokens
    for k, c in enumerate(chunks, start=1):
        assert (c.start, c.end) == (0, len(TEXT)) and c.ordinal == k and c.id == f"doc:0000000000#{k}"
        assert c.metadata["chunk_kind"] == "proposition" and c.metadata["rewrite"] is True
        assert (c.metadata["parent_start"], c.metadata["parent_end"]) == (0, len(TEXT))
        assert (c.metadata["page"], c.metadata["page_end"]) == (1, 2)
        assert c.token_count > 0
    assert [c.index for c in chunks] == [0, 1, 2, 3]
    assert usage.calls == 1 and usage.fallbacks == 0 and usage.prompt_tokens > 0


def test_passages_are_token_bounded_and_cover_the_text(chat_server, tmp_path):
    text = " ".join(f"Sentence number {k} is here." for k in range(300))
    doc = ParsedDocument("d", "u", "text/plain", text, (Section(0, len(text)),))
    s = strategy(chat_server, tmp_path, max_passage_tokens=100)
    passages = s.passages(doc)
    assert len(passages) > 5
    assert all(s.sizer.count(text[p.start:p.end]) <= 100 for p in passages)
    assert "".join(text[p.start:p.end] for p in passages).replace(" ", "") == text.replace(" ", "")
    chunks = s.chunk_document(doc)
    assert chat_server.calls == len(passages)
    assert len(chunks) == 300


def test_emit_parent_passages_puts_the_passage_first(chat_server, tmp_path):
    chunks = strategy(chat_server, tmp_path, emit_parent_passages=True).chunk_document(two_pages())
    assert chunks[0].metadata["chunk_kind"] == "passage" and chunks[0].ordinal == 0
    assert chunks[0].text == TEXT and "rewrite" not in chunks[0].metadata
    assert [c.metadata["chunk_kind"] for c in chunks[1:]] == ["proposition"] * 4


@pytest.mark.parametrize("answer, problem", [
    ("this is not json at all", "not JSON"),
    ({"propositions": []}, "no usable"),
    ({"propositions": ["  ", "x" * 2001]}, "no usable"),
    ({"a": [], "b": []}, "no array"),
])
def test_an_unusable_answer_falls_back_to_the_passage(chat_server, tmp_path, caplog, answer, problem):
    chat_server.answer = lambda system, user: answer
    chunks, usage = strategy(chat_server, tmp_path).chunk_with_usage(two_pages())
    assert [c.text for c in chunks] == [TEXT] and chunks[0].metadata["chunk_kind"] == "passage"
    assert chunks[0].ordinal == 0 and usage.fallbacks == 1 and usage.calls == 1
    assert problem in caplog.text and "file:///doc.pdf" in caplog.text


def test_a_failed_call_falls_back_and_is_not_counted_as_a_call(chat_server, tmp_path):
    chat_server.failures = [500, 500]
    chunks, usage = strategy(chat_server, tmp_path).chunk_with_usage(two_pages())
    assert [c.metadata["chunk_kind"] for c in chunks] == ["passage"]
    assert usage.fallbacks == 1 and usage.calls == 0 and usage.failed_calls == 1 and chat_server.calls == 2


def test_oversized_answers_are_capped(chat_server, tmp_path):
    chat_server.answer = lambda system, user: {"propositions": [f"Fact {k}." for k in range(500)]}
    chunks = strategy(chat_server, tmp_path, max_propositions_per_passage=50).chunk_document(two_pages())
    assert len(chunks) == 50 and chunks[-1].text == "Fact 49."


def test_a_re_run_pays_nothing(chat_server, tmp_path):
    first = strategy(chat_server, tmp_path).chunk_document(two_pages())
    again, usage = strategy(chat_server, tmp_path).chunk_with_usage(two_pages())
    assert again == first and chat_server.calls == 1
    assert usage.cached_calls == 1 and usage.prompt_tokens == 0


def test_a_new_prompt_is_not_answered_from_the_old_cache(chat_server, tmp_path):
    strategy(chat_server, tmp_path).chunk_document(two_pages())
    strategy(chat_server, tmp_path, prompt="List the facts as JSON.").chunk_document(two_pages())
    assert chat_server.calls == 2


def test_cancellation_propagates(chat_server, tmp_path, monkeypatch):
    import beam_chunking.strategies.proposition as module

    def cancelled(answer):
        raise KeyboardInterrupt  # as if the user pressed Ctrl-C while the answer was read

    monkeypatch.setattr(module, "parse_json", cancelled)
    with pytest.raises(KeyboardInterrupt):
        strategy(chat_server, tmp_path).chunk_document(two_pages())


def test_options_are_checked_and_the_strategy_pickles(tmp_path):
    with pytest.raises(ConfigError, match="max_passage_tokens"):
        PropositionChunker(max_passage_tokens=0)
    with pytest.raises(ConfigError, match="PropositionChunker.llm: unknown option 'modle'"):
        PropositionChunker(llm={"modle": "x"})
    s = PropositionChunker(llm={"model": "m", "cache": str(tmp_path)})
    assert pickle.loads(pickle.dumps(s)) == s and s.llm_config.model == "m"
    assert PropositionChunker().chunk_document(ParsedDocument("d", "u", "text/plain", "  ", (Section(0, 2),))) == []
