"""Token indexing: a text encoded once with a tiktoken encoding, and exact token windows.

:class:`TokenIndex` maps token boundaries to ``str`` offsets and knows which boundaries are
boundaries of tiktoken's pre-tokenizer pieces: a token that starts with a space and an ASCII
letter always begins a piece, in every OpenAI encoding and in every string that holds that
space and letter. That makes two things cheap:

* a span whose ends sit on such boundaries tokenizes on its own into exactly its slice of
  the document's tokens (no second encode), and
* any span's own token count is the document's tokens between its first and last such
  boundary plus two short encodes of its head and tail (:meth:`TokenIndex.count`).

:func:`token_windows` cuts a span into windows that end, where they can, on such
boundaries, so most windows' counts are their slice counts; any other window is counted
exactly with :meth:`TokenIndex.count` and shrunk until it fits. The window size is a hard
ceiling on each window's own token count either way.

Example:
    >>> from beam_chunking.sizing import load_encoding
    >>> enc = load_encoding("cl100k_base")
    >>> text = "one two three " * 20
    >>> all(n <= 8 for _, _, n in token_windows(enc, text, 0, len(text), 8, 2))
    True
"""
from __future__ import annotations

import threading
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from beam_chunking.text.pieces import check_piece_lengths
from beam_chunking.text.spans import skip_space, trim_end


_LOCK = threading.Lock()
_TABLES: Dict[str, "_Tables"] = {}

# Per-token flags.
_GOOD = 1  # starts with b" " + an ASCII letter: always the first token of a pre-tokenizer piece
_SOFT = 2  # starts with ASCII whitespace
_ENDS_WS = 4  # ends with ASCII whitespace, or with a non-ASCII byte (it may end NBSP & co.)
_STARTS_CHAR = 8  # its first byte begins a UTF-8 character (the boundary before it is one)
# Bits 4-5: the class of its first character; bits 6-7: that of its last (see _edge_classes).
_FIRST_SHIFT, _LAST_SHIFT = 4, 6
_WS = b" \n\t\r"

#: Code points that are letters (``\\p{L}``) in every Unicode version since their block was
#: added: ASCII letters, CJK ideographs (URO as of 1.1, Extension A), hiragana and katakana
#: letters, Hangul syllables. Inclusive ranges.
_LETTER_RANGES = ((0x41, 0x5A), (0x61, 0x7A), (0x3041, 0x3094), (0x30A1, 0x30FA), (0x3400, 0x4DB5),
                  (0x4E00, 0x9FA5), (0xAC00, 0xD7A3))
#: Code points that are never letters: ASCII other than letters, general punctuation, CJK
#: punctuation and brackets, full-width and half-width punctuation. Inclusive ranges.
_NON_LETTER_RANGES = ((0x00, 0x40), (0x5B, 0x60), (0x7B, 0x7F), (0x2010, 0x2027), (0x2030, 0x205E),
                      (0x3000, 0x3004), (0x3008, 0x3011), (0x3014, 0x301F), (0xFF01, 0xFF0F),
                      (0xFF1A, 0xFF20), (0xFF3B, 0xFF40), (0xFF5B, 0xFF65))
#: Character classes in :class:`_Tables`: ``_CUT`` marks a character the token holds only
#: part of, so that the token alone cannot say which it is.
_LETTER, _NON_LETTER, _CUT = 1, 2, 3


def _bmp_table(ranges, value: int) -> np.ndarray:
    """Per BMP code point: ``value`` where it lies in ``ranges``, else 0."""
    out = np.zeros(0x10000, dtype=np.uint8)
    for lo, hi in ranges:
        out[lo:hi + 1] = value
    return out


#: The class of every BMP code point (U+FFFF, a non-character, is neither); 64 KiB.
_CLASS = _bmp_table(_LETTER_RANGES, _LETTER) | _bmp_table(_NON_LETTER_RANGES, _NON_LETTER)


