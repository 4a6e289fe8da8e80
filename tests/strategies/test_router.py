import pytest

from beam_chunking.errors import ConfigError, UnsupportedContentType
from beam_chunking.registry import REGISTRY, get
from beam_chunking.strategies import FixedSizeChunker, RecursiveChunker, Router, SentenceChunker
from beam_chunking.types import ParsedDocument, Section


def doc(ctype):
    return ParsedDocument("d", "u", ctype, "Hello there. Bye.", (Section(0, 17),))


def test_exact_then_family_then_default():
    router = Router({"text/markdown": SentenceChunker(), "text/*": FixedSizeChunker()}, default=RecursiveChunker())
    assert isinstance(router.select(doc("text/markdown")), SentenceChunker)
    assert isinstance(router.select(doc("text/plain")), FixedSizeChunker)
    assert isinstance(router.select(doc("application/pdf")), RecursiveChunker)


def test_no_silent_fallback():
    router = Router({"text/markdown": SentenceChunker()})
    with pytest.raises(UnsupportedContentType, match="text/plain.*no default"):
        router.chunk_document(doc("text/plain"))


def test_bad_routes_rejected():
    with pytest.raises(ConfigError):
        Router({"markdown": SentenceChunker()})


def test_registry_builds_every_strategy():
    assert set(REGISTRY) == {"fixed", "recursive", "token", "sentence", "hierarchical", "structural", "code",
                             "legal", "book", "academic", "qa_pairs", "email", "semantic", "cluster_semantic", "late",
                             "proposition", "parent_child", "transcript", "resume"}
    for name in REGISTRY:
        assert get(name).name == name
    with pytest.raises(ConfigError, match="not registered"):
        get("nope")
    with pytest.raises(ConfigError, match="unexpected keyword"):
        get("recursive", size=3)


def test_fingerprint_is_stable_and_config_sensitive():
    assert get("recursive").fingerprint == RecursiveChunker().fingerprint
    assert RecursiveChunker(overlap=10).fingerprint != RecursiveChunker().fingerprint
