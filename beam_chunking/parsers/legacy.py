"""Which legacy encoding bytes that are not UTF-8 are in, or which ones they are ambiguous between.

:func:`detect` is step 3 of :func:`beam_chunking.parsers.decode.decode`. It weighs the
readings of the bytes in the encodings browsers decode (:data:`LEGACY_ENCODINGS`) and a few
rare CJK ones (:data:`RARE_ENCODINGS`) with
`charset-normalizer <https://github.com/jawah/charset_normalizer>`_ (how little mojibake, how
much of a known language each shows) and with rules of the encodings themselves: a
multi-byte encoding must decode every byte, GB18030 (which decodes nearly anything) must read
mostly common characters, a reading with user-defined characters loses to one without, Big5
is not read as Shift-JIS half-width kana glued to ASCII letters, and EUC-KR's make-up
sequences are composed, not shown as loose jamo.
Where several readings differ and none is clearly right, it names them instead of guessing:
a clear failure beats a wrong text.

Example:
    >>> detect("日本語のテキストファイルは、長い間シフトJISで保存されてきました。".encode("shift_jis")).encoding
    'cp932'
"""
from __future__ import annotations

import codecs
import hashlib
import re
from typing import List, NamedTuple, Optional, Tuple

#: The legacy encodings :func:`detect` considers first, roughly in their order of use on the web
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

#: Legacy encodings that are candidates only where no multi-byte encoding of
#: :data:`LEGACY_ENCODINGS` decodes every byte: the JIS X 0213 forms of Shift-JIS and EUC-JP
#: (supersets of JIS X 0208 whose extra characters windows-31j and EUC-JP reject) and Korean
#: Johab. Rare, and on short inputs they tie with the common ones (Big5 許功蓋 is valid Johab).
RARE_ENCODINGS: Tuple[str, ...] = ("shift_jis_2004", "euc_jis_2004", "johab")

#: The encodings of :data:`LEGACY_ENCODINGS` and :data:`RARE_ENCODINGS` that write a character
#: in two bytes or more, and EUC-KR (see :data:`MAKE_UP_SEQUENCE`). They are candidates only
#: where they decode every byte (strictly: a multi-byte encoding's rules leave most wrong
#: bytes invalid).
MULTI_BYTE_ENCODINGS = frozenset({"cp932", "euc_jp", "gb18030", "cp949", "big5hkscs", *RARE_ENCODINGS, "euc_kr"})
#: A KS X 1001 make-up sequence: the Hangul filler and three jamo (initial, medial, final, a
#: filler for none) that EUC-KR composes into a syllable outside its 2,350 precomposed ones.
#: windows-949 (and browsers) leave them four characters, a filler and three loose jamo, so
#: bytes that hold one are read in EUC-KR, where it decodes the bytes, and never in windows-949.
MAKE_UP_SEQUENCE = re.compile(rb"\xa4\xd4(?:\xa4[\xa1-\xfe]){3}")
#: Least share of a GB18030 reading's non-ASCII characters that must be in GB2312 (the 6,763
#: common hanzi, kana, punctuation, Latin, Greek and Cyrillic letters) for GB18030 to be a
#: candidate. GB18030 gives a character to nearly every pair of bytes 0x81 and above, so its
#: validity says little: Big5, Shift-JIS and Big5-HKSCS bytes read in it fall mostly in
#: GBK's rare extension rows (Python's test files: 0-38% in GB2312), real GBK text mostly in
#: GB2312 (81-100%, even the test files written to hold rare characters).
GB2312_SHARE = 0.5
#: Most mojibake (charset-normalizer's chaos) a single-byte reading may show when a
#: multi-byte encoding also decodes every byte: above it the bytes are ambiguous (a short
#: Big5-HKSCS string reads as Arabic and Latin letters in windows-1256 at 0.19). Right
#: single-byte readings of text score 0-0.05.
SINGLE_BYTE_DOUBT = 0.1
#: Least language fit (charset-normalizer's coherence, 0-1) of a single-byte reading that wins
#: over an equally clean multi-byte one: Russian, Polish read right fit 0.6-0.75, Korean bytes
#: read as Thai 0.13.
LANGUAGE_FIT = 0.3
#: Least characters of two bytes or more for a multi-byte reading that charset-normalizer
#: finds too messy to be taken anyway, when it is the only strict reading (see :func:`detect`).
MESSY_MIN_CHARACTERS = 16
#: The confidence of such a reading: the encoding alone decodes the bytes, the text is unusual.
MESSY_CONFIDENCE = 0.5
#: How many bytes from the start those readings are judged on again (in pure Python).
MESSY_SAMPLE = 64 * 1024
#: Most share of a Shift-JIS reading's half-width katakana that may be glued to an ASCII letter
#: or sign after it. Big5 and GBK lead bytes 0xA1-0xDF are Shift-JIS's one-byte half-width
#: kana, and their trail bytes 0x40-0x7E ASCII, so Big5 read as Shift-JIS shows "ｳrｸｹ｡B･y"
#: (charset-normalizer finds no mojibake in it); half-width katakana text ("ﾃｽﾄ,100") is
#: followed by more kana, digits, spaces and punctuation.
GLUED_KANA_SHARE = 0.25
# charset-normalizer's default most mojibake for a reading to be text.
_THRESHOLD = 0.2
# What keeps CJK readings among the candidates (see detect): two bytes of 0x80 and
# above side by side; one below 0xA0 (no letter in the Latin code pages; Shift-JIS's kana
# lead byte, 0x83, whose trail byte is often ASCII); or one followed by a sign that follows no
# accented letter in text but is a common trail byte (Big5's and Shift-JIS's 0x5C, "\").
_NOT_LONE_LATIN = re.compile(rb"[\x80-\xff]{2}|[\x80-\x9f]|[\x80-\xff][@\[\\\]^_`{|}~]")