def _char_class(ch: str) -> int:
    """:data:`_LETTER`, :data:`_NON_LETTER`, or 0 (neither) for the character ``ch``."""
    cp = ord(ch)
    return int(_CLASS[cp]) if cp < 0x10000 else 0


def _char_class_of(b: bytes) -> int:
    """The class of the one character encoded by ``b``; 0 for bytes that are not UTF-8
    (a vocabulary may hold such tokens)."""
    try:
        return _char_class(b.decode("utf-8"))
    except (UnicodeDecodeError, TypeError):  # not one valid character
        return 0


def _utf8_length(lead: int) -> int:
    """Bytes of the UTF-8 character that begins with byte ``lead`` (0 for a continuation byte)."""
    return 0 if lead & 0xC0 == 0x80 else 1 if lead < 0x80 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4


def _bits(continuation: bytes, lead_bits: int) -> int:
    """``lead_bits`` followed by the six payload bits of each continuation byte."""
    for x in continuation:
        lead_bits = lead_bits << 6 | x & 0x3F
    return lead_bits


def _edge_classes(b: bytes) -> Tuple[int, int]:
    """Classes of the first and the last character of token bytes ``b``.

    Where the token holds only part of the character, the class is ``_CUT`` if that
    character may matter to :meth:`TokenIndex._letter_ends` and 0 if it cannot: the first
    character may be a non-letter (its first bytes allow a code point in
    :data:`_NON_LETTER_RANGES`), the last one may be a letter (the token holds its last
    bytes only, which never say). A token that begins or ends inside a character gets 0
    there: that boundary is not a character boundary anyway.
    """
    length = _utf8_length(b[0])
    if length == 0:
        first = 0
    elif len(b) >= length:
        first = _char_class_of(b[:length])
    else:  # the lowest and highest code points that begin with these bytes
        bits = _bits(b[1:], b[0] & (0x7F >> length))
        missing = 6 * (length - len(b))
        lo, hi = bits << missing, (bits << missing) | ((1 << missing) - 1)
        first = _CUT if any(lo <= h and r <= hi for r, h in _NON_LETTER_RANGES) else 0
    k = len(b) - 1  # the last character's first byte
    while k > 0 and b[k] & 0xC0 == 0x80:
        k -= 1
    length = _utf8_length(b[k])
    if length == 0:
        last = _CUT
    elif k + length == len(b):
        last = _char_class_of(b[k:])
    else:
        last = 0
    return first, last


class _Tables:
    """What each token id's bytes say, for one encoding (built once per process).

    Attributes:
        flags: The ``_GOOD``, ``_SOFT``, ``_ENDS_WS`` and ``_STARTS_CHAR`` bits, and the
            classes of the first and last characters (:func:`_edge_classes`) at
            ``_FIRST_SHIFT`` and ``_LAST_SHIFT``: one gather per document reads them all.
        starts: Characters that begin in the token (bytes that are not UTF-8 continuation
            bytes), so that a boundary's character offset is a sum over the tokens before
            it rather than over the text's bytes.
    """

    def __init__(self, enc):
        n = enc.n_vocab
        tokens = []
        for i in range(n):
            try:
                tokens.append(enc.decode_single_token_bytes(i))
            except KeyError:  # an id the encoding leaves unused: no flags
                tokens.append(b"")
        # The bytes of all tokens in one array: the flags of the ASCII tokens (95% of
        # cl100k) are then a few array operations, not a Python loop.
        lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=n)
        raw = np.frombuffer(b"".join(tokens) + b"\0\0", dtype=np.uint8)
        begin = np.zeros(n, dtype=np.int64)
        np.cumsum(lengths[:-1], out=begin[1:])
        used = lengths > 0
        first, second, last = raw[begin], raw[begin + 1], raw[np.maximum(begin + lengths - 1, 0)]
        is_ws = np.zeros(256, dtype=bool)
        is_ws[list(_WS)] = True
        letter = ((second | 0x20) >= ord("a")) & ((second | 0x20) <= ord("z")) & (lengths > 1)
        flags = np.where(is_ws[first], _SOFT, 0) | np.where((first == 32) & letter, _GOOD, 0)
        flags |= np.where(is_ws[last] | (last >= 0x80), _ENDS_WS, 0)
        flags |= np.where(first & 0xC0 != 0x80, _STARTS_CHAR, 0)
        flags |= (_CLASS[first].astype(np.int64) << _FIRST_SHIFT) | (_CLASS[last].astype(np.int64) << _LAST_SHIFT)
        # Per-token sums and maxima over the bytes. The first padding byte stays, as a
        # sentinel that adds nothing, so that every ``begin`` (an unused last id's too) is an
        # index of the array and each token's range ends where the next one begins.
        body = raw[:-1]
        char_begins = (body & 0xC0) != 0x80
        char_begins[-1] = False
        starts = np.where(used, np.add.reduceat(char_begins, begin), 0)
        # One byte per token where it can hold every count (cl100k's longest token has 128
        # characters); a vocabulary with longer tokens gets two.
        self.starts = starts.astype(np.uint8 if starts.max(initial=0) <= 0xFF else np.uint16)
        non_ascii = np.maximum.reduceat(body, begin) >= 0x80
        self.flags = np.where(used, flags, 0).astype(np.uint8)
        for i in np.flatnonzero(non_ascii & used).tolist():  # their edge characters need decoding
            head, tail = _edge_classes(tokens[i])
            self.flags[i] = int(self.flags[i]) & 0x0F | head << _FIRST_SHIFT | tail << _LAST_SHIFT


