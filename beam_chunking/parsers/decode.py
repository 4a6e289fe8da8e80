"""Decoding bytes to text: UTF-8 first, then the legacy encoding the bytes are written in.

:func:`decode` is what the text parsers (plain text, Markdown, code, CSV/TSV) use:

1. a byte-order mark names the encoding (UTF-8, UTF-16 LE/BE) and is dropped from the text;
2. otherwise bytes that are valid UTF-8 (ASCII included) are UTF-8, with confidence 1.0,
   unless they are ASCII with the escape sequences of ISO-2022-JP or ISO-2022-KR
   (:func:`decode_iso2022`), which they are then decoded in;
3. otherwise `charset-normalizer <https://github.com/jawah/charset_normalizer>`_ picks the
   legacy encoding, among :data:`LEGACY_ENCODINGS`, under which the bytes read as coherent
   text (GBK/GB18030, Shift-JIS, EUC-JP, Big5, EUC-KR, windows-1252 and Latin-1,
   windows-1251, KOI8-R ...). Bytes that are mostly valid UTF-8 with a few bad sequences are
   damaged UTF-8, not a legacy encoding, and are never guessed at; bytes whose non-ASCII
   bytes all stand alone and are 0xA0 or above (accented letters in Latin text) are read in
   single-byte code pages only;
4. when no encoding fits, ``errors="strict"`` (the default) fails the document with a
   :class:`~beam_chunking.errors.DecodeError` naming the first bad byte's offset, and
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
import hashlib
import re
import threading
from typing import Any, Dict, NamedTuple, Optional, Tuple

from beam_chunking.errors import ConfigError, DecodeError

ERROR_POLICIES = ("strict", "replace")

#: The legacy encodings :func:`decode` considers, roughly in their order of use on the web
#: (W3Techs' survey of character encodings). When charset-normalizer finds several equally
#: plausible, the first of them here wins. They are the legacy encodings of the WHATWG
#: Encoding Standard (what browsers decode), as the Python codecs that decode them like
#: browsers do (windows-949 for EUC-KR, windows-31j for Shift_JIS, GB18030 for GBK, Big5-HKSCS
#: for Big5); Latin-1 text decodes the same under windows-1252. Mac and DOS code pages are
#: left out: on short texts they tie with the common ones and win by chance.
LEGACY_ENCODINGS: Tuple[str, ...] = (
    "cp1252", "cp1251", "cp932", "euc_jp", "gb18030", "cp949", "cp1250", "big5hkscs", "iso8859_2",
    "cp1256", "cp1254", "cp874", "cp1253", "cp1255", "koi8_r", "koi8_u", "iso8859_5", "iso8859_7",
    "cp1257", "cp1258",
)

#: 7-bit encodings that switch to a double-byte set with escape sequences (Japanese e-mail's
#: ISO-2022-JP, Korean ISO-2022-KR), in the order tried: the first that decodes the bytes.
#: Their bytes are ASCII, hence valid UTF-8, and read as UTF-8 they would keep the escapes.
ISO2022_ENCODINGS: Tuple[str, ...] = ("iso2022_jp", "iso2022_kr", "iso2022_jp_ext", "iso2022_jp_2")
# The designations of a double-byte set (ESC $ @, ESC $ A, ESC $ B, ESC $ ( X, ESC $ ) X) or of
# half-width katakana (ESC ( I).
_ISO2022_DESIGNATION = re.compile(rb"\x1b\$[@AB()]|\x1b\(I")

#: The legacy encodings of :data:`LEGACY_ENCODINGS` that write a character in two bytes or more.
MULTI_BYTE_ENCODINGS = frozenset({"cp932", "euc_jp", "gb18030", "cp949", "big5hkscs"})
# What keeps CJK readings among the candidates (see detect_encoding): two bytes of 0x80 and
# above side by side; one below 0xA0 (no letter in the Latin code pages; Shift-JIS's kana
# lead byte, 0x83, whose trail byte is often ASCII); or one followed by a sign that follows no
# accented letter in text but is a common trail byte (Big5's and Shift-JIS's 0x5C, "\").
_NOT_LONE_LATIN = re.compile(rb"[\x80-\xff]{2}|[\x80-\x9f]|[\x80-\xff][@\[\\\]^_`{|}~]")

#: Valid multi-byte UTF-8 characters per invalid sequence at or above which bytes are taken
#: as damaged UTF-8 rather than a legacy encoding. Legacy text read as UTF-8 gives well under
#: one valid character per invalid sequence (GBK, Shift-JIS, Big5, EUC: 0.2-0.4; single-byte
#: code pages: about 0), UTF-8 with a stray bad byte or a cut last character far more.
DAMAGED_UTF8_RATIO = 4

#: How much more mojibake (charset-normalizer's chaos, 0-1) than the cleanest reading a
#: reading may show and still be a candidate: on a paragraph, the right code page often
#: scores about 0.01 worse than a wrong one of the same script (windows-1250 for French).
CHAOS_MARGIN = 0.02
#: How much less coherent (charset-normalizer's language fit, 0-1) than the most coherent
#: candidate a candidate may be and still tie with it.
COHERENCE_MARGIN = 0.02

#: charset-normalizer merges encodings that give the same text only for inputs below this
#: size in bytes (its TOO_BIG_SEQUENCE, 10 MB); above it :func:`detect_encoding` compares them.
_MERGED_BELOW = 10_000_000

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
        confidence: 1.0 for UTF-8 and for a byte-order mark; for a detected legacy encoding,
            charset-normalizer's ``1 - chaos`` (how little of the text looks like mojibake)
            divided by the number of different texts that equally plausible encodings give
            (a short, ambiguous input scores low); 0.0 when nothing fitted and the text was
            decoded as UTF-8 with replacements.
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
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16", data, 0  # Python's utf-16 codec reads the mark and drops it
    return "utf-8", data, 0


def _replaced(body: bytes, encoding: str) -> Tuple[str, int]:
    _COUNTER.count = 0
    text = body.decode(encoding, errors="beam_chunking.count")
    return text, _COUNTER.count


def decode_text(data: bytes, *, uri: str = "", document_id: Optional[str] = None, errors: str = "strict") -> Tuple[str, int]:
    """Return ``(text, replacements)`` for bytes in UTF-8 (with or without BOM) or UTF-16 with a BOM.

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
                "decode_errors='replace' to keep it with U+FFFD replacements",
                document_id=document_id,
                uri=uri,
            ) from None
    return _replaced(body, encoding)


