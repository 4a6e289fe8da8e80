"""Outlook e-mail (``.msg``, MS-OXMSG): read as the ``.eml`` it stands for, then parsed as one.

Read with extract-msg (the ``msg`` extra). The message becomes an RFC 5322
:class:`email.message.EmailMessage` that :func:`~beam_chunking.parsers.mail.parse_email`
parses, so sections, ``part`` metadata, attachment parsing, depth limits and drops are those
of an ``.eml`` file:

- headers: From, To, Cc, Date and Message-ID from the transport headers Outlook kept when
  the message arrived, else from the message's properties (sender, recipients, submit
  time); Subject from the subject property, as Outlook shows it;
- body: the plain-text body (PR_BODY), else the HTML body (PR_HTML), else what extract-msg
  recovers from a rich-text (RTF) body that encapsulates HTML or plain text;
- attachments: file attachments with their names and bytes; attached Outlook messages as
  forwarded messages (``message/rfc822``), nested at most ``limits.max_attachment_depth``
  deep. Links to web resources and OLE objects have no bytes to parse: they are listed in
  ``attachments_skipped``.

Problems with a header or an unreadable rich-text body are listed in ``outlook_notes``
metadata; they do not fail the message.

Any Outlook item that is a message (mail, meeting request, post, task, contact...) is read
for its subject, recipients, body and attachments.
"""
from __future__ import annotations

import dataclasses
import email
import email.policy
import email.utils
import io
import logging
from email.message import EmailMessage
from typing import Any, Dict, FrozenSet, List, Optional, Tuple

from beam_chunking.errors import ParseError
from beam_chunking.parsers._optional import require
from beam_chunking.parsers.drops import KEEP_NOTHING
from beam_chunking.parsers.formats import EMAIL
from beam_chunking.parsers.limits import DEFAULT_LIMITS, ParseLimits
from beam_chunking.parsers.mail import parse_email
from beam_chunking.parsers.sniff import OUTLOOK
from beam_chunking.types import Document, ParsedDocument

#: The first bytes of every OLE compound file (MS-CFB), which a ``.msg`` is.
CFB_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"

# A compound file holds at least its header and two sectors; olefile takes shorter bytes for
# a file name, so they are refused here first.
_MIN_SIZE = 1536
_RECIPIENT_TYPES = (("To", 1), ("Cc", 2))  # MAPI PR_RECIPIENT_TYPE: MAPI_TO, MAPI_CC


class _Job:
    """The caps of one conversion and the notes it leaves for the document's metadata."""

    def __init__(self, limits: ParseLimits, doc: Document):
        self.limits = limits
        self.doc = doc
        self.budget = limits.max_uncompressed_bytes
        # The e-mail parser's two lists, and problems with headers or the body of the message.
        self.notes: Dict[str, List[str]] = {"attachments_skipped": [], "attachments_failed": [], "outlook_notes": []}

    def spend(self, size: int) -> None:
        # Directory entries may share sectors, so the streams read can outgrow the file.
        self.budget -= size
        if self.budget < 0:
            raise ParseError(
                f"Outlook .msg: its bodies and attachments exceed max_uncompressed_bytes="
                f"{self.limits.max_uncompressed_bytes} (an oversized or crafted file; raise the limit "
                "if it is genuine)",
                document_id=self.doc.id, uri=self.doc.uri)


def _quiet_logs() -> None:
    # extract-msg reports every absent optional stream at INFO; only its warnings are news.
    # A level the application set on that logger is left alone.
    logger = logging.getLogger("extract_msg")
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.WARNING)


def _one_line(value: Any) -> str:
    return " ".join(str(value or "").split())


def _address(name: Optional[str], address: Optional[str]) -> str:
    name, address = _one_line(name), _one_line(address)
    if not address or name == address:
        return name or address
    return email.utils.formataddr((name, address))


