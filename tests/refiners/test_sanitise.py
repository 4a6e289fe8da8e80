"""The sanitiser: built-in redaction, user functions, and what a rewritten chunk says."""
import pickle

import numpy as np
import pytest

from beam_chunking.errors import ConfigError
from beam_chunking.refiners import Refined
from beam_chunking.refiners.sanitise import Sanitiser, redact
from beam_chunking.strategies import RecursiveChunker
from beam_chunking.strategies.base import text_document
from beam_chunking.types import Chunk


def shout(text):
    """A user function for the tests: upper-cases the text."""
    return text.upper()


@pytest.mark.parametrize("text, expected, kinds", [
    ("Write to ada.lovelace+cv@example.co.uk today.", "Write to [EMAIL] today.", ["email"]),
    ("Call +1 (555) 123-4567 or 020 7946 0958.", "Call [PHONE] or [PHONE].", ["phone"]),
    ("key AKIAIOSFODNN7EXAMPLE and ghp_" + "a" * 36, "key [SECRET] and [SECRET]", ["secret"]),
    ("export API_KEY='s3cr3tvalue'", "export API_KEY='[SECRET]'", ["secret"]),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----", "[SECRET]", ["secret"]),
])
def test_redaction_finds_each_kind(text, expected, kinds):
    assert redact(text) == (expected, kinds)


@pytest.mark.parametrize("text", [
    "Released on 2026-12-01, version 1.2.3, server 192.168.100.200.",
    "In 2024 2025 we sold 1 000 000 units; see page 12.",
    "The ratio is 3.14159 and ISBN 978-3-16-148410-0.",
])
def test_redaction_leaves_dates_versions_and_numbers(text):
    assert redact(text) == (text, [])


def test_a_sanitised_chunk_keeps_its_span_and_says_so():
    doc = text_document("Contact ada@example.org for details.\n\nNothing private here.")
    chunks = Refined(RecursiveChunker(max_chunk_size=40, overlap=0), Sanitiser()).chunk_document(doc)
    first, second = chunks
    assert first.text == "Contact [EMAIL] for details." and doc.text[first.start:first.end] != first.text
    assert first.metadata["sanitised"] == ["email"] and first.metadata["rewrite"] is True
    assert first.token_count is None  # counted again on the new text
    assert second.text == doc.text[second.start:second.end] and "rewrite" not in second.metadata


def test_a_sanitised_chunk_loses_its_vector_and_an_unchanged_one_keeps_it():
    doc = text_document("ada@example.org")
    vec = np.ones(3, dtype=np.float32)
    chunks = [Chunk("", 0, 0, 15, doc.text, 5, {}, vec), Chunk("", 1, 0, 3, "ada", 1, {}, vec)]
    out = Sanitiser().refine(doc, chunks)
    assert out[0].embedding is None and out[1] is chunks[1]


def test_user_functions_run_after_redaction_by_name():
    s = Sanitiser(redact=("email",), functions=("tests.refiners.test_sanitise:shout",))
    assert s.sanitise("mail ada@example.org") == ("MAIL [EMAIL]", ["email", "tests.refiners.test_sanitise:shout"])
    assert pickle.loads(pickle.dumps(s)) == s


@pytest.mark.parametrize("options, message", [
    ({"redact": ("emails",)}, "unknown kind 'emails'"),
    ({"functions": ("nomodule",)}, "must be 'package.module:function'"),
    ({"functions": ("tests.refiners.test_sanitise:missing",)}, "cannot load"),
])
def test_bad_options_fail_at_construction(options, message):
    with pytest.raises(ConfigError, match=message):
        Sanitiser(**options)
