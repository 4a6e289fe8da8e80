"""A Griffe extension for the API reference (mkdocs.yml loads it; no page is made of it).

The package's docstrings are Google style with an ``Example:`` section, which Griffe reads as
an admonition of Markdown text, not as doctest code; and they name other objects with Sphinx
roles (``:class:`~beam_chunking.types.Chunk```). Before a docstring is parsed, this reads
``Example:`` as ``Examples:`` and shows a role as the object's name in code.
"""
from __future__ import annotations

import re

import griffe

_EXAMPLE = re.compile(r"^(\s*)Example:\s*$", re.M)
_ROLE = re.compile(r":(?:class|func|meth|attr|data|mod|exc|obj):`(~?)([^`]+)`")


def _name(match: re.Match) -> str:
    return f"`{match.group(2).rsplit('.', 1)[-1] if match.group(1) else match.group(2)}`"


class ExampleSections(griffe.Extension):
    """Rewrites each docstring as it is loaded (see the module docstring)."""

    def on_object(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _ROLE.sub(_name, _EXAMPLE.sub(r"\1Examples:", obj.docstring.value))
