"""The answer cache on gs://, against gcp-storage-emulator: a re-run pays nothing there too."""
from beam_chunking.llm import ChatClient, LLMConfig
from beam_chunking.llm.cache import ResponseCache, cache_key
from tests.pipelines.gcs_emulator import gcs_emulator


def test_answers_cached_in_gcs_are_reused_by_a_new_client(tmp_path, chat_server):
    with gcs_emulator(tmp_path, "llm-cache") as root:
        config = LLMConfig(model="test", base_url=chat_server.base_url, cache=f"{root}/answers", max_retries=0)
        first = ChatClient(config).complete("split", "One. Two.", "v1")
        again = ChatClient(config).complete("split", "One. Two.", "v1")
        assert not first.cached and again.cached and again.text == first.text
        assert chat_server.calls == 1
        key = cache_key("test", "v1", "One. Two.")
        assert ResponseCache(f"{root}/answers").get(key)["text"] == first.text
        assert ResponseCache(f"{root}/answers").get(cache_key("test", "v2", "One. Two.")) is None
