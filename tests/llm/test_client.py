"""The chat client against a real local HTTP server: retries, throttle, cache, JSON mode."""
import time

import pytest

from beam_chunking.errors import ConfigError, LLMError
from beam_chunking.llm import ChatClient, LLMConfig
from beam_chunking.llm.cache import ResponseCache, cache_key
from beam_chunking.llm.replies import parse_json, string_items


def client(server, tmp_path, **options):
    options.setdefault("cache", str(tmp_path / "cache"))
    return ChatClient(LLMConfig(model="test-model", base_url=server.base_url, retry_initial_delay=0.01,
                                retry_max_delay=0.05, **options))


def test_retries_429_and_5xx_with_backoff_then_answers(chat_server, tmp_path):
    chat_server.failures = [429, 500, 503]
    reply = client(chat_server, tmp_path).complete("split", "One. Two.", "v1")
    assert parse_json(reply.text) == {"propositions": ["One.", "Two."]}
    assert chat_server.calls == 4
    gaps = [b - a for a, b in zip(chat_server.started, chat_server.started[1:])]
    assert all(g >= 0.01 for g in gaps)  # each retry waited


def test_other_4xx_is_not_retried(chat_server, tmp_path):
    chat_server.failures = [401]
    with pytest.raises(LLMError, match="HTTP 401"):
        client(chat_server, tmp_path, json_mode=False).complete("split", "One.", "v1")
    assert chat_server.calls == 1


def test_gives_up_after_max_retries(chat_server, tmp_path):
    chat_server.failures = [500] * 10
    with pytest.raises(LLMError, match="HTTP 500"):
        client(chat_server, tmp_path, max_retries=2).complete("split", "One.", "v1")
    assert chat_server.calls == 3


def test_a_timeout_is_retried(chat_server, tmp_path):
    chat_server.delay = 0.5
    with pytest.raises(LLMError, match="could not be reached after 1 retries"):
        client(chat_server, tmp_path, timeout=0.1, max_retries=1).complete("split", "One.", "v1")
    assert chat_server.calls == 2


def test_requests_per_minute_spaces_the_starts(chat_server, tmp_path):
    c = client(chat_server, tmp_path, requests_per_minute=600, cache=None)  # one per 0.1 s
    replies = c.complete_many([("split", f"Sentence {k}.", "v1") for k in range(6)])
    assert all(not isinstance(r, LLMError) for r in replies)
    span = chat_server.started[-1] - chat_server.started[0]
    assert span >= 0.45  # 5 intervals of 0.1 s, minus scheduling slack


def test_max_concurrency_bounds_requests_in_flight(chat_server, tmp_path):
    chat_server.delay = 0.2
    c = client(chat_server, tmp_path, max_concurrency=2, cache=None)
    started = time.monotonic()
    c.complete_many([("split", f"S {k}.", "v1") for k in range(4)])
    assert time.monotonic() - started >= 0.4  # two waves of two


def test_a_re_run_is_answered_from_the_cache_with_no_call(chat_server, tmp_path):
    first = client(chat_server, tmp_path).complete("split", "One. Two.", "v1")
    assert not first.cached and first.prompt_tokens > 0
    again = client(chat_server, tmp_path).complete("split", "One. Two.", "v1")
    assert again.cached and again.text == first.text and again.prompt_tokens == 0
    assert chat_server.calls == 1
    client(chat_server, tmp_path).complete("split", "One. Two.", "v2")  # a new prompt version asks again
    assert chat_server.calls == 2


def test_cache_off_always_asks(chat_server, tmp_path):
    for _ in range(2):
        client(chat_server, tmp_path, cache=None).complete("split", "One.", "v1")
    assert chat_server.calls == 2


def test_a_server_without_json_mode_is_asked_again_without_it(chat_server, tmp_path):
    chat_server.refuse_json_mode = True
    c = client(chat_server, tmp_path, cache=None)
    assert parse_json(c.complete("split", "One.", "v1").text) == {"propositions": ["One."]}
    assert "response_format" in chat_server.requests[0] and "response_format" not in chat_server.requests[1]
    c.complete("split", "Two.", "v1")
    assert "response_format" not in chat_server.requests[2]  # remembered


