"""Text from the data made safe for one line of a report: :func:`escape_text`."""
from __future__ import annotations

import unicodedata
from typing import List, Optional


def escape_text(text: str, width: Optional[int] = None) -> str:
    """One printable line: backslash, newline, tab and control/format characters escaped.

    Args:
        text: Any text from the data (chunk text, URIs, error messages).
        width: Longest result in characters, ending in ``…`` when cut; default unlimited.
    """
    out: List[str] = []
    length = 0
    for ch in text:
        if ch in "\\\n\r\t":
            piece = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}[ch]
        elif unicodedata.category(ch)[0] == "C" or ch in "\u2028\u2029":
            piece = f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}"
        else:
            piece = ch
        if width is not None and length + len(piece) > width - 1:
            return "".join(out) + "…"
        out.append(piece)
        length += len(piece)
    return "".join(out)


__all__ = ["escape_text"]
