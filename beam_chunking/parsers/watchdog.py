"""A hard time bound for the parsers whose library calls cannot be interrupted.

The cooperative budget (:func:`~beam_chunking.parsers.limits.check_time`) stops a parse
between pages, paragraphs and rows, but not inside one library call, and some of those
grow with the file. Measured on one core: python-docx reads a table in one call (3,000
rows of 20 cells, a 0.33 MB file: 1.7 s) and joins the runs of a paragraph in one call
(200,000 runs, 1 MB: 2.2 s); PDFium lays out a page in one call (a 0.18 MB PDF whose one
page shows 400,000 lines: 7.9 s, faster than linear in the lines); openpyxl reads every
shared string before the first row; extract-msg reads all of a message's streams. So the
documents of :data:`ISOLATED_TYPES` are parsed in a child process, and the parent kills the
child once the document's budget (``limits.max_parse_seconds``, started when the child takes
the document) plus :data:`GRACE_SECONDS` has passed. That costs under 1 ms a document,
more for thousands of sections (a 2,000-row sheet: 6 ms, 9%), and 0.2 s to start the child
(``bench/README.md``, "The watchdog's cost").

Not isolated, because a cap already bounds their one-call costs: HTML (Lexbor builds the
tree in one call, about 0.1 s per MB at the deepest nesting ``max_html_depth`` lets
through, so 25 s for a page at the default ``max_bytes`` of 256 MiB, inside the default
budget; the walk over the tree checks the budget) and the text formats (text, Markdown,
CSV/TSV, code, transcripts: our own loops, which check it, over a decode linear in the
bytes). Isolating HTML would add about 5% to every web page's parse.

How the child lives:

- one per worker process, or one per thread that parses such a document at the same time
  (a worker running several bundles in threads); started at the first document that needs
  one, reused by the next, and started again after it was killed or died. It holds about
  40 MiB, and 90 MiB once it has loaded every parser library;
- a fresh interpreter (``sys.executable -c``), never a fork: a Beam SDK worker holds gRPC
  threads, and its ``__main__`` is Beam's, so nothing of the parent but ``sys.path`` (sent
  with every document, for editable installs and staged packages) is carried over;
- documents and results travel as length-prefixed pickles over its stdin and stdout (what a
  library prints goes to stderr); the parse runs there exactly as in-process
  (:func:`~beam_chunking.parsers.dispatch.parse_in_process`, same limits, keep, decode
  errors and budget), and its exceptions (same types, messages and attributes), log records
  and warnings come back and are raised, logged and warned here;
- it exits when its stdin closes (this process exited or was killed, even in the middle of
  a parse), and this process kills it at exit: no orphans.

A child that dies by itself (a crash in a library, an OOM kill) fails only the document it
held, with a :class:`~beam_chunking.errors.ParseError` naming the exit status. Not on
Windows (pipes cannot be waited on with a timeout there): the parse runs in-process.
"""
from __future__ import annotations

import atexit
import json
import logging
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
import warnings
from typing import FrozenSet, List, Optional, Set

from beam_chunking.errors import ChunkingError, LimitExceeded, ParseError
from beam_chunking.parsers._frames import dumps, read_frame, write_frame
from beam_chunking.parsers.detect import EMAIL, EPUB, ODP, ODS, ODT, RTF
from beam_chunking.parsers.dispatch import parse_in_process
from beam_chunking.parsers.image import IMAGE_TYPES
from beam_chunking.parsers.limits import ParseLimits, budget_window, exceeded, parse_budget
from beam_chunking.parsers.sniff import MBOX, OUTLOOK
from beam_chunking.types import Document, ParsedDocument

#: The content types parsed in the child: DOCX, PPTX, XLSX, PDF, Outlook ``.msg`` and
#: ``.eml`` (an e-mail's attachments are parsed inside it, and may be any of the others), and
#: images (OCR reads a page in one call of several seconds, longer for a large scan).
ISOLATED_TYPES = frozenset({
    *IMAGE_TYPES,
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "application/pdf",
    # One library call each that the time budget cannot interrupt: lxml reading an
    # OpenDocument's content.xml, striprtf reading a whole RTF file (about 0.7 MB/s).
    EPUB,
    ODT,
    ODS,
    ODP,
    RTF,
    OUTLOOK,
    EMAIL,
    MBOX,
})

#: Seconds past ``max_parse_seconds`` before the child is killed: time for the cooperative
#: check, which names where the parse stopped and keeps the child, to answer first.
GRACE_SECONDS = 0.5