#: How much more mojibake (charset-normalizer's chaos, 0-1) than the cleanest reading a
#: reading may show and still be a candidate: on a paragraph, the right code page often
#: scores about 0.01 worse than a wrong one of the same script (windows-1250 for French).
CHAOS_MARGIN = 0.02
#: How much less coherent (charset-normalizer's language fit, 0-1) than the most coherent
#: candidate a candidate may be and still tie with it.
COHERENCE_MARGIN = 0.02

#: charset-normalizer merges encodings that give the same text only for inputs below this
#: size in bytes (its TOO_BIG_SEQUENCE, 10 MB); above it :func:`detect` compares them.
_MERGED_BELOW = 10_000_000


def detect_encoding(data: bytes) -> Optional[Tuple[str, float]]:
    """The legacy encoding of ``data`` and its confidence (see
    :class:`~beam_chunking.parsers.decode.Decoded`), or ``None`` when no encoding reads it as
    text or several read it as different text (see :func:`detect`)."""
    detected = detect(data)
    return None if detected.encoding is None else (detected.encoding, detected.confidence)


class Detection(NamedTuple):
    """What :func:`detect` found.

    Attributes:
        encoding: Python codec name, or ``None`` when no encoding or several fit.
        confidence: As :attr:`~beam_chunking.parsers.decode.Decoded.confidence`; 0.0 when
            ``encoding`` is ``None``.
        candidates: When several encodings read the bytes as different text and none is
            clearly right, their names (most used first); else empty.
    """

    encoding: Optional[str]
    confidence: float = 0.0
    candidates: Tuple[str, ...] = ()


