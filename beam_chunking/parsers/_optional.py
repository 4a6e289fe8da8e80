"""Lazy imports of the parser libraries, with an error that names the extra to install."""
from __future__ import annotations

import importlib
from types import ModuleType

from beam_chunking.errors import MissingExtra


def require(module: str, package: str, extra: str = "parsers") -> ModuleType:
    """Import ``module`` or raise :class:`MissingExtra` naming ``package`` and the extra."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtra(
            f"{package} is not installed; install it with: pip install \"beam-chunking[{extra}]\""
        ) from None