#: Seconds a new child may take to import its modules before it is given up.
START_SECONDS = 60.0

# Windows pipes cannot be waited on with a timeout; an embedded interpreter may have no executable.
_SUPPORTED = sys.platform != "win32" and bool(sys.executable)

# Run by the child's interpreter: keep the protocol's pipes to itself before anything is
# imported (a module that prints must not corrupt a frame), then serve.
_BOOT = """\
import json, os, sys
requests, replies = os.dup(0), os.dup(1)
os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
os.dup2(2, 1)
sys.path[:] = json.loads(sys.argv[1])
from beam_chunking.parsers._watchdog_child import serve
serve(requests, replies)
"""


def isolates(content_type: str) -> bool:
    """Whether a document of ``content_type`` is parsed in the child (when the limits' ``watchdog`` is on)."""
    return content_type in ISOLATED_TYPES and _SUPPORTED


class _Gone(Exception):
    """The child exited; ``status`` says how, ``before`` whether it had the document yet."""

    def __init__(self, status: str, before: bool = False):
        super().__init__(status)
        self.status = status
        self.before = before


class ChildTraceback(Exception):
    """The traceback, in the child, of an exception that is not a beam-chunking error
    (a bug in a parser or a library): the ``__cause__`` of the exception raised here."""


class _Child:
    """One child process and its two pipes."""

    def __init__(self) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", _BOOT, json.dumps(sys.path)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        self.pid = self.process.pid
        self.closed = False
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.process.stdout, selectors.EVENT_READ)
        try:
            ready = self.receive(time.monotonic() + START_SECONDS)
        except _Gone:
            self.stop()
            raise
        if ready is None:
            self.stop()
            raise _Gone(f"no answer within {START_SECONDS:g} s of its start", before=True)

    def alive(self) -> bool:
        return self.process.poll() is None

    def send(self, payload: bytes) -> None:
        """Send a pickled request (:func:`dumps`)."""
        try:
            write_frame(self.process.stdin.fileno(), payload)
        except (BrokenPipeError, ValueError):
            raise _Gone(self._status(), before=True) from None

    def receive(self, deadline: float) -> Optional[tuple]:
        """The child's reply, or ``None`` once ``deadline`` (``time.monotonic``) has passed."""
        # An hour at most per wait: epoll takes its timeout in int milliseconds.
        while not self.selector.select(min(3600.0, max(0.0, deadline - time.monotonic()))):
            if time.monotonic() >= deadline:
                return None
        # The child writes a reply only once it is complete, so the rest follows at once.
        reply = read_frame(self.process.stdout)
        if reply is None:
            raise _Gone(self._status())
        return reply

    def _status(self) -> str:
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.stop()
            return "closed its pipe"
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = "an unknown signal"
            return f"killed by signal {-code}, {name}"
        return f"exited with status {code}"

    def stop(self) -> None:
        """Kill the child (if it still runs), reap it and close its pipes."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.abandon()

    def abandon(self) -> None:
        """Close this process's ends of the pipes and leave the child alone (after a fork,
        the child belongs to the parent of the fork)."""
        if self.closed:
            return
        self.closed = True
        self.selector.close()
        self.process.stdin.close()
        self.process.stdout.close()


class _Pool:
    """This process's children: idle ones wait for the next document."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: List[_Child] = []
        self._all: Set[_Child] = set()

    def acquire(self) -> _Child:
        with self._lock:
            while self._idle:
                child = self._idle.pop()
                if child.alive():
                    return child
                self._all.discard(child)  # died while idle: not a document's doing
                child.stop()
        child = _Child()
        with self._lock:
            self._all.add(child)
        return child

    def release(self, child: _Child, healthy: bool) -> None:
        with self._lock:
            if healthy and child in self._all:
                self._idle.append(child)
                return
            self._all.discard(child)
        child.stop()

    def stop_all(self) -> None:
        with self._lock:
            children, self._all, self._idle = list(self._all), set(), []
        for child in children:
            child.stop()

    def forget(self) -> None:
        """In the child of a fork: the children are the parent's; close the pipes and start over."""
        for child in self._all:
            child.abandon()
            # Kept so that Popen's finaliser never warns about, or reaps, a process not ours.
            _ABANDONED.append(child.process)
        self.__init__()

    def pids(self) -> List[int]:
        with self._lock:
            return sorted(child.pid for child in self._all)


