"""Checks on a matched input file made before it is opened."""
from __future__ import annotations

import os
import stat
from typing import Optional

from apache_beam.io.filesystems import FileSystems

from beam_chunking.errors import NotARegularFile

_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a folder"))


def check_regular_file(path: str, uri: Optional[str] = None) -> None:
    """Refuse a local ``path`` that is not a regular file, without opening it.

    Opening a FIFO blocks until a writer appears (forever, in a batch job), and a device or
    socket has no size worth reading; a glob such as ``in/*.txt`` matches them all the same.
    Symbolic links are followed (``os.stat``), so a link to a FIFO is refused too. Paths with
    a scheme (``gs://``) name objects, which are always regular, and are not checked.

    Args:
        path: The path as matched (possibly with surrogate-escaped bytes).
        uri: How to name the file in the message; default ``path``.

    Raises:
        NotARegularFile: naming the file and what it is.
        OSError: the file vanished or cannot be inspected (the document fails at ``read``).
    """
    if FileSystems.get_scheme(path) is not None:
        return
    mode = os.stat(path).st_mode
    if stat.S_ISREG(mode):
        return
    kind = next((name for test, name in _KINDS if test(mode)), f"mode {stat.filemode(mode)}")
    raise NotARegularFile(f"not a regular file ({kind}); it was not opened", uri=uri or path)
