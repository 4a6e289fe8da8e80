import os

import pytest

from hypothesis import HealthCheck, settings

settings.register_profile(
    "default", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("ci", max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture
def chat_server():
    """A local OpenAI-compatible chat server on 127.0.0.1 (see tests/llm/server.py)."""
    from tests.llm.server import ChatServer

    server = ChatServer().start()
    yield server
    server.stop()


@pytest.fixture
def embedding_server():
    """A local OpenAI-compatible embeddings server on 127.0.0.1 (see tests/embeddings/server.py)."""
    from tests.embeddings.server import EmbeddingServer

    server = EmbeddingServer().start()
    yield server
    server.stop()
