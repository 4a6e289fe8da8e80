"""Decoding bytes to text: UTF-8 first, then the legacy encoding the bytes are written in.

:func:`decode` is what the text parsers (plain text, Markdown, code, CSV/TSV) use:

1. a byte-order mark names the encoding (UTF-8, UTF-16 or UTF-32, LE or BE) and is dropped
   from the text;
2. otherwise bytes that are valid UTF-8 (ASCII included) are UTF-8, with confidence 1.0,
   unless they are ASCII with the escape sequences of ISO-2022-JP or ISO-2022-KR
   (:func:`decode_iso2022`) or HZ's GB2312 runs (:func:`decode_hz`), which they are then
   decoded in;
3. otherwise :func:`~beam_chunking.parsers.legacy.detect` picks the legacy encoding under
   which the bytes read as text (GBK/GB18030, Shift-JIS, EUC-JP, Big5, EUC-KR, windows-1252
   and Latin-1, windows-1251, KOI8-R ..., and the rarer Shift_JIS-2004, EUC-JIS-2004 and
   Johab), with `charset-normalizer <https://github.com/jawah/charset_normalizer>`_ and the
   rules of the encodings, or finds the bytes ambiguous between several. Bytes that are
   mostly valid UTF-8 with a few bad sequences are damaged UTF-8, not a legacy encoding,
   and are never guessed at;
4. when no encoding fits, or several read the bytes as different text, ``errors="strict"``
   (the default) fails the document with a :class:`~beam_chunking.errors.DecodeError`
   naming the first bad byte's offset (and the encodings it is ambiguous between), and
   ``errors="replace"`` decodes UTF-8 with U+FFFD for each invalid sequence, counted.

The result records the encoding (a Python codec name: ``data.decode(encoding)`` gives the
text, after a byte-order mark) and a confidence in [0, 1] that lands in the documents
table's ``encoding`` and ``encoding_confidence`` columns.

:func:`decode_unicode` is steps 1-2 alone, for parsers that learn the charset some other way
when the bytes are not Unicode (an HTML page's ``<meta charset>``); :func:`decode_text` is
UTF-8 or a byte-order mark's encoding alone, then step 4, for formats that are UTF-8 by
definition (WebVTT).
"""
from __future__ import annotations

import codecs
import re
import threading
from typing import Any, Dict, NamedTuple, Optional, Tuple

from beam_chunking.errors import ConfigError, DecodeError
# Re-exported: callers and tests know them as the decoder's.
from beam_chunking.parsers.legacy import (LEGACY_ENCODINGS, MULTI_BYTE_ENCODINGS, RARE_ENCODINGS, Detection,  # noqa: F401
                                          detect, detect_encoding)

ERROR_POLICIES = ("strict", "replace")

#: 7-bit encodings that switch to a double-byte set with escape sequences (Japanese e-mail's
#: ISO-2022-JP, Korean ISO-2022-KR), in the order tried: the first that decodes the bytes.
#: Their bytes are ASCII, hence valid UTF-8, and read as UTF-8 they would keep the escapes.
ISO2022_ENCODINGS: Tuple[str, ...] = ("iso2022_jp", "iso2022_kr", "iso2022_jp_ext", "iso2022_jp_2")
# The designations of a double-byte set (ESC $ @, ESC $ A, ESC $ B, ESC $ ( X, ESC $ ) X) or of
# half-width katakana (ESC ( I).
_ISO2022_DESIGNATION = re.compile(rb"\x1b\$[@AB()]|\x1b\(I")
# HZ (RFC 1843), Chinese Usenet's 7-bit encoding: "~{" opens a run of GB2312 characters, each
# two bytes of 0x21-0x7E, and "~}" closes it.
_HZ_RUN = re.compile(rb"~\{(.*?)(?:~\}|\Z)", re.S)
#: Most share of ASCII letters and digits among the bytes of HZ runs: in HZ about half (a
#: character's bytes fall anywhere in 0x21-0x7E), in ASCII text that holds "~{" (code, a
#: path) nearly all, and such text is ASCII, not HZ.
HZ_MAX_ALNUM_SHARE = 0.8
_ALNUM = re.compile(rb"[A-Za-z0-9]")
# CJK ideographs, and the CJK and full-width punctuation that Chinese text puts between them.
_HANZI = re.compile("[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")

#: Valid multi-byte UTF-8 characters per invalid sequence at or above which bytes are taken
#: as damaged UTF-8 rather than a legacy encoding. Legacy text read as UTF-8 gives well under
#: one valid character per invalid sequence (GBK, Shift-JIS, Big5, EUC: 0.2-0.4; single-byte
#: code pages: about 0), UTF-8 with a stray bad byte or a cut last character far more.
DAMAGED_UTF8_RATIO = 4

_COUNTER = threading.local()


def _count_replacement(exc: UnicodeDecodeError):
    _COUNTER.count += 1
    return "\ufffd", exc.end


