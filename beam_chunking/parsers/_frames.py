"""The watchdog's wire format: pickles behind their length, over a pipe.

Each frame is an 8-byte big-endian length and that many bytes of a pickle; the parent
(:mod:`beam_chunking.parsers.watchdog`) and its child
(:mod:`beam_chunking.parsers._watchdog_child`) write requests and replies this way.
"""
from __future__ import annotations

import io
import os
import pickle
import struct
from typing import Any, Optional

_HEADER = struct.Struct("!Q")


def write_frame(fd: int, data: bytes) -> None:
    """Write ``data`` (a pickle, :func:`dumps`) to ``fd`` after its length in 8 bytes."""
    _write_all(fd, _HEADER.pack(len(data)))
    _write_all(fd, data)


def dumps(obj: Any) -> bytes:
    """``obj`` pickled for :func:`write_frame`."""
    return pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def read_frame(stream: io.RawIOBase) -> Any:
    """The next object written by :func:`write_frame` to ``stream``; ``None`` at end of file."""
    header = _read_exact(stream, _HEADER.size)
    if header is None:
        return None
    body = _read_exact(stream, _HEADER.unpack(header)[0])
    if body is None:
        return None
    return pickle.loads(body)


def _read_exact(stream: io.RawIOBase, size: int) -> Optional[bytearray]:
    buffer = bytearray(size)
    view, got = memoryview(buffer), 0
    while got < size:
        n = stream.readinto(view[got:])
        if not n:
            return None
        got += n
    return buffer
