"""The watchdog's child process: parse the documents its parent sends, one at a time.

Started by :mod:`beam_chunking.parsers.watchdog` (never imported by the parent). Each request
is ``(document, decode_errors, limits, keep, ocr, window, sys.path, root log level)``; each reply is
``(kind, value, log records, warnings, traceback)`` with ``kind`` ``"ok"`` (``value`` the
:class:`~beam_chunking.types.ParsedDocument`) or ``"error"`` (``value`` the exception).
"""
from __future__ import annotations

import copy
import io
import logging
import os
import select
import signal
import sys
import threading
import traceback
import warnings
from typing import List

from beam_chunking.errors import ParseError
from beam_chunking.parsers._frames import dumps, read_frame, write_frame
from beam_chunking.parsers.dispatch import parse_in_process
from beam_chunking.parsers.limits import parse_budget


class _Records(logging.Handler):
    """Keeps the log records of one request, ready to pickle (message formatted, no args)."""

    def __init__(self) -> None:
        super().__init__()
        self.records: List[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        record = copy.copy(record)
        record.msg = record.getMessage()
        record.args = None
        if record.exc_info:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
            record.exc_info = None
        self.records.append(record)


def _exit_with_parent(requests: int) -> None:
    """Exit as soon as the parent's end of the request pipe closes, even in mid-parse."""
    if not hasattr(select, "poll"):
        return
    poller = select.poll()
    poller.register(requests, select.POLLHUP)  # not POLLIN: a request must not wake it

    def watch() -> None:
        while True:
            for _, event in poller.poll():
                if event & (select.POLLHUP | select.POLLERR | select.POLLNVAL):
                    os._exit(0)

    threading.Thread(target=watch, name="watchdog-parent", daemon=True).start()


def _answer(request: tuple, records: _Records) -> tuple:
    document, decode_errors, limits, keep, ocr, window, path, level = request
    if path != sys.path:
        sys.path[:] = path
    logging.getLogger().setLevel(level)
    records.records = []
    trace = ""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # the parent's filters decide what is shown
        try:
            with parse_budget(limits, window):
                kind, value = "ok", parse_in_process(document, decode_errors=decode_errors, limits=limits,
                                                     keep=keep, ocr=ocr)
        except Exception as exc:
            kind, value, trace = "error", exc, traceback.format_exc()
    shown = [(str(w.message), w.category, w.filename, w.lineno) for w in caught]
    return kind, value, records.records, shown, trace


def _encode(reply: tuple, document) -> bytes:
    """``reply`` pickled, or the nearest version of it that pickles."""
    kind, value, records, shown, trace = reply
    try:
        return dumps(reply)
    except Exception as exc:
        problem = f"{type(exc).__name__}: {exc}"
    shown = [(message, UserWarning, filename, lineno) for message, _, filename, lineno in shown]
    records = []
    if kind == "error":
        value = ParseError(f"{type(value).__name__}: {value} (raised in the parser's process, which could not "
                           f"send it back: {problem})", document_id=document.id, uri=document.uri)
    else:
        kind, value = "error", ParseError(f"the parser's process could not send its result back ({problem})",
                                          document_id=document.id, uri=document.uri)
    return dumps((kind, value, records, shown, trace))


def serve(requests: int, replies: int) -> None:
    """Answer requests from file descriptor ``requests`` on ``replies`` until end of file."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    _exit_with_parent(requests)
    records = _Records()
    root = logging.getLogger()
    root.addHandler(records)
    stream = io.FileIO(requests, "rb", closefd=False)
    write_frame(replies, dumps(("ready", os.getpid())))
    while True:
        request = read_frame(stream)
        if request is None:
            return
        write_frame(replies, _encode(_answer(request, records), request[0]))