# One handler for the process; registering one per call would grow codecs' registry forever.
codecs.register_error("beam_chunking.count", _count_replacement)


class Decoded(NamedTuple):
    """A document's text and how it was decoded.

    Attributes:
        text: The decoded text (without a byte-order mark).
        encoding: Python codec name (``"utf-8"``, ``"utf-16"``, ``"cp1252"``, ``"gb18030"`` ...).
        confidence: 1.0 for UTF-8, ISO-2022 and a byte-order mark; 0.9 for HZ; for a
            detected legacy encoding, charset-normalizer's ``1 - chaos`` (how little of the
            text looks like mojibake) divided by the number of different texts that equally
            plausible encodings give (a short, ambiguous input scores low), or 0.5 for an
            unusual text that only one encoding decodes; 0.0 when nothing fitted and the
            text was decoded as UTF-8 with replacements.
        replacements: U+FFFD characters put in for invalid sequences (``errors="replace"``).
    """

    text: str
    encoding: str
    confidence: float
    replacements: int = 0

    def metadata(self) -> Dict[str, Any]:
        """The document metadata a parser records: ``encoding``, ``encoding_confidence`` and,
        when there were any, ``decode_replacements``."""
        meta: Dict[str, Any] = {"encoding": self.encoding, "encoding_confidence": self.confidence}
        if self.replacements:
            meta["decode_replacements"] = self.replacements
        return meta


def _check_policy(errors: str) -> None:
    if errors not in ERROR_POLICIES:
        raise ConfigError(f"decode errors={errors!r} must be one of {ERROR_POLICIES}")


def _declared(data: bytes) -> Tuple[str, bytes, int]:
    """``(codec, body, bytes skipped)``: the encoding a byte-order mark names, else UTF-8."""
    if data.startswith(codecs.BOM_UTF8):
        return "utf-8", data[3:], 3
    if data.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):  # before UTF-16 LE: same first bytes
        return "utf-32", data, 0  # Python's utf-32 codec reads the mark and drops it
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16", data, 0
    return "utf-8", data, 0


def _replaced(body: bytes, encoding: str) -> Tuple[str, int]:
    _COUNTER.count = 0
    text = body.decode(encoding, errors="beam_chunking.count")
    return text, _COUNTER.count


def decode_text(data: bytes, *, uri: str = "", document_id: Optional[str] = None, errors: str = "strict") -> Tuple[str, int]:
    """Return ``(text, replacements)`` for bytes in UTF-8 (with or without BOM) or UTF-16/32 with a BOM.

    No other encoding is tried: this is for formats that are UTF-8 by definition (WebVTT);
    the text parsers use :func:`decode`, parsers that learn the charset otherwise (an HTML
    page's ``<meta charset>``) :func:`decode_unicode` first.

    Args:
        data: Raw bytes.
        uri: For error messages.
        document_id: For error messages.
        errors: ``"strict"`` (default: fail on invalid bytes) or ``"replace"`` (U+FFFD, counted).

    Raises:
        DecodeError: invalid bytes under ``errors="strict"``; the message names the offset.
    """
    _check_policy(errors)
    encoding, body, skipped = _declared(data)
    try:
        return body.decode(encoding), 0
    except UnicodeDecodeError as exc:
        if errors == "strict":
            raise DecodeError(
                f"invalid {encoding.upper()} at byte offset {exc.start + skipped} "
                f"({body[exc.start:exc.end]!r}: {exc.reason}); fix the file or run with "
                "--decode-errors replace to keep it, bad bytes as U+FFFD",
                document_id=document_id,
                uri=uri,
            ) from None
    return _replaced(body, encoding)


def decode_unicode(data: bytes) -> Optional[Decoded]:
    """Steps 1-2 of :func:`decode`: the text of bytes in UTF-8 (ASCII included, with or
    without a byte-order mark, or in ISO-2022 or HZ where their escape sequences say so) or
    in UTF-16 or UTF-32 with a byte-order mark; ``None`` when they are not valid in it.

    For parsers that learn the charset some other way when this fails (an HTML page's
    ``<meta charset>``), before falling back to :func:`decode`.
    """
    return _as_unicode(data)[0]


def _as_unicode(data: bytes) -> Tuple[Optional[Decoded], Optional[UnicodeDecodeError]]:
    """``(decoded, None)`` by steps 1-2 of :func:`decode`, or ``(None, the first decoding error)``."""
    encoding, body, skipped = _declared(data)
    try:
        text = body.decode(encoding)
    except UnicodeDecodeError as exc:
        return None, exc
    seven_bit = (decode_iso2022(body) or decode_hz(body)) if encoding == "utf-8" and not skipped else None
    return seven_bit or Decoded(text, encoding, 1.0), None