def test_cache_ignores_damaged_entries(tmp_path):
    cache = ResponseCache(str(tmp_path))
    key = cache_key("m", "v1", "text")
    cache.put(key, {"text": "answer"})
    assert cache.get(key) == {"text": "answer"}
    path = tmp_path / key[:2] / f"{key}.json"
    path.write_bytes(b'{"text": "trunc')
    assert cache.get(key) is None
    assert cache_key("m", "v1", "text") != cache_key("m", "v2", "text") != cache_key("n", "v1", "text")


def test_tolerant_json_reading():
    assert parse_json('```json\n["a", "b"]\n```') == ["a", "b"]
    assert parse_json('Sure! Here they are: {"propositions": ["x"]} Hope it helps.') == {"propositions": ["x"]}
    with pytest.raises(ValueError):
        parse_json("no json here")
    assert string_items({"propositions": ["A  b.", " ", 3, {"text": "C."}]}, ["propositions"]) == ["A b.", "C."]
    assert string_items({"items": ["a"]}) == ["a"]
    assert string_items({"a": [], "b": []}) is None
    assert string_items("text") is None


def test_config_is_validated_by_field():
    with pytest.raises(ConfigError, match="llm.max_concurrency"):
        LLMConfig(max_concurrency=0)
    with pytest.raises(ConfigError, match="llm: unknown option 'modle'"):
        LLMConfig.of({"modle": "x"})
    assert LLMConfig(cache=None).cache_location is None
    assert LLMConfig().cache_location.endswith("beam-chunking/llm")


def test_the_request_carries_the_configured_model_options_and_the_key_from_the_environment(chat_server, tmp_path,
                                                                                          monkeypatch):
    monkeypatch.setenv("MY_LLM_KEY", "sk-from-the-environment")
    client(chat_server, tmp_path, cache=None, api_key_env="MY_LLM_KEY", temperature=0.3,
           max_output_tokens=77).complete("split", "One.", "v1")
    body, headers = chat_server.requests[0], {k.lower(): v for k, v in chat_server.headers[0].items()}
    assert (body["model"], body["temperature"], body["max_tokens"]) == ("test-model", 0.3, 77)
    assert body["messages"] == [{"role": "system", "content": "split"}, {"role": "user", "content": "One."}]
    assert headers["authorization"] == "Bearer sk-from-the-environment"


@pytest.mark.parametrize("bad", ["not json at all", '{"propositions": ["cut sh', ""])
def test_an_answer_the_strategy_refuses_is_not_cached_and_the_fixed_server_is_asked_again(chat_server, tmp_path,
                                                                                          bad):
    from beam_chunking.parsers import parse
    from beam_chunking.registry import get
    from beam_chunking.types import Document

    doc = parse(Document("d", "d.txt", b"The cat sat. The dog ran.", "text/plain"))
    strategy = get("proposition", llm=LLMConfig(model="test-model", base_url=chat_server.base_url,
                                                 cache=str(tmp_path / "cache"), retry_initial_delay=0.01))
    chat_server.answer = lambda system, user: bad  # a broken server: not JSON, cut short, empty
    chunks, usage = strategy.chunk_with_usage(doc)
    assert usage.fallbacks == 1 and [c.metadata["chunk_kind"] for c in chunks] == ["passage"]
    chat_server.answer = lambda system, user: {"propositions": ["The cat sat.", "The dog ran."]}  # fixed
    chunks, usage = strategy.chunk_with_usage(doc)
    assert usage.fallbacks == 0 and chat_server.calls == 2  # asked again, not served the bad answer
    assert [c.text for c in chunks if c.metadata["chunk_kind"] == "proposition"] == ["The cat sat.", "The dog ran."]
    strategy.chunk_with_usage(doc)
    assert chat_server.calls == 2  # the accepted answer is cached


def test_a_refused_cached_answer_is_asked_for_again(chat_server, tmp_path):
    c = client(chat_server, tmp_path)
    c.complete("split", "One.", "v1")  # cached without a check, as an older version cached everything
    reply = c.complete("split", "One.", "v1", accept=lambda text: "never" in text)
    assert not reply.cached and chat_server.calls == 2
