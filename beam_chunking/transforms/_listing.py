"""Listing a local pattern: what Beam's match finds, and what it leaves out without a word.

Beam lists a local folder with ``os.walk``: it does not descend into links to folders, drops
a link whose target is missing or loops (its size cannot be read), and skips a folder it
cannot list. :func:`list_local` finds the same files as Beam's match, and exactly those
entries besides, so that each becomes a ``failed`` row (see
:mod:`beam_chunking.transforms._files`) instead of vanishing.
"""
from __future__ import annotations

import fnmatch
import os
import re
import stat
from typing import List, Tuple

from apache_beam.io.filesystem import BeamIOError, FileMetadata, FileSystem

from beam_chunking.transforms._files import inside, listing_base


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


#: Entries looked at, at most, inside the links to folders of one listing, for a file the
#: pattern would take through a link; past that, each link left is reported as if it held one
#: (as every link to a folder was before they were looked into).
LINKED_FOLDER_SCAN = 20_000


class _LinkedFolders:
    """Whether a link to a folder hides files from one listing (of ``base``, whose pattern
    ``matches``): the folder it points to holds a file the pattern would take through the
    link and the walk does not list under its own path (a link to a sibling folder that the
    pattern reads anyway hides nothing). Links inside are not followed. Assumed when a folder
    in it cannot be listed, or once the listing's links have had :data:`LINKED_FOLDER_SCAN`
    entries looked at."""

    def __init__(self, base: str, matches):
        self.base, self.matches = base.rstrip("/"), matches
        self.real_base = os.path.realpath(base).rstrip("/")  # "" for "/"
        self.budget = LINKED_FOLDER_SCAN

    def hide(self, link: str) -> bool:
        """Whether ``link`` hides files (see the class)."""
        reads_target = inside(os.path.realpath(link), [self.real_base or "/"])
        unreadable: List[OSError] = []
        for folder, folders, names in os.walk(link, onerror=unreadable.append):
            self.budget -= len(folders) + len(names)
            # The walk of base names this folder's files by their real path, below base.
            own = self.base + os.path.realpath(folder)[len(self.real_base):]
            if any(self.matches(os.path.join(folder, name))
                   and not (reads_target and self.matches(os.path.join(own, name))) for name in names):
                return True
            if self.budget < 0:
                return True
        return bool(unreadable)


def list_local(pattern: str) -> Tuple[List[FileMetadata], List[str]]:
    """One walk of a local glob ``pattern``: ``(listed, unlisted)``.

    ``listed`` is what Beam's match returns for it: every file the pattern matches, with its
    size and modification time, in the walk's order (Beam's ``os.walk`` order). ``unlisted``
    is what that match leaves out without a word, in path order: links that dangle or loop
    (when the pattern matches them), links to folders that hold files the pattern would
    match through the link and that the walk does not list under their own path
    (``docs/**/*.pdf`` reports no link to a folder without PDFs, nor one to a folder of
    ``docs`` that the walk reads anyway), and
    folders that cannot be listed (when the pattern could match files inside them). Both
    come from one walk that reads only folders the pattern can reach (and, for a link to a
    folder the pattern can reach, the folder it points to, until a match is found) and
    stats only the names it matches, once each; Beam's walks everything under the base and
    stats each file twice (17.5 against about 5 ms on the 2,008 files of
    bench/incremental.py, as measured in bench/README.md).

    Args:
        pattern: An absolute local pattern with a wildcard (as :class:`ReadDocuments`
            normalises it; see :func:`is_glob`).
    """
    if pattern.endswith("/"):
        pattern += "*"  # as Beam's match reads it: every file in the folders matched
    try:
        matches = re.compile(FileSystem.translate_pattern(pattern)).match  # Beam's own reading of it
    except re.error as exc:
        raise BeamIOError("Match operation failed", {pattern: exc}) from None
    parts = pattern.split("/")
    listed: List[FileMetadata] = []
    found: List[str] = []

    def unreadable(error: OSError) -> None:
        # A folder that vanished mid-walk (or became a file) is gone, as a vanished file
        # is; only one that stays and cannot be read hides files.
        if isinstance(error, (FileNotFoundError, NotADirectoryError)) or not error.filename:
            return
        folder = os.fsdecode(error.filename).rstrip("/") or "/"
        if _may_descend(parts, folder):
            found.append(folder)

    base = listing_base(pattern)
    linked = _LinkedFolders(base, matches)
    # Beam reads '?' and '[...]' as able to match '/', so the folder-by-folder test of what
    # a pattern can reach holds only without them; with them every folder is walked.
    prune = not any(c in pattern[len(base):] for c in "?[")
    try:
        if not stat.S_ISDIR(os.stat(base).st_mode):
            return [], []
    except (FileNotFoundError, NotADirectoryError):
        return [], []
    except OSError as error:  # the base itself cannot be reached
        unreadable(error)
        return [], found
    for folder, folders, names in os.walk(base, onerror=unreadable):
        for name in list(folders):
            path = os.path.join(folder, name)
            if os.path.islink(path):
                if _may_descend(parts, path) and linked.hide(path):
                    found.append(path)
            elif prune and not _may_descend(parts, path):
                folders.remove(name)  # nothing below can match: do not walk it
        for name in names:
            path = os.path.join(folder, name)
            if not matches(path):
                continue
            try:
                info = os.stat(path)
            except OSError:  # dangling or looping link, or gone since the folder was read
                if os.path.islink(path) and not os.path.exists(path):
                    found.append(path)
                continue
            listed.append(FileMetadata(path, info.st_size, info.st_mtime))
    return listed, sorted(found)