def decode_iso2022(data: bytes) -> Optional[Decoded]:
    """The text of ASCII bytes in an escape-sequence encoding of :data:`ISO2022_ENCODINGS`,
    with confidence 1.0 (a designation sequence names the set); ``None`` when the bytes hold
    no designation or none of those encodings decodes them."""
    if b"\x1b" not in data or not data.isascii() or not _ISO2022_DESIGNATION.search(data):
        return None
    for encoding in ISO2022_ENCODINGS:
        try:
            return Decoded(data.decode(encoding), encoding, 1.0)
        except UnicodeDecodeError:
            continue
    return None


def decode_hz(data: bytes) -> Optional[Decoded]:
    """The text of ASCII bytes in HZ, with confidence 0.9; ``None`` when they are ASCII text.

    They are HZ when they hold a ``~{`` run, decode in HZ strictly (no other ``~`` escape, no
    space or line break inside a run), at least half the characters of the runs are hanzi
    or CJK punctuation, and fewer than :data:`HZ_MAX_ALNUM_SHARE` of the runs' bytes are ASCII
    letters and digits. The confidence is below ISO-2022's: ``~{`` is no designation.
    """
    if b"~{" not in data or not data.isascii():
        return None
    try:
        text = data.decode("hz")
    except UnicodeDecodeError:
        return None
    runs = b"".join(_HZ_RUN.findall(data))
    wide = len(text) - len(text.encode("ascii", errors="ignore"))
    if not runs or not wide or len(_ALNUM.findall(runs)) >= HZ_MAX_ALNUM_SHARE * len(runs):
        return None
    return Decoded(text, "hz", 0.9) if 2 * len(_HANZI.findall(text)) >= wide else None


def damaged_utf8(data: bytes) -> bool:
    """Whether invalid UTF-8 ``data`` is UTF-8 with a few bad sequences rather than legacy
    text: it holds at least :data:`DAMAGED_UTF8_RATIO` valid multi-byte characters per
    invalid sequence."""
    # C-speed counts (no Python call per invalid byte): a U+FFFD already in the text counts
    # as invalid too, which only errs towards trying a legacy encoding.
    text = data.decode("utf-8", errors="replace")
    invalid = text.count("\ufffd")
    valid = len(text) - len(text.encode("ascii", errors="ignore")) - invalid
    return invalid > 0 and valid >= DAMAGED_UTF8_RATIO * invalid


def decode(data: bytes, *, uri: str = "", document_id: Optional[str] = None, errors: str = "strict") -> Decoded:
    """Decode a document's bytes: byte-order mark, else UTF-8, else the detected legacy encoding.

    Args:
        data: Raw bytes.
        uri: For error messages.
        document_id: For error messages.
        errors: ``"strict"`` (default): bytes no encoding fits, or that several read as
            different text, fail the document; ``"replace"``: they are decoded as UTF-8 with
            U+FFFD, counted in ``replacements``.

    Returns:
        The text with its encoding and confidence (see :class:`Decoded`).

    Raises:
        DecodeError: under ``errors="strict"``, bytes that are neither valid in the encoding
            their byte-order mark names, nor UTF-8, nor text in one legacy encoding; the
            message names the first invalid byte's offset, and the candidate encodings when
            several read the bytes as different text.
    """
    _check_policy(errors)
    decoded, first = _as_unicode(data)
    if decoded is not None:
        return decoded
    encoding, body, skipped = _declared(data)
    offset, sequence = first.start + skipped, body[first.start:first.end]
    damaged = skipped == 0 and encoding == "utf-8" and damaged_utf8(body)
    detected = detect(body) if skipped == 0 and encoding == "utf-8" and not damaged else Detection(None)
    if detected.encoding is not None:
        try:
            return Decoded(body.decode(detected.encoding), detected.encoding, detected.confidence)
        except UnicodeDecodeError:  # a large file: detection sampled it and the rest does not fit
            pass
    if errors == "strict":
        invalid = f"invalid {encoding.upper()} at byte offset {offset} ({sequence!r}: {first.reason})"
        if encoding != "utf-8" or skipped:
            why = f"{invalid}, the encoding its byte-order mark names; fix the file"
        elif damaged:
            why = f"{invalid} in a file that is otherwise UTF-8; fix the file"
        elif detected.candidates:
            why = (f"not UTF-8 (byte offset {offset}: {sequence!r}, {first.reason}) and ambiguous: it reads as "
                   f"different text in {', '.join(detected.candidates)}; convert it to UTF-8 from the right one")
        else:
            why = (f"not UTF-8 (byte offset {offset}: {sequence!r}, {first.reason}) and not text in any legacy "
                   "encoding charset-normalizer knows; convert it to UTF-8")
        raise DecodeError(f"{why} or run with --decode-errors replace to keep it, bad "
                          "bytes as U+FFFD",
                          document_id=document_id, uri=uri)
    text, replaced = _replaced(body, encoding)
    return Decoded(text, encoding, 0.0, replaced)
