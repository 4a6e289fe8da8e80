"""Sniffing the type of a text file whose name says nothing, from its first bytes.

Conservative by design: each check needs a structure that plain text does not have by
chance, so a text whose first line merely holds a colon (``Note: buy milk``), starts with a
bracket (``[1] Introduction``), a tag or a ``---`` rule stays ``text/plain``. Only the first
:data:`SNIFF_BYTES` bytes are looked at.

Example:
    >>> sniff_text(b"From: a@example.com\\nSubject: hi\\n\\nHello")
    'message/rfc822'
    >>> sniff_text(b"Note: buy milk")
    'text/plain'
"""
from __future__ import annotations

import re
from typing import List, Optional

import yaml

from beam_chunking.parsers.code import CONTENT_TYPES, DATA_FORMATS

PLAIN = "text/plain"
HTML = "text/html"
EMAIL = "message/rfc822"
#: A mailbox of messages, each opened by a From_ line (RFC 4155).
MBOX = "application/mbox"
#: WebVTT transcripts (``.vtt``).
WEBVTT = "text/vtt"
#: SubRip transcripts (``.srt``; found by extension only).
SUBRIP = "application/x-subrip"
#: Outlook messages (``.msg``; an OLE2 compound file with that extension).
OUTLOOK = "application/vnd.ms-outlook"
JSON, YAML, XML = DATA_FORMATS["json"], DATA_FORMATS["yaml"], DATA_FORMATS["xml"]

#: How much of a file is looked at to sniff its type (and to tell text from binary), in bytes.
SNIFF_BYTES = 8192

# HTML: a doctype or the tags that open a whole page, after whitespace and comments. The
# WHATWG MIME Sniffing Standard also takes <script>, <p>, <b> ... for HTML, which a browser
# can afford; here a text file that starts with a tag stays text, since parsing it as HTML
# would drop what is inside <script> or <style>.
_HTML_START = re.compile(rb"<(?:!doctype\s+html|html|head|body)[\s>]", re.I)
_LEADING = re.compile(rb"(?:\s+|<!--.*?-->)*", re.S)
# XML: after the declaration, comments and processing instructions, the root element (or
# the doctype naming it); an XHTML page is HTML.
_XML_ROOT = re.compile(rb"(?:\s+|<!--.*?-->|<\?.*?\?>)*<(?:!doctype\s+)?(?P<name>[A-Za-z_][\w.:-]*)", re.S | re.I)

# E-mail: a header block of "Name: value" fields (RFC 5322 field names, folded lines
# allowed) ended by a blank line, holding at least two of MAIL_FIELDS, one of them a field
# that only a message has. A text whose first line merely has a colon is never an e-mail.
_FIELD = re.compile(rb"[!-9;-~]+:")
#: Header fields that count towards taking a header block for an e-mail's (lower case).
MAIL_FIELDS = frozenset({"from", "to", "cc", "bcc", "subject", "date", "message-id", "mime-version", "received",
                         "return-path", "reply-to", "delivered-to", "sender", "in-reply-to", "references",
                         "content-type", "content-transfer-encoding", "x-mailer", "user-agent"})
_MESSAGE_ONLY = frozenset({"from", "message-id", "mime-version", "received", "return-path", "delivered-to"})

#: The From_ line that opens each message of an mbox: ``From`` and the envelope sender, then
#: an asctime date (``From MAILER-DAEMON Fri Apr 06 16:46:09 2001``; Mailman archives write
#: the sender as ``barry at python.org``, with spaces; a zone may stand before or after the year).
MBOX_FROM_LINE = re.compile(
    rb"^From [^\r\n]*?[ \t](?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +"
    rb"\d{1,2} \d\d:\d\d(?::\d\d)?(?: [A-Za-z]{1,5}| [+-]\d{4})? \d{4}(?: [A-Za-z]{1,5}| [+-]\d{4})?[ \t]*\r?$",
    re.M)

# JSON: one token (a string, a scalar or punctuation) after optional whitespace.
_JSON_TOKEN = re.compile(r'(\s*)(?:("(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*")'
                         r"|(-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)|([{}\[\],:]))")

#: ``#!`` interpreter (version digits dropped) -> language.
INTERPRETERS = {"python": "python", "sh": "shell", "bash": "shell", "zsh": "shell", "ksh": "shell",
                "dash": "shell", "node": "javascript", "nodejs": "javascript", "ruby": "ruby", "perl": "perl",
                "php": "php", "lua": "lua", "rscript": "r", "julia": "julia", "elixir": "elixir",
                "groovy": "groovy", "kotlin": "kotlin", "scala": "scala", "pwsh": "powershell"}

