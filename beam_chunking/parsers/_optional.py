"""Lazy imports of the parser libraries, with an error that names the extra to install."""
from __future__ import annotations

from types import ModuleType

from beam_chunking.errors import require_extra


def require(module: str, package: str, extra: str = "parsers") -> ModuleType:
    """Import ``module`` or raise :class:`~beam_chunking.errors.MissingExtra` naming ``package``
    and the extra (default ``parsers``)."""
    return require_extra(module, package, extra)