_ABANDONED: List[subprocess.Popen] = []
_POOL = _Pool()
atexit.register(_POOL.stop_all)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_POOL.forget)


def child_pids() -> List[int]:
    """The process ids of this process's children, busy and idle."""
    return _POOL.pids()


def start_child() -> int:
    """Start a child now, ahead of the first document (it waits idle); return its process id.

    Raises:
        OSError: the interpreter could not be started.
        RuntimeError: it started but did not get ready (its error is on stderr).
    """
    try:
        child = _POOL.acquire()
    except _Gone as gone:
        raise RuntimeError(f"the watchdog's child did not start: {gone.status}") from None
    _POOL.release(child, healthy=True)
    return child.pid


def shutdown() -> None:
    """Kill this process's children now (done at exit); the next document starts a new one."""
    _POOL.stop_all()


def parse_isolated(document: Document, *, decode_errors: str, limits: ParseLimits,
                   keep: FrozenSet[str], ocr: str = "auto") -> ParsedDocument:
    """Parse ``document`` in a child process, killed past its time budget.

    Called by :func:`beam_chunking.parsers.parse` for :data:`ISOLATED_TYPES` when
    ``limits.watchdog`` is on; the arguments are :func:`~beam_chunking.parsers.parse`'s.
    The budget starts once a child holds the document (a child's start, about 0.2 s, is
    not the document's), and the child is killed at ``limits.max_parse_seconds`` plus
    :data:`GRACE_SECONDS`. A document that pickle refuses (metadata holding a lock, say)
    is parsed in-process instead, under the cooperative budget only.

    Raises:
        LimitExceeded: the child was killed at the deadline (``limit="max_parse_seconds"``;
            the message names the document and the seconds it ran), or the cooperative
            budget stopped the parse in the child.
        ParseError: the child died by itself, or could not be started (the message names
            the document and the exit status or signal).
        Exception: whatever the parse raised in the child, with its type, message and
            attributes.
    """
    for attempt in (1, 2):
        try:
            child = _POOL.acquire()
        except (_Gone, OSError) as exc:
            status = exc.status if isinstance(exc, _Gone) else f"{type(exc).__name__}: {exc}"
            raise ParseError(f"the watchdog could not start a parser process ({status}; its error is on stderr); "
                             "limits.watchdog: false parses in-process", document_id=document.id,
                             uri=document.uri) from None
        healthy = False
        try:
            with parse_budget(limits):
                window = budget_window()
                try:
                    payload = dumps((document, decode_errors, limits, keep, ocr, window, list(sys.path),
                                     logging.getLogger().getEffectiveLevel()))
                except Exception:  # metadata that pickle refuses: parse here, cooperatively
                    healthy = True
                    return parse_in_process(document, decode_errors=decode_errors, limits=limits, keep=keep,
                                            ocr=ocr)
                try:
                    child.send(payload)
                    del payload  # the child has its copy: do not hold a second one while it parses
                    reply = child.receive(window[1] + GRACE_SECONDS)
                except _Gone as gone:
                    if gone.before and attempt == 1:
                        continue  # it died before it had the document: try a new one
                    raise ParseError(f"the parser's process died while parsing it ({gone.status}: a crash in "
                                     "the parser library, the memory limit or a kill from outside); the next "
                                     "document gets a new process", document_id=document.id,
                                     uri=document.uri) from None
                if reply is None:
                    spent = time.monotonic() - window[0]
                    error = exceeded(limits, "max_parse_seconds",
                                     f"parsing was stopped after {spent:.1f} s (the watchdog killed the parser's "
                                     "process inside one library call)")
                    raise LimitExceeded(str(error), limit=error.limit, document_id=document.id,
                                        uri=document.uri) from None
                healthy = True
        finally:
            _POOL.release(child, healthy)
        return _unpack(reply)
    raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises


def _unpack(reply: tuple) -> ParsedDocument:
    """Log and warn what the child did, then return its result or raise its exception."""
    kind, value, records, caught, trace = reply
    for record in records:
        logger = logging.getLogger(record.name)
        if logger.isEnabledFor(record.levelno):
            logger.handle(record)
    for message, category, filename, lineno in caught:
        warnings.warn_explicit(message, category, filename, lineno, registry=_WARNED)
    if kind == "ok":
        return value
    if not isinstance(value, ChunkingError) and trace:
        raise value from ChildTraceback(trace)
    raise value


# Where warnings re-issued from the child are remembered, so the "default" action shows
# each once, as it would have in-process.
_WARNED: dict = {}
