"""E-mail (``.eml``, RFC 5322 / MIME): headers, body and attachments as sections with ``part``.

Parsed with the standard library's ``email`` package (``policy.default``), which decodes
every transfer encoding (base64, quoted-printable, 8bit) and charset, and RFC 2047 encoded
headers. Sections, each with ``part`` metadata:

- ``headers``: From, To, Cc, Date and Subject lines, kind ``headers``;
- ``body``: the text/plain body when there is one, else the text/html body converted by the
  HTML parser, else the text of a one-part message of another text type (``text/enriched``)
  or of a multipart type whose boundary is missing, kind ``body``;
- ``attachment:<filename>``: each attachment parsed by the parser of its own content type
  (PDF, DOCX, CSV, a forwarded message ...), its sections kept with their own provenance
  (``page``, ``row``...). Attachments nest at most ``limits.max_attachment_depth`` deep.

A mailbox (``.mbox``, ``application/mbox``) holds messages one after the other, each opened
by a From_ line: :func:`parse_mbox` reads each as above, its parts prefixed ``message-<n>/``.

The subject is the heading of every section. An attachment no parser handles (an image) is
listed in ``attachments_skipped`` metadata; one whose parser fails is listed with its error
in ``attachments_failed``; neither fails the e-mail.
"""
from __future__ import annotations

import base64
import dataclasses
import email
import email.policy
import quopri
import re
from email.message import EmailMessage
from typing import Any, Dict, FrozenSet, List, NamedTuple, Tuple

from beam_chunking.errors import ChunkingError, LimitExceeded, ParseError
from beam_chunking.parsers._build import TextBuilder, clean, collapse
from beam_chunking.parsers.decode import decode
from beam_chunking.parsers.detect import detect_content_type
from beam_chunking.parsers.formats import EMAIL, FORMAT_PARSERS
from beam_chunking.parsers.html import parse_html
from beam_chunking.parsers.drops import KEEP_NOTHING
from beam_chunking.parsers.limits import DEFAULT_LIMITS, ParseLimits
from beam_chunking.parsers.sniff import MBOX_FROM_LINE
from beam_chunking.types import Document, ParsedDocument

HEADERS = ("From", "To", "Cc", "Date", "Subject")


def _header_text(message: EmailMessage) -> str:
    lines = []
    for name in HEADERS:
        value = message.get(name)
        if value is not None and str(value).strip():
            lines.append(f"{name}: {' '.join(str(value).split())}")
    return "\n".join(lines)


class _Job(NamedTuple):
    """What every part of one message is parsed with, and the notes the parts leave."""

    doc: Document
    errors: str
    limits: ParseLimits
    keep: FrozenSet[str]
    notes: Dict[str, List[str]]


def _body(message: EmailMessage, job: _Job, builder: TextBuilder) -> str:
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return _single_part_text(message, job)
    content = _text_content(part, job)
    if part.get_content_subtype() == "html":
        html = Document(job.doc.id, job.doc.uri, content.encode("utf-8"), "text/html", {})
        parsed = parse_html(html, errors=job.errors, limits=job.limits, keep=job.keep)
        builder.add_drops(parsed.dropped)
        return "\n\n".join(parsed.text[s.start:s.end] for s in parsed.sections)
    return clean(content)


def _single_part_text(message: EmailMessage, job: _Job) -> str:
    """The body of a one-part message that is neither text/plain nor text/html, as a mail
    client shows it: another text type (``text/enriched``, ``text/x-rst``), or a multipart
    type whose boundary is missing or not found (its whole body is one text). ``""`` else."""
    if message.is_multipart() or message.get_content_maintype() not in ("text", "multipart"):
        return ""
    if message.get_content_maintype() == "text":
        return clean(_text_content(message, job))
    return clean(_payload_text(message, job))


def _text_content(part: EmailMessage, job: _Job) -> str:
    """A text part's text, decoded by its charset; by :func:`_payload_text` when the charset
    is unknown (``charset=x-unknown``)."""
    try:
        return part.get_content()
    except LookupError:
        return _payload_text(part, job)