#: Per ``last class << 2 | first class`` of the two tokens around a boundary: a letter end
#: for sure, or one that only the characters in the text can tell (a token holds part of
#: one of them).
_PAIR_END = np.zeros(16, dtype=bool)
_PAIR_END[_LETTER << 2 | _NON_LETTER] = True
_PAIR_UNSURE = np.zeros(16, dtype=bool)
for _before in (_LETTER, _CUT):
    for _after in (_NON_LETTER, _CUT):
        _PAIR_UNSURE[_before << 2 | _after] = _CUT in (_before, _after)
del _before, _after


def _tables(enc) -> _Tables:
    """The :class:`_Tables` of ``enc`` (built once per encoding and process)."""
    t = _TABLES.get(enc.name)
    if t is not None:
        return t
    with _LOCK:
        t = _TABLES.get(enc.name)
        if t is None:
            t = _TABLES[enc.name] = _Tables(enc)
        return t


#: Longest head or tail string :meth:`TokenIndex.count_spans` looks up in its cache, and
#: most strings the cache holds before it is emptied.
CACHED_CHARS = 32
CACHE_ENTRIES = 65_536


def encode_span(enc, text: str, start: int, end: int) -> np.ndarray:
    """The tokens of ``text[start:end]``, as :class:`TokenIndex` takes them.

    One call into tiktoken that holds the GIL only to start and to finish, so it runs
    beside a busy Python thread.

    Raises:
        TextTooDense: the span holds a run too long to encode (:mod:`beam_chunking.text.pieces`).
    """
    check_piece_lengths(text, start, end)
    # encode_to_numpy skips the Python list; with no allowed specials, special-token
    # strings are encoded as the ordinary text they are, as encode_ordinary does.
    return enc.encode_to_numpy(text[start:end], allowed_special=set(), disallowed_special=())