def _headers(msg) -> List[Tuple[str, str]]:
    """From, To, Cc, Date, Subject, Message-ID: transport headers first (Subject: PR_SUBJECT first)."""
    kept = msg.header if msg.headerText else None  # parsed transport headers (compat32 Message)

    def from_transport(name: str) -> str:
        return _one_line(kept.get(name)) if kept is not None else ""

    sender = from_transport("From") or _address(msg.getStringStream("__substg1.0_0C1A"),
                                                 msg.getStringStream("__substg1.0_5D01")
                                                 or msg.getStringStream("__substg1.0_0C1F"))
    out = [("From", sender)]
    for name, kind in _RECIPIENT_TYPES:
        listed = ", ".join(_address(r.name, r.email) for r in msg.recipients if int(r.type) == kind)
        out.append((name, from_transport(name) or listed))
    date = msg.date  # PR_CLIENT_SUBMIT_TIME, in UTC; the transport Date keeps the sender's zone
    out.append(("Date", from_transport("Date") or (email.utils.format_datetime(date) if date is not None else "")))
    # PR_SUBJECT is the subject as Outlook shows it (already decoded, edits kept).
    out.append(("Subject", _one_line(msg.subject) or from_transport("Subject")))
    out.append(("Message-ID", from_transport("Message-ID") or _one_line(msg.getStringStream("__substg1.0_1035"))))
    return [(name, value) for name, value in out if value]


def _html_text(msg, html: bytes) -> str:
    """Decode PR_HTML: by the message's internet code page, else as UTF-8, else Windows-1252."""
    codecs: List[str] = []
    cpid = msg.getPropertyVal("3FDE0003")  # PR_INTERNET_CPID
    if isinstance(cpid, int):
        try:
            codecs.append(require("extract_msg.encoding", "extract-msg", "msg").lookupCodePage(cpid))
        except require("extract_msg.exceptions", "extract-msg", "msg").ExMsgBaseException:
            pass  # a code page extract-msg does not know: the guesses below
    for codec in codecs + ["utf-8"]:
        try:
            return html.decode(codec)
        except (LookupError, UnicodeDecodeError):
            continue
    return html.decode("cp1252", errors="replace")


def _set_body(msg, out: EmailMessage, job: _Job) -> None:
    plain = msg.getStringStream("__substg1.0_1000")
    html = msg.getStream("__substg1.0_10130102") if plain is None else None
    if plain is None and html is None:
        # Only a rich-text body: extract-msg recovers the HTML or text it encapsulates, if any.
        try:
            html = msg.htmlBody or None
            plain = msg.body if html is None else None
        except Exception as exc:
            detail = " ".join(str(exc).split())[:120]
            job.notes["outlook_notes"].append(f"the RTF body cannot be read ({type(exc).__name__}: {detail})")
    if plain:
        job.spend(len(plain.encode("utf-8")))
        out.set_content(plain)
    elif html:
        job.spend(len(html))
        out.set_content(_html_text(msg, bytes(html)), subtype="html")


def _mime_type(value: Optional[str]) -> Tuple[str, str]:
    maintype, _, subtype = _one_line(value).lower().partition("/")
    if not maintype or not subtype or " " in subtype or maintype in ("multipart", "message"):
        return "application", "octet-stream"  # parse_email types attachments by name and bytes anyway
    return maintype, subtype


def _attach(out: EmailMessage, att, k: int, depth: int, job: _Job) -> None:
    message_base = require("extract_msg.msg_classes", "extract-msg", "msg").MessageBase
    name = _one_line(att.longFilename or att.name) or f"attachment-{k}"
    data = att.data
    if isinstance(data, (bytes, bytearray)):
        job.spend(len(data))
        if _one_line(att.mimetype).lower() == EMAIL:  # an .eml attached as a file
            inner = email.message_from_bytes(bytes(data), policy=email.policy.default)
            out.add_attachment(inner, filename=name)
            return
        maintype, subtype = _mime_type(att.mimetype)
        out.add_attachment(bytes(data), maintype=maintype, subtype=subtype, filename=name)
    elif isinstance(data, message_base):
        if depth >= job.limits.max_attachment_depth:
            # parse_email skips this part at the same depth and records why; its contents are
            # never read.
            out.add_attachment(EmailMessage(), filename=name)
            return
        out.add_attachment(_to_email(data, depth + 1, job), filename=name)
    elif att.type.name == "BROKEN":  # errorBehavior below turns a damaged attachment into this
        job.notes["attachments_failed"].append(f"{name}: extract-msg cannot read it")
    elif data is None and att.type.name == "DATA":
        job.notes["attachments_skipped"].append(f"{name} (no data)")
    else:
        job.notes["attachments_skipped"].append(f"{name} (Outlook {att.type.name.lower()} attachment)")


