"""Errors pickle whole: type, message and attributes (the watchdog's child sends them back)."""
from __future__ import annotations

import copy
import inspect
import pickle

import pytest

from beam_chunking import errors
from beam_chunking.errors import ChunkingError, ConfigError, LimitExceeded, MissingExtra

CLASSES = sorted((c for c in vars(errors).values() if inspect.isclass(c) and issubclass(c, ChunkingError)),
                 key=lambda c: c.__name__)
EXTRA = {ConfigError: {"field": "overlap"}, LimitExceeded: {"limit": "max_pages"}}


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
@pytest.mark.parametrize("where", [{}, {"uri": "docs/a.pdf", "document_id": "d1"}, {"document_id": "d1"}])
def test_every_error_pickles_with_its_message_and_attributes(cls, where):
    error = cls("what went wrong", **where, **EXTRA.get(cls, {}))
    for copied in (pickle.loads(pickle.dumps(error)), copy.copy(error)):
        assert type(copied) is cls
        assert str(copied) == str(error) and copied.args == error.args
        assert vars(copied) == vars(error)


def test_a_missing_extra_is_still_an_import_error_with_its_message():
    copied = pickle.loads(pickle.dumps(MissingExtra('docx is not installed; pip install "beam-chunking[parsers]"')))
    assert isinstance(copied, ImportError) and copied.msg == str(copied)
