"""ParseLimits: validation and construction from a spec mapping."""
from __future__ import annotations

import pytest

from beam_chunking.errors import ConfigError
from beam_chunking.parsers.limits import ParseLimits


def test_defaults_and_mapping():
    assert ParseLimits.from_mapping(None) == ParseLimits()
    assert ParseLimits.from_mapping({"max_pages": 10}).max_pages == 10


@pytest.mark.parametrize("bad", [{"max_pages": 0}, {"max_rows": -1}, {"max_pages": True}, {"max_rows": "9"}])
def test_invalid_values_name_the_field(bad):
    with pytest.raises(ConfigError) as info:
        ParseLimits.from_mapping(bad)
    assert info.value.field == next(iter(bad))


def test_unknown_limit_is_named():
    with pytest.raises(ConfigError, match="unknown limit 'max_pagez'"):
        ParseLimits.from_mapping({"max_pagez": 3})