def decode_unicode(data: bytes) -> Optional[Decoded]:
    """Steps 1-2 of :func:`decode`: the text of bytes in UTF-8 (ASCII included, with or
    without a byte-order mark, or in ISO-2022 where its escape sequences say so) or in UTF-16
    with a byte-order mark; ``None`` when they are not valid in it.

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
    iso2022 = decode_iso2022(body) if encoding == "utf-8" and not skipped else None
    return iso2022 or Decoded(text, encoding, 1.0), None


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


def detect_encoding(data: bytes) -> Optional[Tuple[str, float]]:
    """The legacy encoding of ``data`` and its confidence (see :class:`Decoded`), or ``None``
    when no encoding of :data:`LEGACY_ENCODINGS` reads it as text.

    Of the readings within :data:`CHAOS_MARGIN` of the least mojibake and
    :data:`COHERENCE_MARGIN` of the best language fit, the encoding listed first in
    :data:`LEGACY_ENCODINGS` wins. Deterministic: charset-normalizer samples fixed positions.
    """
    # A core dependency, imported on first use: most documents are UTF-8 and never need it.
    from charset_normalizer import from_bytes

    # Text in a CJK encoding puts two bytes of 0x80 and above side by side in nearly every
    # character (both bytes in EUC and GBK, Shift-JIS hiragana and most kanji). Where every
    # such byte stands alone between ASCII bytes and is a letter or sign of the Latin code
    # pages (0xA0 and above), as accented letters in Latin text are, a CJK reading would pair
    # each with the ASCII letter after it (K\xe4mpf as K舂pf): only single-byte code pages are
    # considered. Shift-JIS katakana (lead byte 0x83, trail often ASCII) keeps its reading.
    lone = _NOT_LONE_LATIN.search(data) is None
    encodings = [e for e in LEGACY_ENCODINGS if not (lone and e in MULTI_BYTE_ENCODINGS)]
    matches = list(from_bytes(data, cp_isolation=encodings))
    if not matches:
        return None
    # Candidates: the readings nearly as free of mojibake as the cleanest; of them, those
    # that read nearly as much like a known language as the most coherent one. Readings
    # charset-normalizer merged into one match give the same text; several finalists are
    # readings that differ, and the most used of their encodings is taken.
    cleanest = min(m.chaos for m in matches)
    candidates = [m for m in matches if m.chaos <= cleanest + CHAOS_MARGIN]
    coherent = max(m.coherence for m in candidates)
    finalists = [m for m in candidates if m.coherence >= coherent - COHERENCE_MARGIN]
    rank = {name: k for k, name in enumerate(LEGACY_ENCODINGS)}
    pick = min(((rank[name], name, m) for m in finalists for name in m.could_be_from_charset if name in rank),
               default=None, key=lambda item: item[0])
    if pick is None:
        return None
    _, encoding, match = pick
    return codecs.lookup(encoding).name, round((1.0 - match.chaos) / _readings(data, finalists), 3)


def _readings(data: bytes, finalists) -> int:
    """How many different texts the finalists' encodings make of ``data``."""
    if len(finalists) == 1 or len(data) < _MERGED_BELOW:
        return len(finalists)  # charset-normalizer merged the encodings that give one text
    texts = set()
    for match in finalists:  # one text at a time: only its digest is kept
        texts.add(hashlib.sha256(data.decode(match.encoding, errors="replace").encode("utf-8")).digest())
    return len(texts)


