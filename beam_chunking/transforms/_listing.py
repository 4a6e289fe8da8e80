"""What a local pattern matches that Beam's listing leaves out without a word.

Beam lists a local folder with ``os.walk``: it does not descend into links to folders, drops
a link whose target is missing or loops (its size cannot be read), and skips a folder it
cannot list. :func:`unlisted` finds exactly those entries, so that each becomes a ``failed``
row (see :mod:`beam_chunking.transforms._files`) instead of vanishing.
"""
from __future__ import annotations

import fnmatch
import os
import re
from typing import List

from apache_beam.io.filesystem import FileMetadata, FileSystem
from apache_beam.io.filesystems import FileSystems

from beam_chunking.transforms._files import is_glob, listing_base


def _may_descend(parts: List[str], folder: str) -> bool:
    """Whether a pattern (split on ``/``) could match a file somewhere under ``folder``."""
    names = folder.rstrip("/").split("/")
    for i, name in enumerate(names):
        if i < len(parts) and "**" in parts[i]:
            return True  # '**' crosses any number of folders
        if i >= len(parts) - 1:
            return False  # the pattern ends at this depth: nothing below can match
        if not fnmatch.fnmatchcase(name, parts[i]):
            return False
    return True


def unlisted(pattern: str) -> List[str]:
    """Paths under a local glob ``pattern`` that Beam's match leaves out: links that dangle
    or loop (when the pattern matches them), links to folders and folders that cannot be
    listed (when the pattern would match files inside them). In path order; empty for URIs
    and for patterns without a wildcard.

    Args:
        pattern: An absolute local pattern (as :class:`ReadDocuments` normalises it).
    """
    if FileSystems.get_scheme(pattern) is not None or not is_glob(pattern):
        return []
    matches = re.compile(FileSystem.translate_pattern(pattern)).match  # Beam's own reading of it
    parts = pattern.split("/")
    found: List[str] = []

    def unreadable(error: OSError) -> None:
        if error.filename and _may_descend(parts, error.filename):
            found.append(os.fsdecode(error.filename))

    for folder, folders, names in os.walk(listing_base(pattern), onerror=unreadable):
        for name in list(folders):
            path = os.path.join(folder, name)
            if os.path.islink(path):
                if _may_descend(parts, path):
                    found.append(path)
            elif not _may_descend(parts, path):
                folders.remove(name)  # nothing below can match: do not walk it
        found += [path for path in (os.path.join(folder, n) for n in names)
                  if matches(path) and os.path.islink(path) and not os.path.exists(path)]
    return sorted(found)


def unlisted_metadata(pattern: str) -> List[FileMetadata]:
    """:func:`unlisted` as file metadata (size 0), to flow with the matched files."""
    return [FileMetadata(path, 0) for path in unlisted(pattern)]