def _payload_text(part: EmailMessage, job: _Job) -> str:
    """A part's bytes (transfer encoding undone) decoded as a text file's are."""
    return _bytes_text(part.get_payload(decode=True) or b"", job)


def _bytes_text(data: bytes, job: _Job) -> str:
    """``data`` decoded as a text file's bytes are (:func:`~beam_chunking.parsers.decode.decode`)."""
    return decode(data, uri=job.doc.uri, document_id=job.doc.id, errors=job.errors).text


def _attachment_bytes(part: EmailMessage) -> bytes:
    encoding = str(part.get("Content-Transfer-Encoding", "")).strip().lower()
    if part.get_content_type() == "message/rfc822" and encoding in ("base64", "quoted-printable"):
        # Not allowed by RFC 2046 but sent anyway: the "message" email parsed is the encoded text.
        raw = part.get_payload(0).get_payload().encode("ascii", "replace")
        return base64.b64decode(raw) if encoding == "base64" else quopri.decodestring(raw)
    content = part.get_content()
    if isinstance(content, bytes):
        return content
    if isinstance(content, str):
        return content.encode("utf-8")
    return bytes(content.as_bytes(policy=email.policy.default))  # message/rfc822


def _add_message(builder: TextBuilder, message: EmailMessage, job: _Job, depth: int, prefix: str) -> None:
    subject = " ".join(str(message.get("Subject") or "").split())
    path = (subject,) if subject else ()
    builder.add(_header_text(message), kind="headers", heading_path=path, metadata={"part": prefix + "headers"})
    builder.add(_body(message, job, builder), kind="body", heading_path=path, metadata={"part": prefix + "body"})
    for k, part in enumerate(message.iter_attachments(), start=1):
        name = " ".join((part.get_filename() or f"attachment-{k}").split())
        label = f"attachment:{name}"
        try:
            data = _attachment_bytes(part)
        except (LookupError, ValueError, AssertionError, TypeError, IndexError) as exc:
            job.notes["attachments_failed"].append(f"{name}: cannot decode ({exc})")
            continue
        ctype = EMAIL if part.get_content_type() == EMAIL else detect_content_type(name, data)
        if ctype == EMAIL:  # a forwarded message: its parts join this one's, nested deeper
            if depth >= job.limits.max_attachment_depth:
                job.notes["attachments_skipped"].append(f"{name} (nested deeper than max_attachment_depth)")
                continue
            inner = email.message_from_bytes(data, policy=email.policy.default)
            _add_message(builder, inner, job, depth + 1, prefix + label + "/")
            continue
        parser = FORMAT_PARSERS.get(ctype)
        if parser is None:
            job.notes["attachments_skipped"].append(f"{name} ({part.get_content_type()})")
            continue
        sub = Document(job.doc.id, f"{job.doc.uri}#{name}", data, ctype, {})
        try:
            parsed = parser(sub, errors=job.errors, limits=job.limits, keep=job.keep)
        except ChunkingError as exc:
            if isinstance(exc, LimitExceeded) and exc.limit == "max_parse_seconds":
                raise  # the message's own budget is spent: the message fails, not this part alone
            job.notes["attachments_failed"].append(f"{name}: {type(exc).__name__}: {exc}")
            continue
        builder.add_drops(parsed.dropped)
        for section in parsed.sections:
            meta = dict(section.metadata, part=prefix + label)
            if builder.add(parsed.text[section.start:section.end],
                           **{**_fields(section), "heading_path": path + section.heading_path, "metadata": meta}):
                # A section's text is added whole (parsers trim their sections), so its boxes move with it.
                builder.add_boxes(parsed.boxes, section.start, section.end, builder.last_start - section.start)


def _fields(section) -> Dict[str, Any]:
    return {f.name: getattr(section, f.name) for f in dataclasses.fields(section) if f.name not in ("start", "end")}