def _head(data: bytes) -> bytes:
    """The first :data:`SNIFF_BYTES` bytes, ASCII-compatible (UTF-16 and UTF-32 re-encoded as UTF-8)."""
    head = data[:SNIFF_BYTES]
    if head.startswith(b"\xef\xbb\xbf"):
        return head[3:]
    if head.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):  # before UTF-16 LE: same first bytes
        return head[: len(head) // 4 * 4].decode("utf-32", "ignore").encode("utf-8")
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return head[: len(head) // 2 * 2].decode("utf-16", "ignore").encode("utf-8")
    return head


def _markup(head: bytes) -> Optional[str]:
    start = _LEADING.match(head).end()
    if _HTML_START.match(head, start):
        return HTML
    if not head.startswith(b"<?xml", start):
        return None
    end = head.find(b"?>", start)
    root = _XML_ROOT.match(head, end + 2) if end >= 0 else None
    return HTML if root is not None and root.group("name").lower() == b"html" else XML


def _email(head: bytes, truncated: bool) -> bool:
    # The last piece is cut short (a truncated window) or empty (after the final newline):
    # either way not a line of its own.
    lines = head.split(b"\n")[:-1]
    fields = set()
    for k, line in enumerate(lines):
        line = line.rstrip(b"\r")
        if not line:
            break  # the blank line that ends the header block
        if line[:1] in (b" ", b"\t"):
            if k == 0:
                return False
            continue  # a folded field
        field = _FIELD.match(line)
        if field is None:
            return False
        fields.add(field.group()[:-1].decode("ascii").lower())
    else:
        if not truncated:
            return False  # headers only, no blank line: more likely a list of "key: value" lines
    known = fields & MAIL_FIELDS
    return len(known) >= 2 and bool(known & _MESSAGE_ONLY)


def _json(head: bytes, truncated: bool) -> bool:
    """Whether ``head`` is JSON, or the start of JSON cut at :data:`SNIFF_BYTES`.

    Checked token by token against the grammar (a stack of open containers), so prose that
    starts with a bracket (``[1] Introduction``) is not JSON. Several top-level values, one
    per line (JSON Lines), are JSON too.
    """
    text = head.decode("utf-8", "replace")
    if text.lstrip()[:1] not in ("{", "["):
        return False
    stack: List[str] = []  # the opening bracket of each open container
    expect = "value"  # what may come: value, key, colon, or next (a comma or a close)
    pos = 0
    while True:
        if not stack and expect == "next":  # a top-level value ended
            rest = text[pos:]
            if not rest.strip():
                return True
            if "\n" not in rest[: len(rest) - len(rest.lstrip())]:
                return False
            expect = "value"
        token = _JSON_TOKEN.match(text, pos)
        if token is None:
            rest = text[pos:].strip()
            if not rest:
                return truncated  # the window ends inside a container
            # The cut may fall inside a string or a scalar, but nothing else is JSON.
            return truncated and rest[:1] in '"-0123456789tfn' and "\n" not in rest
        pos = token.end()
        _, string, scalar, punct = token.groups()
        if expect == "key":
            if string is not None:
                expect = "colon"
            elif punct == "}" and stack[-1] == "{":
                stack.pop()
                expect = "next"
            else:
                return False
        elif expect == "colon":
            if punct != ":":
                return False
            expect = "value"
        elif expect == "value":
            if string is not None or scalar is not None:
                expect = "next"
            elif punct in ("{", "["):
                stack.append(punct)
                expect = "key" if punct == "{" else "value"
            elif punct == "]" and stack and stack[-1] == "[":
                stack.pop()  # an empty list
                expect = "next"
            else:
                return False
        elif punct == ",":
            expect = "key" if stack[-1] == "{" else "value"
        elif punct == ("}" if stack[-1] == "{" else "]"):
            stack.pop()
        else:
            return False


def _yaml(head: bytes, truncated: bool) -> bool:
    """A ``%YAML`` directive, or a ``---`` line opening documents that are all mappings or lists.

    A bare ``key: value`` first line is not enough: plenty of plain text starts that way.
    Markdown front matter followed by prose is not YAML: the prose reads as a string.
    """
    text = head.decode("utf-8", "replace")
    first = text.split("\n", 1)[0].rstrip()
    if first.startswith("%YAML"):
        return True
    if first != "---" and not first.startswith("--- "):
        return False
    if truncated:
        text = text[: text.rfind("\n") + 1]
    try:
        documents = list(yaml.safe_load_all(text))
    except (yaml.YAMLError, ValueError, RecursionError):
        return False
    return (any(isinstance(d, (dict, list)) and d for d in documents)
            and all(d is None or isinstance(d, (dict, list)) for d in documents))


def _script(head: bytes) -> Optional[str]:
    """The language of a ``#!`` line's interpreter (``#!/usr/bin/env python3`` -> python)."""
    if not head.startswith(b"#!"):
        return None
    words = head[2:].split(b"\n", 1)[0].decode("ascii", "replace").split()
    if not words:
        return None
    program = words[0].rsplit("/", 1)[-1]
    if program == "env":  # env [-S] [NAME=VALUE ...] PROGRAM
        words = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        program = words[0].rsplit("/", 1)[-1] if words else ""
    return INTERPRETERS.get(re.sub(r"[\d.]+$", "", program.lower()))


def sniff_text(data: bytes) -> str:
    """The content type of a text file whose name says nothing, from its first bytes.

    Only the first :data:`SNIFF_BYTES` bytes are read. HTML and XML by their opening markup,
    a WebVTT transcript by its ``WEBVTT`` line, an e-mail by its header block (a mailbox by a
    From_ line before it), JSON by its tokens, YAML by a ``%YAML`` directive or a
    ``---`` line opening mappings or lists, a script by its ``#!`` line; ``text/plain``
    otherwise.

    Args:
        data: The file's bytes (not binary: see :func:`looks_binary`).
    """
    head = _head(data)
    truncated = len(data) > SNIFF_BYTES
    if head.startswith(b"WEBVTT") and (len(head) == 6 or head[6:7] in (b" ", b"\t", b"\r", b"\n")):
        return WEBVTT  # the format's required first line
    kind = _markup(head)
    if kind is not None:
        return kind
    if _email(head, truncated):
        return EMAIL
    envelope = MBOX_FROM_LINE.match(head)
    if envelope is not None and _email(head[envelope.end():].lstrip(b"\r\n"), truncated):
        return MBOX
    if _json(head, truncated):
        return JSON
    if _yaml(head, truncated):
        return YAML
    script = _script(head)
    return CONTENT_TYPES[script] if script else PLAIN