class TokenIndex:
    """``text[start:end]`` encoded once, with token-boundary to character-offset maps.

    Args:
        enc: A ``tiktoken.Encoding``.
        text: The document text.
        start: First character of the encoded span.
        end: One past its last character.
        ids: The span's tokens from :func:`encode_span`, when they were encoded already
            (on another thread). Default ``None``: encode the span here.
    """

    def __init__(self, enc, text: str, start: int, end: int, ids: Optional[np.ndarray] = None):
        self.enc = enc
        if ids is None:
            ids = encode_span(enc, text, start, end)
        tables = _tables(enc)
        self.n = len(ids)
        # Character offsets as a sum over tokens (how many characters begin in each): no
        # pass over the text's bytes. A boundary inside a character gets the offset of the
        # character after it.
        coff = np.zeros(self.n + 1, dtype=np.int64)
        # take() rather than fancy indexing: the same values, about half the time.
        np.cumsum(tables.starts.take(ids), dtype=np.int64, out=coff[1:])
        self.coff = coff + start if start else coff
        # Per boundary, the flags of the token after it (none after the last boundary).
        self._nxt = np.zeros(self.n + 1, dtype=np.uint8)
        self._nxt[:-1] = tables.flags.take(ids)
        good = (self._nxt & _GOOD) != 0
        if text.isascii():  # every boundary of ASCII text is a character boundary
            char_ok = np.ones(self.n + 1, dtype=bool)
        else:
            char_ok = (self._nxt & _STARTS_CHAR) != 0
            char_ok[-1] = True
            good &= char_ok
        self.good = good
        # A clean end needs no trimming: its chunk is exactly the slice's tokens. The flags of
        # the token before a boundary are those after the boundary before it.
        clean = good.copy()
        clean[1:] &= (self._nxt[:-1] & _ENDS_WS) == 0
        self.clean = clean
        self._soft: Optional[np.ndarray] = None  # built when a window finds no good end
        self.char_ok = char_ok
        self.start, self.end = start, end
        self._ends: Optional[np.ndarray] = None
        self.has_letter_ends = False
        self._clean_idx = None  # built on the first count(): most windows never need it
        self._index_of: Dict[int, Tuple[np.ndarray, Optional[np.ndarray]]] = {}

    def _letter_ends(self, text: str) -> np.ndarray:
        """Per boundary: it sits between a letter and a character that is not one.

        tiktoken's pre-tokenizer takes a run of letters in one piece (``\\p{L}++``, which
        stops at the first non-letter), and no piece holds a letter followed by a
        non-letter, so such a boundary begins a piece in every string that holds the two
        characters: CJK text has one before each ``。`` and ``、``, where it has no
        space-and-letter token for :meth:`count` to rely on. Only characters whose class
        has not changed since early Unicode versions count (see :data:`_LETTER_RANGES`), so
        the answer never depends on which Unicode tables tiktoken was built with. The
        classes come from the two tokens around the boundary; only where a token holds part
        of the character next to it is that character looked up in the text.
        """
        if self._ends is None:
            ends = np.zeros(self.n + 1, dtype=bool)
            if self.n > 1:
                nxt = self._nxt  # the flags of the token after each boundary
                pair = ((nxt[:-2] >> (_LAST_SHIFT - 2)) & 0b1100) | ((nxt[1:-1] >> _FIRST_SHIFT) & 0b11)
                ends[1:-1] = _PAIR_END[pair]
                unsure = np.flatnonzero(_PAIR_UNSURE[pair] & self.char_ok[1:-1]) + 1
                if len(unsure):
                    # Code points past the BMP (none is in either range) look up U+FFFF: neither.
                    cps = np.frombuffer(text[self.start:self.end].encode("utf-32-le"), dtype=np.uint32)
                    at = self.coff[unsure] - self.start
                    ends[unsure] = ((_CLASS[np.minimum(cps[at - 1], 0xFFFF)] == _LETTER)
                                    & (_CLASS[np.minimum(cps[at], 0xFFFF)] == _NON_LETTER))
                ends &= self.char_ok
            self._ends = ends
        return self._ends

    @property
    def soft(self) -> np.ndarray:
        """Per boundary: the token after it starts with ASCII whitespace (a character boundary)."""
        if self._soft is None:
            self._soft = ((self._nxt & _SOFT) != 0) & self.char_ok
        return self._soft

    def add_letter_ends(self, text: str) -> None:
        """Count letter ends (see :meth:`_letter_ends`) among the ``good`` and ``clean``
        boundaries: they begin a piece in every string too, and end one with no whitespace.

        Text with few space-and-letter tokens (CJK above all) then still has boundaries where
        a window's own count is its slice of the tokens. Found on demand: prose rarely needs
        them, and finding them costs about 3% of the encode on CJK text.
        """
        if not self.has_letter_ends:
            ends = self._letter_ends(text)
            self.good = self.good | ends
            self.clean = self.clean | ends
            self.has_letter_ends = True

    def count(self, text: str, cs: int, ce: int) -> int:
        """Tokens of ``text[cs:ce]`` encoded on its own, with at most two short encodes.

        A boundary before a token that starts with a space and a letter begins a piece in
        any string that holds that space and letter, so inside the chunk the tokens between
        the first such clean boundary ``P`` and the last such boundary ``Q`` are exactly the
        document's. Only the head ``[cs, P)`` and the tail ``[Q, ce)`` are encoded; ``P`` is
        clean (no whitespace before it), so the head ends as it does inside the chunk.

        Args:
            text: The document text this index encodes a span of.
            cs: First character of the counted span (inside the encoded span).
            ce: One past its last character.
        """
        if self._clean_idx is None:
            self.prepare_counts(text)
        a = int(self._clean_idx.searchsorted(self.coff.searchsorted(cs, side="left")))
        b = int(self._good_coff.searchsorted(ce - 1, side="left")) - 1
        if a < len(self._clean_idx) and b >= 0:
            p, q = int(self._clean_idx[a]), int(self._good_idx[b])
            if q >= p and self.coff[p] + 1 < ce:
                cp, cq = int(self.coff[p]), int(self.coff[q])
                head = len(self.enc.encode_ordinary(text[cs:cp])) if cp > cs else 0
                return head + (q - p) + len(self.enc.encode_ordinary(text[cq:ce]))
        return len(self.enc.encode_ordinary(text[cs:ce])) if ce > cs else 0

    def prepare_counts(self, text: str) -> None:
        """Find the boundaries :meth:`count` relies on (done by its first call otherwise)."""
        if self._clean_idx is None:
            if self.has_letter_ends:  # ``clean`` and ``good`` hold them: reuse the windows' indices
                self._clean_idx, self._good_idx = self._index(self.clean), self._index(self.good)
            else:
                ends = self._letter_ends(text)
                self._clean_idx = np.flatnonzero(self.clean | ends)
                self._good_idx = np.flatnonzero(self.good | ends)
            self._good_coff = self.coff[self._good_idx]

    def count_spans(self, text: str, spans: Sequence[Tuple[int, int]],
                    cache: Optional[Dict[str, int]] = None) -> List[int]:
        """:meth:`count` of every span, the boundary searches done for all spans at once.

        Args:
            text: The document text this index encodes a span of.
            spans: ``(start, end)`` spans inside the encoded span.
            cache: Counts of short strings (heads and tails, mostly single words) kept
                between calls by the caller; strings of up to :data:`CACHED_CHARS`
                characters are looked up there first. Default ``None`` (no cache).
        """
        self.prepare_counts(text)
        encode = self.enc.encode_ordinary
        if not spans:
            return []
        cs = np.fromiter((s for s, _ in spans), dtype=np.int64, count=len(spans))
        ce = np.fromiter((e for _, e in spans), dtype=np.int64, count=len(spans))
        n_clean, n_good = len(self._clean_idx), len(self._good_idx)
        if not n_clean or not n_good:
            return [len(encode(text[s:e])) if e > s else 0 for s, e in spans]
        a = self._clean_idx.searchsorted(self.coff.searchsorted(cs, side="left"))
        b = self._good_coff.searchsorted(ce - 1, side="left") - 1
        p = self._clean_idx[np.minimum(a, n_clean - 1)]
        q = self._good_idx[np.maximum(b, 0)]
        cp, cq = self.coff[p], self.coff[q]
        ok = (a < n_clean) & (b >= 0) & (q >= p) & (cp + 1 < ce)

        def short(piece: str) -> int:
            if cache is None or len(piece) > CACHED_CHARS:
                return len(encode(piece))
            n = cache.get(piece)
            if n is None:
                if len(cache) >= CACHE_ENTRIES:
                    cache.clear()
                n = cache[piece] = len(encode(piece))
            return n

        out = []
        for s, e, good, head_end, tail_start, middle in zip(cs.tolist(), ce.tolist(), ok.tolist(), cp.tolist(),
                                                            cq.tolist(), (q - p).tolist()):
            if good:
                out.append((short(text[s:head_end]) if head_end > s else 0) + middle + short(text[tail_start:e]))
            else:
                out.append(len(encode(text[s:e])) if e > s else 0)
        return out

    def piece_start(self, k: int, char: int) -> bool:
        """True when a chunk starting at ``char`` starts exactly at pre-tokenizer piece boundary ``k``."""
        return int(self.coff[k]) == char and (k == 0 or bool(self.good[k]))

    def piece_end(self, k: int, char: int) -> bool:
        """True when a chunk ending at ``char`` ends exactly at piece boundary ``k``."""
        return int(self.coff[k]) == char and (k == self.n or bool(self.good[k]))

    def _index(self, mask: np.ndarray) -> np.ndarray:
        """The boundaries where ``mask`` holds (found once per mask)."""
        got = self._index_of.get(id(mask))
        if got is None or got[0] is not mask or got[1] is None:
            got = self._index_of[id(mask)] = (mask, np.flatnonzero(mask))
        return got[1]

    def _asked(self, mask: np.ndarray) -> Optional[np.ndarray]:
        """:meth:`_index` of ``mask``, or ``None`` the first time ``mask`` is asked about.

        Windows ask about the same masks many times, so their indices pay, but only from
        the second question on: a mask asked once (CJK text has almost no good boundaries
        until its letter ends are added) is searched in the asked range alone.
        """
        got = self._index_of.get(id(mask))
        if got is not None and got[0] is mask:
            return got[1] if got[1] is not None else self._index(mask)
        self._index_of[id(mask)] = (mask, None)
        return None

    def last(self, mask: np.ndarray, lo: int, hi: int) -> int:
        """Largest boundary index in ``[lo, hi]`` where ``mask`` holds, or -1."""
        if _last_set is not None:
            return _last_set(mask, lo, hi)
        return self.indexed_last(mask, lo, hi)

    def first(self, mask: np.ndarray, lo: int, hi: int) -> int:
        """Smallest boundary index in ``[lo, hi]`` where ``mask`` holds, or -1."""
        if _first_set is not None:
            return _first_set(mask, lo, hi)
        return self.indexed_first(mask, lo, hi)

    def indexed_last(self, mask: np.ndarray, lo: int, hi: int) -> int:
        """:meth:`last` in Python and numpy, without the C extension: the mask's index is built
        on its second question and searched from then on."""
        lo = max(lo, 0)  # a slice would count a negative start, or end, from the end
        if hi < lo:
            return -1
        idx = self._asked(mask)
        if idx is None:
            hits = np.flatnonzero(mask[lo:hi + 1])
            return int(hits[-1]) + lo if len(hits) else -1
        k = int(idx.searchsorted(hi, side="right")) - 1
        return int(idx[k]) if k >= 0 and idx[k] >= lo else -1

    def indexed_first(self, mask: np.ndarray, lo: int, hi: int) -> int:
        """:meth:`first` in Python and numpy (see :meth:`indexed_last`)."""
        lo = max(lo, 0)  # a slice would count a negative start, or end, from the end
        if hi < lo:
            return -1
        idx = self._asked(mask)
        if idx is None:
            hits = np.flatnonzero(mask[lo:hi + 1])
            return int(hits[0]) + lo if len(hits) else -1
        k = int(idx.searchsorted(lo, side="left"))
        return int(idx[k]) if k < len(idx) and idx[k] <= hi else -1