def _to_email(msg, depth: int, job: _Job) -> EmailMessage:
    """Build the RFC 5322 message; ``depth`` 1 is the file itself, as in ``parse_email``."""
    out = EmailMessage()
    out["MIME-Version"] = "1.0"  # a message with no other header is still a message to parse_email
    for name, value in _headers(msg):
        try:
            out[name] = value
        except (ValueError, TypeError, IndexError) as exc:  # a value the header registry rejects
            job.notes["outlook_notes"].append(f"header {name} left out ({exc})")
    _set_body(msg, out, job)
    for k, att in enumerate(msg.attachments, start=1):
        _attach(out, att, k, depth, job)
    return out


def parse_outlook(doc: Document, *, errors: str = "strict", limits: ParseLimits = DEFAULT_LIMITS,
                  keep: FrozenSet[str] = KEEP_NOTHING) -> ParsedDocument:
    """Parse an Outlook ``.msg`` message into headers, body and attachment sections.

    Args:
        doc: The raw document.
        errors: Decoding policy for attachments parsed as text. Default ``"strict"``.
        limits: Caps: ``max_attachment_depth`` (default 3) bounds attached messages;
            ``max_uncompressed_bytes`` (default 512 MiB) bounds the bytes of all bodies and
            attachments read; the rest pass on to the attachments' parsers.
        keep: Parts the attachment parsers drop by default that are kept instead
            (:data:`~beam_chunking.parsers.drops.DROPS`). Default none.

    Returns:
        The sections :func:`~beam_chunking.parsers.mail.parse_email` gives the same message
        as an ``.eml`` file, with ``content_type`` :data:`OUTLOOK`.

    Raises:
        ParseError: not an OLE compound file, not an Outlook message, damaged, or over a cap.
        MissingExtra: extract-msg is not installed (the ``msg`` extra).

    Example:
        >>> parsed = parse_outlook(Document("d", "mail.msg", data, OUTLOOK))  # doctest: +SKIP
        >>> [s.metadata["part"] for s in parsed.sections]  # doctest: +SKIP
        ['headers', 'body', 'attachment:notes.txt']
    """
    extract_msg = require("extract_msg", "extract-msg", "msg")
    message_base = require("extract_msg.msg_classes", "extract-msg", "msg").MessageBase
    _quiet_logs()

    def fail(message: str) -> ParseError:
        return ParseError(f"Outlook .msg: {message}", document_id=doc.id, uri=doc.uri)

    if not doc.data.startswith(CFB_MAGIC) or len(doc.data) < _MIN_SIZE:
        raise fail("not an OLE compound file (no D0 CF 11 E0 signature, or shorter than 1,536 bytes); "
                   "the file is not an Outlook message")
    job = _Job(limits, doc)
    msg = None
    try:
        # Attachments load when asked for: below the depth cap no message's attachments are read.
        # A damaged attachment, a recipient without properties or an unreadable RTF body is
        # logged and left out rather than failing the whole message.
        tolerate = require("extract_msg.enums", "extract-msg", "msg").ErrorBehavior
        msg = extract_msg.openMsg(io.BytesIO(doc.data), delayAttachments=True, errorBehavior=(
            tolerate.ATTACH_SUPPRESS_ALL | tolerate.RTFDE | tolerate.STANDARDS_VIOLATION))
        if not isinstance(msg, message_base):
            raise fail(f"a {msg.classType or 'classless'} item is not a message")
        data = _to_email(msg, 1, job).as_bytes(policy=email.policy.default)
    except ParseError:
        raise
    except Exception as exc:  # a damaged file fails in olefile or extract-msg in many ways
        detail = " ".join(str(exc).split())[:200]
        raise fail(f"extract-msg cannot read it ({type(exc).__name__}: {detail}); the file is damaged "
                   "or not an Outlook message") from None
    finally:
        if msg is not None:
            msg.close()
    parsed = parse_email(dataclasses.replace(doc, data=data, content_type=EMAIL),
                         errors=errors, limits=limits, keep=keep)
    meta = dict(parsed.metadata)
    for key, notes in job.notes.items():
        if notes:
            meta[key] = notes + list(meta.get(key, []))
    return dataclasses.replace(parsed, content_type=OUTLOOK, metadata=meta)
