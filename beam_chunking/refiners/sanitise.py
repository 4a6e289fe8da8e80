"""Sanitiser: a post-chunking pass that rewrites chunk text (redaction, user functions).

A sanitised chunk keeps its source span (``start``/``end``) and says what changed it:
``sanitised`` lists the passes that changed its text and ``rewrite=True`` marks that
``text`` is no longer ``document_text[start:end]``. Its ``token_count`` is counted again on
the new text, and a vector it carried (from ``late`` or ``semantic``) is cleared, because
that vector still encodes the text before sanitising; an embedding stage embeds it again.
"""
from __future__ import annotations

import dataclasses
import importlib
import re
from dataclasses import dataclass
from typing import Callable, Dict, List, Sequence, Tuple

from beam_chunking.errors import ConfigError
from beam_chunking.types import Chunk, ParsedDocument

_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")
_PHONE = re.compile(r"(?<![\w+])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?\d{2,4}(?:[ .-]\d{2,4}){1,4}(?![\w])")
_NOT_PHONE = re.compile(r"^\d{4}-\d{2}-\d{2}$|^\d{1,3}(?:\.\d{1,3}){3}$|^\d{1,2}[./-]\d{1,2}[./-]\d{2,4}$")
_SECRETS = (
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)", re.S),
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),  # AWS access key id
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"),  # GitHub tokens
    re.compile(r"\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}"),  # OpenAI-style keys
    re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),  # Slack tokens
    re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),  # Google API keys
    re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),  # JSON web tokens
)
# "password = hunter2": the name stays, the value goes.
_ASSIGNED = re.compile(r"(?i)\b((?:pass(?:word|wd)?|secret|token|api[_-]?key|access[_-]?key|client[_-]?secret)"
                       r"\s*[:=]\s*)(['\"]?)([^\s'\"]{4,})\2")

#: What ``redact`` can replace, and the placeholder each becomes.
PLACEHOLDERS = {"email": "[EMAIL]", "phone": "[PHONE]", "secret": "[SECRET]"}


def _phone(m: re.Match) -> str:
    found = m.group(0)
    digits = sum(ch.isdigit() for ch in found)
    if digits < 7 or digits > 15 or _NOT_PHONE.match(found):
        return found  # a date, an address, a version: not a phone number
    if not re.search(r"[+()\-.]", found) and digits < 10:
        return found  # "2024 2025": short groups split by spaces alone are numbers, not a phone
    return PLACEHOLDERS["phone"]


def redact(text: str, kinds: Sequence[str] = tuple(PLACEHOLDERS)) -> Tuple[str, List[str]]:
    """Replace e-mail addresses, phone numbers and secret-like strings in ``text``.

    Args:
        text: The text to redact.
        kinds: What to replace: ``"email"``, ``"phone"``, ``"secret"`` (default all three).

    Returns:
        The redacted text and the kinds that were found, in that order.

    Example:
        >>> redact("Mail ada@example.org or call +44 20 7946 0958.")
        ('Mail [EMAIL] or call [PHONE].', ['email', 'phone'])
    """
    found: List[str] = []
    if "secret" in kinds:
        before = text
        for pattern in _SECRETS:
            text = pattern.sub(PLACEHOLDERS["secret"], text)
        text = _ASSIGNED.sub(lambda m: m.group(1) + m.group(2) + PLACEHOLDERS["secret"] + m.group(2), text)
        if text != before:
            found.append("secret")
    if "email" in kinds:
        text, n = _EMAIL.subn(PLACEHOLDERS["email"], text)
        if n:
            found.append("email")
    if "phone" in kinds:
        new = _PHONE.sub(_phone, text)
        if new != text:
            found.append("phone")
        text = new
    order = [k for k in PLACEHOLDERS if k in found]
    return text, order


def load_function(path: str) -> Callable[[str], str]:
    """The function named ``"package.module:function"``; it maps a chunk's text to new text.

    Raises:
        ConfigError: the name has no ``:``, or the module or function cannot be found.
    """
    module, sep, name = str(path).partition(":")
    if not sep or not module or not name:
        raise ConfigError(f"sanitise: {path!r} must be 'package.module:function'", field="functions")
    try:
        fn = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"sanitise: cannot load {path!r} ({exc})", field="functions") from None
    if not callable(fn):
        raise ConfigError(f"sanitise: {path!r} is not a function", field="functions")
    return fn


@dataclass(frozen=True)
class Sanitiser:
    """Rewrites chunk text after chunking: built-in redaction, then user functions, in order.

    Use it as a refiner: ``Refined(strategy, Sanitiser())``, or ``sanitise:`` in the spec,
    ``--sanitise`` on the command line.

    Args:
        redact: What the built-in redactor replaces: ``"email"`` (``[EMAIL]``), ``"phone"``
            (``[PHONE]``: 7 to 15 digits in groups, with ``+``, brackets, ``-`` or ``.``
            between them or at least 10 digits; not dates or IP addresses) and
            ``"secret"`` (``[SECRET]``: private keys, AWS, GitHub, Slack, Google and
            OpenAI-style keys, JSON web tokens, and the values of ``password=``, ``token:``
            ... assignments). Default all three; ``()`` turns redaction off.
        functions: ``"package.module:function"`` names of functions ``str -> str`` applied
            after redaction, in order. Default none.
    """

    redact: Tuple[str, ...] = tuple(PLACEHOLDERS)
    functions: Tuple[str, ...] = ()

    def __post_init__(self) -> None:
        kinds = (self.redact,) if isinstance(self.redact, str) else tuple(self.redact)
        for kind in kinds:
            if kind not in PLACEHOLDERS:
                raise ConfigError(f"Sanitiser.redact: unknown kind {kind!r} (known: {', '.join(PLACEHOLDERS)})",
                                  field="redact")
        object.__setattr__(self, "redact", kinds)
        functions = (self.functions,) if isinstance(self.functions, str) else tuple(self.functions)
        object.__setattr__(self, "functions", functions)
        # Resolved once (a missing one fails at construction, not on a worker), never per chunk.
        object.__setattr__(self, "_loaded", tuple((path, load_function(path)) for path in functions))

    def setup(self) -> None:
        """Nothing to load."""

    def sanitise(self, text: str) -> Tuple[str, List[str]]:
        """Return the sanitised text and the passes that changed it (``"email"`` ..., function names)."""
        changed: List[str] = []
        if self.redact:
            text, changed = redact(text, self.redact)
        for path, fn in self._loaded:
            new = fn(text)
            if not isinstance(new, str):
                raise TypeError(f"sanitise function {path} returned {type(new).__name__}, not str")
            if new != text:
                changed.append(path)
            text = new
        return text, changed

    def refine(self, doc: ParsedDocument, chunks: List[Chunk]) -> List[Chunk]:
        """Return ``chunks`` with sanitised text; unchanged chunks are returned as they are."""
        out: List[Chunk] = []
        for chunk in chunks:
            text, changed = self.sanitise(chunk.text)
            if not changed:
                out.append(chunk)
                continue
            meta: Dict = dict(chunk.metadata)
            meta["sanitised"] = list(dict.fromkeys(list(meta.get("sanitised") or []) + changed))
            meta["rewrite"] = True
            out.append(dataclasses.replace(chunk, text=text, token_count=None, embedding=None, metadata=meta))
        return out