def detect(data: bytes) -> Detection:
    """The legacy encoding of bytes that are not UTF-8, or the encodings they are ambiguous between.

    1. Candidates: the single-byte code pages of :data:`LEGACY_ENCODINGS`, and the multi-byte
       encodings that decode every byte, less implausible readings: none when the non-ASCII
       bytes all stand alone (accented letters in Latin text); GB18030 only when
       :data:`GB2312_SHARE` of its characters are common ones; EUC-KR in place of windows-949
       where a :data:`MAKE_UP_SEQUENCE` is; Shift-JIS not where its half-width katakana
       are glued to ASCII letters (:data:`GLUED_KANA_SHARE`); none that reads characters of
       the Private Use Area where another reads none.
    2. charset-normalizer scores them; of the readings within :data:`CHAOS_MARGIN` of the least
       mojibake and :data:`COHERENCE_MARGIN` of the best language fit, the encoding listed
       first wins. :data:`RARE_ENCODINGS` are candidates only where no other multi-byte
       encoding decodes every byte.
    3. Ambiguous (no encoding, the candidates named) when those finalists read the bytes as
       different texts and one of them is multi-byte (whole scripts differ, not one
       accented letter); or when a single-byte reading wins while a multi-byte encoding
       decodes every byte, and it shows more mojibake than :data:`SINGLE_BYTE_DOUBT` or, against
       an equally clean multi-byte reading, fits a language less than :data:`LANGUAGE_FIT`.
    4. When charset-normalizer finds every reading too messy, the multi-byte readings are
       scored again on the first :data:`MESSY_SAMPLE` bytes as a whole; one clean and clearly
       the cleanest is taken. Else the one multi-byte encoding other than GB18030 that
       decodes every byte is taken (confidence :data:`MESSY_CONFIDENCE`) if it reads
       :data:`MESSY_MIN_CHARACTERS` multi-byte characters; several are ambiguous.

    Deterministic: charset-normalizer samples fixed positions.
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
    multi = [] if lone else _multi_byte(data)
    # The rare encodings are candidates only where no common multi-byte one decodes the bytes.
    valid = multi
    multi = [e for e in valid if e not in RARE_ENCODINGS] or valid
    encodings = [e for e in _RANKED if e not in MULTI_BYTE_ENCODINGS or e in multi]
    matches = list(from_bytes(data, cp_isolation=encodings))
    if not matches:
        return _messy(data, multi, valid)
    # Candidates: the readings nearly as free of mojibake as the cleanest; of them, those
    # that read nearly as much like a known language as the most coherent one. Readings
    # charset-normalizer merged into one match give the same text; several finalists are
    # readings that differ, and the most used of their encodings is taken.
    cleanest = min(m.chaos for m in matches)
    candidates = [m for m in matches if m.chaos <= cleanest + CHAOS_MARGIN]
    coherent = max(m.coherence for m in candidates)
    finalists = [m for m in candidates if m.coherence >= coherent - COHERENCE_MARGIN]
    rank = {name: k for k, name in enumerate(_RANKED)}
    named = sorted({name for m in finalists for name in m.could_be_from_charset if name in rank}, key=rank.get)
    if not named:
        return Detection(None)
    encoding, readings = named[0], _readings(data, finalists)
    match = min((m for m in finalists if encoding in m.could_be_from_charset), key=lambda m: m.chaos)
    chaos = match.chaos
    if readings > 1 and any(name in MULTI_BYTE_ENCODINGS for name in named):
        return _ambiguous(named + multi)
    rival = any(m.encoding in MULTI_BYTE_ENCODINGS and m.chaos <= chaos + CHAOS_MARGIN for m in matches)
    if encoding not in MULTI_BYTE_ENCODINGS and multi and (
            chaos > SINGLE_BYTE_DOUBT or (rival and match.coherence < LANGUAGE_FIT)):
        return _ambiguous([encoding] + multi)
    return Detection(codecs.lookup(encoding).name, round((1.0 - chaos) / readings, 3))


_PRIVATE_USE = re.compile("[\ue000-\uf8ff]")
_SHIFT_JIS = frozenset({"cp932", "shift_jis_2004"})
_HALF_WIDTH_KANA = re.compile("[\uff61-\uff9f]")
_GLUED_KANA = re.compile("[\uff61-\uff9f][A-Za-z@\\[\\]^_`{|}~]")
# Every encoding detect considers, the most used first (EUC-KR stands in for windows-949).
_KOREAN = LEGACY_ENCODINGS.index("cp949") + 1
_RANKED: Tuple[str, ...] = (*LEGACY_ENCODINGS[:_KOREAN], "euc_kr", *LEGACY_ENCODINGS[_KOREAN:], *RARE_ENCODINGS)


def _multi_byte(data: bytes) -> List[str]:
    """The multi-byte encodings, most used first, that decode every byte of ``data`` into a
    plausible reading (see :func:`detect`, step 1)."""
    make_up = MAKE_UP_SEQUENCE.search(data) is not None
    found, private = [], set()
    for encoding in _RANKED:
        if encoding not in MULTI_BYTE_ENCODINGS or encoding == ("cp949" if make_up else "euc_kr"):
            continue
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        if (encoding != "gb18030" or _gb2312_share(text) >= GB2312_SHARE) and not (
                encoding in _SHIFT_JIS and _glued_kana(text)):
            found.append(encoding)
            if _PRIVATE_USE.search(text):
                private.add(encoding)
    # User-defined characters (windows-31j's rows 0xF0-0xF9, GB18030's and Big5's user areas)
    # are where another encoding's characters fall when read in the wrong one: Shift_JIS-2004's
    # 丂 (F0 41) is windows-31j's U+E001.
    return [e for e in found if e not in private] or found


def _glued_kana(text: str) -> bool:
    """Whether a Shift-JIS reading shows :data:`GLUED_KANA_SHARE` of its half-width katakana
    glued to an ASCII letter or sign after it."""
    kana = len(_HALF_WIDTH_KANA.findall(text))
    return kana > 0 and len(_GLUED_KANA.findall(text)) > GLUED_KANA_SHARE * kana


def _gb2312_share(text: str) -> float:
    """The share of ``text``'s non-ASCII characters that GB2312 has (C-speed counts)."""
    ascii_count = len(text.encode("ascii", errors="ignore"))
    wide = len(text) - ascii_count
    return 1.0 if not wide else (len(text.encode("gb2312", errors="ignore")) - ascii_count) / 2 / wide


