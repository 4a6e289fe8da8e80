"""Checks on a matched input file made before it is opened, and the symbolic-link policy.

The policy, for local inputs: a symbolic link is followed only to a regular file inside an
input root (the folder before a pattern's first wildcard, its real path; a pattern without
wildcards is its own root, so naming a link follows it). Every link that is not followed,
and every folder that cannot be listed, is a ``failed`` row (stage ``read``,
:class:`~beam_chunking.errors.SkippedInput`) with one line saying why; nothing is skipped
without a row. A link to a folder is never followed (that is how loops are made); the files
of a folder inside the root are read where they lie.
"""
from __future__ import annotations

import errno
import os
import re
import stat
from typing import Iterable, Optional, Sequence, Tuple

from apache_beam.io.filesystem import BeamIOError
from apache_beam.io.filesystems import FileSystems

from beam_chunking.errors import MissingExtra, NotARegularFile, SkippedInput

_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a folder"))
_BEFORE_WILDCARD = re.compile(r"^[^[*?]*")


#: The extra that installs each object store's filesystem for Beam.
_STORE_EXTRAS = {"gs": "gcp"}


def require_filesystem(path: str) -> None:
    """Refuse a ``gs://`` path or pattern when the filesystem for it is not installed.

    Raises:
        MissingExtra: naming the path and the extra that brings the filesystem (Beam's own
            error names Beam's extras, not this package's).
    """
    scheme = FileSystems.get_scheme(path)
    extra = _STORE_EXTRAS.get(scheme) if scheme else None
    if extra is None:  # local, or a store whose errors Beam reports well enough
        return
    try:
        FileSystems.get_filesystem(path)
    except (ValueError, BeamIOError):  # "Unable to get filesystem from specified path"
        raise MissingExtra(f'{path}: {scheme}:// paths need the {extra} extra: pip install "beam-chunking[{extra}]"') \
            from None


def is_glob(pattern: str) -> bool:
    """Whether ``pattern`` has a wildcard (``*``, ``?`` or ``[``), as Beam's match reads it."""
    return _BEFORE_WILDCARD.match(pattern).group(0) != pattern


def listing_base(pattern: str) -> str:
    """The folder Beam lists to match a local ``pattern``: the one before its first wildcard."""
    prefix = _BEFORE_WILDCARD.match(pattern).group(0)
    return prefix if prefix.endswith("/") else os.path.dirname(prefix) or "/"


def input_roots(patterns: Iterable[str]) -> Tuple[str, ...]:
    """The real paths of the local patterns' roots (see the module docstring); URIs have none.

    Args:
        patterns: Absolute local patterns or URIs (as :class:`ReadDocuments` normalises them).
    """
    roots = [os.path.realpath(listing_base(p) if is_glob(p) else p)
             for p in patterns if FileSystems.get_scheme(p) is None]
    return tuple(dict.fromkeys(roots))


def inside(real: str, roots: Sequence[str]) -> bool:
    """Whether the real path ``real`` is one of ``roots`` (real paths) or lies below one."""
    return any(real == root or real.startswith(root.rstrip("/") + "/") for root in roots)


def _link_problem(path: str, roots: Sequence[str]) -> Optional[str]:
    """Why the symbolic link at ``path`` is not followed, or ``None`` when it is."""
    target = os.readlink(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return f"dangling symbolic link (to {target}, which does not exist); not followed"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return f"symbolic link loop (to {target}); not followed"
        raise
    real = os.path.realpath(path)
    if roots and not inside(real, roots):
        return (f"symbolic link points outside the input root (to {real}); not followed: give a pattern "
                "whose folder holds the target too, or the file itself")
    if stat.S_ISDIR(mode):
        return f"symbolic link to a folder (to {real}); folders are not followed through links"
    return None


def check_regular_file(path: str, uri: Optional[str] = None, roots: Sequence[str] = ()) -> None:
    """Refuse a local ``path`` that is not a regular file, without opening it.

    Opening a FIFO blocks until a writer appears (forever, in a batch job), and a device or
    socket has no size worth reading; a glob such as ``in/*.txt`` matches them all the same.
    A symbolic link is followed only as the module docstring says, so a link to a FIFO is
    refused too. Paths with a scheme (``gs://``) name objects, which are always regular, and
    are not checked.

    Args:
        path: The path as matched (possibly with surrogate-escaped bytes).
        uri: How to name the file in the message; default ``path``.
        roots: Real paths of the input roots (:func:`input_roots`); default none (a link
            may point anywhere).

    Raises:
        SkippedInput: a link that is not followed, or a folder that cannot be listed.
        NotARegularFile: naming the file and what it is.
        OSError: the file vanished or cannot be inspected (the document fails at ``read``).
    """
    if FileSystems.get_scheme(path) is not None:
        return
    uri = uri or path
    mode = os.lstat(path).st_mode  # one call decides the common case, a regular file
    if stat.S_ISREG(mode):
        return
    if stat.S_ISLNK(mode):
        problem = _link_problem(path, roots)
        if problem:
            raise SkippedInput(problem, uri=uri)
        mode = os.stat(path).st_mode
        if stat.S_ISREG(mode):
            return
    if stat.S_ISDIR(mode) and not os.access(path, os.R_OK | os.X_OK):
        raise SkippedInput("folder cannot be listed (permission denied); the files in it were not read", uri=uri)
    kind = next((name for test, name in _KINDS if test(mode)), f"mode {stat.filemode(mode)}")
    raise NotARegularFile(f"not a regular file ({kind}); it was not opened", uri=uri)