def split_mbox(data: bytes) -> Tuple[bytes, List[bytes]]:
    """``(preamble, messages)`` of a mailbox (RFC 4155): each message starts at a From_ line
    (:data:`~beam_chunking.parsers.sniff.MBOX_FROM_LINE`) that opens the file (whitespace
    before it aside) or follows a blank line, and keeps it (the e-mail parser reads it as the
    envelope); the preamble is what comes before the first one. Without a From_ line the
    whole file is one message."""
    first_text = re.search(rb"\S", data)
    opening = first_text.start() if first_text else len(data)
    starts = [m.start() for m in MBOX_FROM_LINE.finditer(data)
              if m.start() <= opening or data.endswith((b"\n\n", b"\n\r\n"), 0, m.start())]
    if not starts:
        return b"", [data]
    return data[:starts[0]], [data[a:b] for a, b in zip(starts, starts[1:] + [len(data)])]


def parse_mbox(doc: Document, *, errors: str = "strict", limits: ParseLimits = DEFAULT_LIMITS,
               keep: FrozenSet[str] = KEEP_NOTHING) -> ParsedDocument:
    """Parse a mailbox (``.mbox``, a Mailman archive): each message as :func:`parse_email`
    parses one, its parts named ``message-<n>/headers``, ``message-<n>/body`` ... (``n`` from
    1, in file order) when there are several, as in a single ``.eml`` when there is one
    (``subject`` metadata included).

    Text before the first From_ line is kept as the part ``preamble``. A stretch between From_
    lines without RFC 5322 headers is listed in ``messages_failed`` metadata and its text kept
    as that message's body; ``messages`` counts the messages.
    """
    if not doc.data.strip():
        raise ParseError("mailbox: the file is empty", document_id=doc.id, uri=doc.uri)
    preamble, found = split_mbox(doc.data)
    raw = [m for m in found if m.strip()]
    builder = TextBuilder(max_chars=limits.max_text_chars)
    notes: Dict[str, List[str]] = {"attachments_skipped": [], "attachments_failed": [], "messages_failed": []}
    job = _Job(doc, errors, limits, keep, notes)
    if preamble.strip():
        builder.add(clean(_bytes_text(preamble, job)), kind="body", metadata={"part": "preamble"})
    subject = ""
    for k, data in enumerate(raw, start=1):
        prefix = f"message-{k}/" if len(raw) > 1 else ""
        message = email.message_from_bytes(data, policy=email.policy.default)
        if not message.keys():
            notes["messages_failed"].append(f"message {k}: no RFC 5322 headers")
            builder.add(clean(_bytes_text(data, job)), kind="body", metadata={"part": prefix + "body"})
            continue
        _add_message(builder, message, job, 1, prefix)
        subject = collapse(str(message.get("Subject") or ""))
    meta: Dict[str, Any] = {k: v for k, v in notes.items() if v}
    meta["messages"] = len(raw)
    if len(raw) == 1 and subject:
        meta["subject"] = subject
    return builder.build(doc, meta)


def parse_email(doc: Document, *, errors: str = "strict", limits: ParseLimits = DEFAULT_LIMITS,
                keep: FrozenSet[str] = KEEP_NOTHING) -> ParsedDocument:
    """Parse an RFC 5322 message into headers, body and attachment sections.

    Args:
        doc: The raw document.
        errors: Decoding policy for attachments parsed as text.
        limits: Caps, passed on to attachment parsers; ``max_attachment_depth`` (default 3).
        keep: Parts the attachment parsers drop by default that are kept instead
            (:data:`~beam_chunking.parsers.drops.DROPS`). Default none.
    """
    if not doc.data.strip():
        raise ParseError("e-mail: the file is empty", document_id=doc.id, uri=doc.uri)
    message = email.message_from_bytes(doc.data, policy=email.policy.default)
    if not message.keys():
        raise ParseError("e-mail: no RFC 5322 headers found; the file is not an e-mail message",
                         document_id=doc.id, uri=doc.uri)
    builder = TextBuilder(max_chars=limits.max_text_chars)
    notes: Dict[str, List[str]] = {"attachments_skipped": [], "attachments_failed": []}
    _add_message(builder, message, _Job(doc, errors, limits, keep, notes), 1, "")
    meta: Dict[str, Any] = {k: v for k, v in notes.items() if v}
    subject = collapse(str(message.get("Subject") or ""))
    if subject:
        meta["subject"] = subject
    return builder.build(doc, meta)