try:
    from beam_chunking.text._scan import first_set as _first_set, last_set as _last_set
except ImportError:  # installed without a C compiler: the indexed search serves
    _first_set = _last_set = None

#: Whether :meth:`TokenIndex.first` and :meth:`TokenIndex.last` run in C.
NATIVE_SCAN = _last_set is not None


def token_windows(enc, text: str, start: int, end: int, window: int, overlap: int,
                  encoded: Optional[TokenIndex] = None) -> List[Tuple[int, int, int]]:
    """Cut ``text[start:end]`` into ``(start, end, token_count)`` windows.

    Every window's text, tokenized on its own, has at most ``window`` tokens; consecutive
    windows share about ``overlap`` tokens; no window is empty or whitespace-only; every
    non-whitespace character lies in some window. Requires ``window >= 4`` (one code point
    can take four tokens) and ``0 <= overlap < window``.

    Args:
        enc: A ``tiktoken.Encoding``.
        text: The document text.
        start: First character of the span.
        end: One past its last character.
        window: Most tokens per window, overlap included; at least 4.
        overlap: Tokens shared by consecutive windows, about; ``0 <= overlap < window``.
        encoded: An encoding of a larger span that contains ``[start, end)`` (a sentence of
            an already encoded section); the span is then not encoded again. Default
            ``None`` (encode the span).

    Returns:
        ``(start, end, own token count)`` windows in order; ``[]`` for a blank span.
    """
    s = skip_space(text, start, end)
    e = trim_end(text, s, end)
    if s >= e:
        return []
    if encoded is None:
        # A span encoded on its own is its own tokenization: its count is its length, and a
        # span that fits one window needs no boundary tables (most documents of a few KB).
        ids = encode_span(enc, text, s, e)
        if len(ids) <= window:
            return [(s, e, len(ids))]
        tk = TokenIndex(enc, text, s, e, ids=ids)
    else:
        tk = encoded
        total = tk.count(text, s, e)
        if total <= window:
            return [(s, e, total)]
    first = int(tk.coff.searchsorted(s, side="left"))
    last = int(tk.coff.searchsorted(e, side="right")) - 1
    if last - first < 2 and encoded is not None:
        return token_windows(enc, text, s, e, window, overlap)  # the span sits inside a token
    out: List[Tuple[int, int, int]] = []
    i, cs, prev_j = first, s, first
    exact_start = tk.piece_start(first, s)
    end_exact = tk.piece_end(last, e)
    while True:
        hi = min(i + window, last)
        lo = max(prev_j + 1, i + 1)
        # Both ends on piece boundaries: the rest's own count is its slice of the tokens.
        if hi == last and (last - i if exact_start and end_exact else tk.count(text, cs, e)) <= window:
            j, ce, exact_end = last, e, end_exact
        else:
            # Prefer an end that needs no trimming if it keeps the window at least half full.
            j = tk.last(tk.clean, max(lo, i + window // 2), min(hi, last - 1))
            if j < 0:
                j = tk.last(tk.good, lo, min(hi, last - 1))
            if j < 0 and not tk.has_letter_ends:
                tk.add_letter_ends(text)
                j = tk.last(tk.clean, max(lo, i + window // 2), min(hi, last - 1))
                if j < 0:
                    j = tk.last(tk.good, lo, min(hi, last - 1))
            exact_end = j > 0
            if not exact_end:
                j = tk.last(tk.soft, lo, min(hi, last - 1))
            if j < 0:
                j = tk.last(tk.char_ok, lo, min(hi, last - 1))
            if j < 0:
                if i < prev_j:  # the overlap leaves no room for new content: drop it
                    i, cs = prev_j, int(tk.coff[prev_j])
                    exact_start = tk.piece_start(i, cs)
                    continue
                # Every token in reach straddles two characters (Hangul can merge the last
                # byte of one syllable with the first of the next), so no token boundary is
                # a character boundary: cut by characters up to the next one that is.
                k = tk.first(tk.char_ok, lo, last)
                ck = int(tk.coff[k]) if k >= 0 else e
                out.extend(_by_characters(tk.enc, text, cs, ck, window))
                if k < 0 or k == last:
                    return out
                prev_j = i = k
                cs = ck
                exact_start = tk.piece_start(i, cs)
                continue
            ce = int(tk.coff[j])
        count, j, ce_trim = _fit(tk, text, cs, ce, i, j, exact_start and exact_end, window, lo)
        if count > window or j <= prev_j and j != last:
            if i < prev_j:
                i, cs = prev_j, int(tk.coff[prev_j])
                exact_start = tk.piece_start(i, cs)
                continue
            if encoded is not None:
                # The span starts inside a token of the larger encoding (a flag emoji's bytes
                # merged with the letters before it): cut it on its own encoding instead.
                return token_windows(enc, text, s, e, window, overlap)
            raise AssertionError("token window could not be fitted")  # pragma: no cover
        if ce_trim > cs and skip_space(text, cs, ce_trim) < ce_trim:
            out.append((cs, ce_trim, count))
        if ce_trim >= e or (j == last and ce == e):
            return out
        prev_j = j
        nxt, exact_start = j, None
        if overlap:
            g = tk.first(tk.good, max(j - overlap, i + 1), j - 1)
            if g > 0:
                nxt, exact_start = g, True  # a good boundary begins a piece
            else:
                c = tk.first(tk.char_ok, max(j - overlap, i + 1), j - 1)
                if c > 0:
                    nxt = c
        i, cs = nxt, int(tk.coff[nxt])
        if exact_start is None:
            exact_start = tk.piece_start(i, cs)


def _by_characters(enc, text: str, cs: int, ce: int, window: int) -> List[Tuple[int, int, int]]:
    """Windows of ``text[cs:ce]`` grown a character at a time, each counted on its own.

    One code point is at most four tokens (four UTF-8 bytes), so ``window >= 4`` always fits one.
    """
    out: List[Tuple[int, int, int]] = []
    while cs < ce:
        end, count = cs + 1, len(enc.encode_ordinary(text[cs:cs + 1]))
        while end < ce:
            longer = len(enc.encode_ordinary(text[cs:end + 1]))
            if longer > window:
                break
            end, count = end + 1, longer
        trimmed = trim_end(text, cs, end)
        if skip_space(text, cs, trimmed) < trimmed:
            out.append((cs, trimmed, count if trimmed == end else len(enc.encode_ordinary(text[cs:trimmed]))))
        cs = end
    return out


def _fit(tk: TokenIndex, text: str, cs: int, ce: int, i: int, j: int, exact: bool, window: int, floor: int):
    """Return ``(own token count, end boundary, trimmed end char)`` for the window ``[cs, ce)``."""
    ce_trim = trim_end(text, cs, ce)
    if exact and ce_trim == ce and j > i:  # nothing trimmed: the slice's tokens are the chunk's own
        return j - i, j, ce
    if exact:
        # Both ends on pre-tokenizer piece boundaries: the slice is the chunk's own tokenization.
        # Trailing whitespace removed at a token boundary removes exactly those tokens (BPE never
        # merged across that boundary). Boundaries inside a multi-byte character share the
        # character's offset, so take the last boundary at that offset, a character boundary.
        k = int(tk.coff.searchsorted(ce_trim, side="right")) - 1
        if i < k <= j and int(tk.coff[k]) == ce_trim and tk.char_ok[k]:
            return k - i, j, ce_trim
    count = tk.count(text, cs, ce_trim)
    while count > window:
        j = _shrink(tk, j, count - window, floor)
        if j <= i:
            break
        ce_trim = trim_end(text, cs, int(tk.coff[j]))
        count = tk.count(text, cs, ce_trim)
    return count, j, ce_trim


def _shrink(tk: TokenIndex, j: int, excess: int, floor: int) -> int:
    """Move end boundary ``j`` back by at least ``excess`` tokens to a character boundary."""
    k = j - max(1, excess)
    while k > floor and not tk.char_ok[k]:
        k -= 1
    return k
