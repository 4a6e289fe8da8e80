"""The generated parts of the documentation: tables rendered from the code they describe.

Pages under ``docs/`` (and ``README.md``) hold marked blocks::

    <!-- generated: columns chunks -->

    | column | type | ... |

    <!-- /generated -->

``python -m beam_chunking.docs`` rewrites every block from the code (the registry, the
schemas, the CLI's option declarations ...; :mod:`beam_chunking.docs.blocks` lists the
kinds); ``--check`` only lists the stale ones. A test fails while any block is stale.
"""
from __future__ import annotations

import os
import re
from typing import List, Tuple

from beam_chunking.docs.blocks import render

#: A generated block: its name, then its content between blank lines.
BLOCK = re.compile(r"(<!-- generated: (?P<name>[^>]*?) -->\n\n)(?P<body>.*?)(\n\n<!-- /generated -->)", re.S)
#: The command that refreshes the blocks, as messages name it.
COMMAND = "python -m beam_chunking.docs"


def checkout() -> str:
    """The checkout this package was imported from (the folder holding ``docs/``)."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def pages(root: str) -> List[str]:
    """``README.md`` and every Markdown page under ``docs/``, as paths relative to ``root``."""
    found = ["README.md"]
    for folder, dirs, files in os.walk(os.path.join(root, "docs")):
        dirs.sort()
        found += sorted(os.path.relpath(os.path.join(folder, f), root) for f in files if f.endswith(".md"))
    return found


def blocks(text: str) -> List[str]:
    """The names of the generated blocks in ``text``, in order."""
    return [m.group("name") for m in BLOCK.finditer(text)]


def refreshed(text: str) -> str:
    """``text`` with every generated block rendered again."""
    return BLOCK.sub(lambda m: m.group(1) + render(m.group("name")) + m.group(4), text)


def refresh(root: str, write: bool = True) -> List[Tuple[str, str]]:
    """Render every block of the pages under ``root`` again.

    Args:
        root: The checkout.
        write: Rewrite the pages whose blocks changed; ``False`` only reports them.

    Returns:
        ``(page, block name)`` of every block that was stale.
    """
    stale = []
    for page in pages(root):
        path = os.path.join(root, page)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        new = refreshed(text)
        if new == text:
            continue
        old_bodies = {m.group("name"): m.group("body") for m in BLOCK.finditer(text)}
        stale += [(page, m.group("name")) for m in BLOCK.finditer(new) if old_bodies[m.group("name")] != m.group("body")]
        if write:
            with open(path, "w", encoding="utf-8") as f:
                f.write(new)
    return stale
