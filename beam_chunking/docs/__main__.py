"""``python -m beam_chunking.docs [--check] [ROOT]``: refresh the generated blocks of the docs.

ROOT is the checkout (default: the one this package was imported from). ``--check`` rewrites
nothing and exits 1 when a block is stale.
"""
from __future__ import annotations

import sys

from beam_chunking.docs import COMMAND, checkout, refresh


def main(argv: list) -> int:
    check = "--check" in argv
    rest = [a for a in argv if a != "--check"]
    root = rest[0] if rest else checkout()
    stale = refresh(root, write=not check)
    for page, name in stale:
        print(f"{page}: {name} {'is stale' if check else 'refreshed'}")
    if check and stale:
        print(f"run {COMMAND} to refresh them", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