def decode(data: bytes, *, uri: str = "", document_id: Optional[str] = None, errors: str = "strict") -> Decoded:
    """Decode a document's bytes: byte-order mark, else UTF-8, else the detected legacy encoding.

    Args:
        data: Raw bytes.
        uri: For error messages.
        document_id: For error messages.
        errors: ``"strict"`` (default): bytes no encoding fits fail the document;
            ``"replace"``: they are decoded as UTF-8 with U+FFFD, counted in ``replacements``.

    Returns:
        The text with its encoding and confidence (see :class:`Decoded`).

    Raises:
        DecodeError: under ``errors="strict"``, bytes that are neither valid in the encoding
            their byte-order mark names, nor UTF-8, nor text in a legacy encoding; the
            message names the first invalid byte's offset.
    """
    _check_policy(errors)
    decoded, first = _as_unicode(data)
    if decoded is not None:
        return decoded
    encoding, body, skipped = _declared(data)
    offset, sequence = first.start + skipped, body[first.start:first.end]
    damaged = skipped == 0 and encoding == "utf-8" and damaged_utf8(body)
    detected = detect_encoding(body) if skipped == 0 and encoding == "utf-8" and not damaged else None
    if detected is not None:
        try:
            return Decoded(body.decode(detected[0]), *detected)
        except UnicodeDecodeError:  # a large file: detection sampled it and the rest does not fit
            pass
    if errors == "strict":
        invalid = f"invalid {encoding.upper()} at byte offset {offset} ({sequence!r}: {first.reason})"
        if encoding != "utf-8" or skipped:
            why = f"{invalid}, the encoding its byte-order mark names; fix the file"
        elif damaged:
            why = f"{invalid} in a file that is otherwise UTF-8; fix the file"
        else:
            why = (f"not UTF-8 (byte offset {offset}: {sequence!r}, {first.reason}) and not text in any legacy "
                   "encoding charset-normalizer knows; convert it to UTF-8")
        raise DecodeError(f"{why} or run with decode_errors='replace' to keep it with U+FFFD replacements",
                          document_id=document_id, uri=uri)
    text, replaced = _replaced(body, encoding)
    return Decoded(text, encoding, 0.0, replaced)