def _messy(data: bytes, multi: List[str], valid: List[str]) -> Detection:
    """Step 4 of :func:`detect`: charset-normalizer found no reading clean (it judges a long
    text by its first chunk first, so a paragraph opening with ``GB2312、GBK`` fails there).
    ``multi`` are the multi-byte candidates, ``valid`` them and the rare ones that decode."""
    from charset_normalizer.md import mess_ratio

    texts = {e: _digest(data, e) for e in valid}  # each decodes every byte (see _multi_byte)
    same = {text: e for e, text in reversed(texts.items())}  # the most used encoding of each text
    valid = [e for e in valid if same[texts[e]] == e]
    multi = [e for e in multi if e in valid] or valid
    chaos = {e: mess_ratio(data[:MESSY_SAMPLE].decode(e, errors="ignore"), 1.0) for e in valid}
    clean = sorted(valid, key=chaos.get)
    best = min(multi, key=chaos.get, default=None)
    if best is not None and chaos[best] <= _THRESHOLD and all(chaos[e] > chaos[best] + CHAOS_MARGIN
                                                              for e in valid if e != best):
        return Detection(codecs.lookup(best).name, round(1.0 - chaos[best], 3))
    strict = [e for e in valid if e != "gb18030"]  # GB18030 decodes nearly any such bytes
    if len(strict) > 1 or (strict and chaos[strict[0]] <= _THRESHOLD):
        return _ambiguous(clean)
    if strict and len(data) - texts[strict[0]][1] >= MESSY_MIN_CHARACTERS:
        return Detection(codecs.lookup(strict[0]).name, MESSY_CONFIDENCE)
    return _ambiguous(clean) if len(clean) > 1 else Detection(None)


def _digest(data: bytes, encoding: str) -> Tuple[bytes, int]:
    """``(SHA-256 of the text, its length)``: a large file's texts are not all kept at once."""
    text = data.decode(encoding)
    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).digest(), len(text)


def _ambiguous(encodings: List[str]) -> Detection:
    return Detection(None, 0.0, tuple(dict.fromkeys(codecs.lookup(e).name for e in encodings)))


def _readings(data: bytes, finalists) -> int:
    """How many different texts the finalists' encodings make of ``data``."""
    if len(finalists) == 1 or len(data) < _MERGED_BELOW:
        return len(finalists)  # charset-normalizer merged the encodings that give one text
    texts = set()
    for match in finalists:  # one text at a time: only its digest is kept
        texts.add(hashlib.sha256(data.decode(match.encoding, errors="replace").encode("utf-8")).digest())
    return len(texts)
