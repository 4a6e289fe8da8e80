"""Reading JSON out of a model's answer, tolerantly: fences, prose around it, wrappers."""
from __future__ import annotations

import json
import re
from typing import Any, List, Optional, Sequence

_FENCE = re.compile(r"^\s*```[\w-]*\s*\n?(.*?)\n?```\s*$", re.S)


def parse_json(text: str) -> Any:
    """The JSON value in ``text``: the whole answer, a fenced block, or the first object or
    array found in surrounding prose.

    Raises:
        ValueError: no JSON value could be read.
    """
    text = text.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    try:
        return json.loads(text)
    except ValueError:
        pass
    decoder = json.JSONDecoder()
    for k, ch in enumerate(text):
        if ch in "[{":
            try:
                return decoder.raw_decode(text, k)[0]
            except ValueError:
                continue
    raise ValueError("the answer holds no JSON value")


def string_items(value: Any, keys: Sequence[str] = (), text_keys: Sequence[str] = ("text",)) -> Optional[List[str]]:
    """The strings of a JSON array, found directly or under one of ``keys`` of an object.

    Items that are objects contribute their first string under ``text_keys``; other items
    are skipped. Returns ``None`` when no array is found.
    """
    if isinstance(value, dict):
        for key in keys:
            if isinstance(value.get(key), list):
                value = value[key]
                break
        else:
            arrays = [v for v in value.values() if isinstance(v, list)]
            if len(arrays) != 1:
                return None
            value = arrays[0]
    if not isinstance(value, list):
        return None
    out: List[str] = []
    for item in value:
        if isinstance(item, dict):
            item = next((item[k] for k in text_keys if isinstance(item.get(k), str)), None)
        if isinstance(item, str) and item.strip():
            out.append(" ".join(item.split()))
    return out
