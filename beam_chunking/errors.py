"""Exceptions raised by beam-chunking.

Every error that concerns one document says which document and what to do about it. In a
pipeline these errors never crash the job: the document becomes a ``failed`` row of the
documents table with the stage, the error type and this message.
"""
from __future__ import annotations

import types
from typing import Optional


class ChunkingError(Exception):
    """Base class of all beam-chunking errors.

    Args:
        message: What went wrong and what to do about it.
        document_id: The document concerned, when there is one.
        uri: The document's URI, when known.
    """

    def __init__(self, message: str, *, document_id: Optional[str] = None, uri: Optional[str] = None):
        self.document_id = document_id
        self.uri = uri
        where = uri or document_id
        super().__init__(f"{where}: {message}" if where else message)

    def __reduce__(self):
        # Exception pickles as ``cls(*args)``: that would name the document twice and drop
        # keyword-only fields (``LimitExceeded`` cannot even be rebuilt). Rebuild it without
        # ``__init__`` instead, from its message and attributes, so an error raised in the
        # parser's child process (:mod:`beam_chunking.parsers.watchdog`) comes back whole.
        return _rebuild, (type(self), self.args, self.__dict__)


class ConfigError(ChunkingError, ValueError):
    """An option or spec value is invalid; the message names the field and the value.

    Args:
        message: What is wrong and what to do.
        field: The option at fault (``"overlap"``), so a spec can report its key path.
    """

    def __init__(self, message: str, *, field: Optional[str] = None, **kwargs):
        self.field = field
        super().__init__(message, **kwargs)


class ParseError(ChunkingError):
    """A document's bytes could not be turned into text and sections."""


class LimitExceeded(ParseError):
    """A document exceeds one of the :class:`~beam_chunking.parsers.limits.ParseLimits` caps.

    The message names the cap as ``limits.<name>=<value>``, the spec key that raises it.

    Args:
        message: What exceeded the cap, naming it.
        limit: The cap's field name (``"max_page_chars"``).
    """

    def __init__(self, message: str, *, limit: str, **kwargs):
        self.limit = limit
        super().__init__(message, **kwargs)


class TextTooDense(ChunkingError):
    """A text holds a run of one character class too long to tokenize in bounded memory
    (:mod:`beam_chunking.text.pieces`)."""


class DecodeError(ParseError):
    """The bytes are not valid in the detected text encoding (message names the byte offset)."""


class UnsupportedContentType(ChunkingError):
    """No parser (or no routed strategy) handles the document's content type."""


class TokenizerUnavailable(ChunkingError):
    """A tokenizer cannot be loaded offline; the message says how to provide it."""


class MissingExtra(ChunkingError, ImportError):
    """An optional dependency is missing; the message names the extra to install."""


class OutputExistsError(ChunkingError):
    """The output folder already holds files and ``overwrite`` was not requested."""


class OutputLeasedError(ChunkingError):
    """Another run holds the output folder's lease (``OUTPUT/_lease.json``), or this run
    lost it before its commit; the message names the other run."""


class NotARegularFile(ChunkingError):
    """A matched input is a FIFO, socket, device or folder: it is never opened (reading a
    FIFO would wait forever for a writer)."""


class SkippedInput(ChunkingError):
    """A matched input that is not read: a symbolic link that points outside the input roots,
    dangles, loops or leads to a folder, or a folder that cannot be listed."""


class LLMError(ChunkingError):
    """A chat-model request failed after its retries, or was refused (a 4xx other than 429)."""


class EmbeddingError(ChunkingError):
    """A hosted embedding request failed after its retries, was refused (a 4xx other than
    429), or was answered with vectors that do not fit (a wrong count or dimension)."""


def _rebuild(cls: type, args: tuple, state: dict) -> ChunkingError:
    """The error of class ``cls`` with ``args`` (its message) and attributes ``state``."""
    error = cls.__new__(cls, *args)
    error.args = args
    if isinstance(error, ImportError):  # its ``msg`` is a slot that only its __init__ sets
        ImportError.__init__(error, *args)
    error.__dict__.update(state)
    return error


def require_extra(module: str, package: str, extra: str) -> "types.ModuleType":
    """Import ``module`` or raise :class:`MissingExtra` naming ``package`` and the extra to install."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtra(
            f"{package} is not installed; install it with: pip install \"beam-chunking[{extra}]\""
        ) from None
