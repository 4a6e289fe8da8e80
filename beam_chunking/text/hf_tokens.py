"""Token windows and exact span counts with a Hugging Face tokenizer (an embedding model's own).

The HF ``tokenizers`` library gives each token's offsets in code points of the string it was
given, also when its normaliser changes the text (BERT lowercases ``"İ"`` into two code
points, drops control characters, splits CJK ideographs), so token starts map to ``str``
offsets directly. Unlike tiktoken's, a span's own tokens are not always its slice of the
document's tokens (WordPiece splits a word cut in two differently; a dropped control
character joins its neighbours), so every count this module returns is the count of the span
encoded on its own, and the document's encoding only proposes where to cut.

Counts include the special tokens the tokenizer adds around one sequence (``specials``:
``[CLS]`` and ``[SEP]`` for BERT models, 2), because that is what the model sees: a window of
``window`` tokens fits a model whose ``max_tokens`` is ``window``.

Counting is fast where a cut is known to begin a pre-tokenizer piece in any string
(``piece_starts``, see :func:`piece_rule`): the span's own tokens are then its slice of the
document's tokens between its first and last such cut, plus two short encodes of its head
and tail. Elsewhere the span is encoded whole.

Example:
    >>> from tokenizers import Tokenizer  # doctest: +SKIP
    >>> index = HFTokenIndex(Tokenizer.from_file("tokenizer.json"), 2, None, text, 0, len(text))  # doctest: +SKIP
    >>> all(n <= 64 for _, _, n in hf_token_windows(index, text, 0, len(text), 64, 8))  # doctest: +SKIP
    True
"""
from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from beam_chunking.errors import ChunkingError
from beam_chunking.text.pieces import check_piece_lengths
from beam_chunking.text.spans import skip_space, trim_end

#: Pre-tokenizers that split at every whitespace character and never put whitespace inside a
#: token: a token right after ASCII whitespace begins a word, whose tokens do not depend on
#: anything outside it.
_SPACE_SPLITTERS = {"BertPreTokenizer", "Whitespace", "WhitespaceSplit"}
#: Normalisers that change each character on its own (decomposition, case, accents), never
#: across a whitespace character.
_LOCAL_NORMALISERS = {"BertNormalizer", "Lowercase", "NFD", "NFKD", "NFC", "NFKC", "StripAccents"}
#: ASCII whitespace: every whitespace-splitting pre-tokenizer splits there.
_ASCII_SPACES = np.array([0x09, 0x0A, 0x0D, 0x20], dtype=np.uint32)
#: Code points ``str.isspace`` holds for; only a preference for where windows end.
_SPACES = np.array([0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x1C, 0x1D, 0x1E, 0x1F, 0x20, 0x85, 0xA0, 0x1680,
                    *range(0x2000, 0x200B), 0x2028, 0x2029, 0x202F, 0x205F, 0x3000], dtype=np.uint32)
#: Span counts kept per index (a structural section asks for the same spans again).
_MEMO = 4096


def piece_rule(tokenizer: Any) -> Optional[str]:
    """How to recognise a token that begins a pre-tokenizer piece in any string, or ``None``.

    ``"space"``: the tokenizer splits at whitespace (BERT, ``Whitespace``) after a
    character-local normaliser; a token after an ASCII space, tab or line break begins one.
    ``"bytelevel"``: GPT-2's byte-level pre-tokenizer with its regex; a token that starts with
    a space followed by an ASCII letter begins one (the regex's `` ?\\p{L}+``). Any other
    tokenizer gets ``None``: every span is then encoded whole.
    """
    try:
        spec = json.loads(tokenizer.to_str())
    except Exception:  # a tokenizer that cannot describe itself: no fast path
        return None

    def kinds(node: Any, key: str) -> List[str]:
        if not node:
            return []
        if node.get("type") == "Sequence":
            return [k for sub in node.get(key, []) for k in kinds(sub, key)]
        return [node.get("type", "")]

    normalisers = kinds(spec.get("normalizer"), "normalizers")
    if any(n not in _LOCAL_NORMALISERS for n in normalisers):
        return None
    pre = spec.get("pre_tokenizer") or {}
    pres = kinds(pre, "pretokenizers")
    if pres and all(p in _SPACE_SPLITTERS for p in pres):
        return "space"
    if pres == ["ByteLevel"] and pre.get("use_regex", True) and not normalisers:
        return "bytelevel"
    return None


class HFTokenIndex:
    """``text[start:end]`` encoded once with a HF tokenizer; exact own counts of its spans.

    Args:
        tokenizer: A ``tokenizers.Tokenizer`` with truncation and padding off.
        specials: Special tokens the model adds around one sequence (counted in every
            non-empty span's count).
        rule: :func:`piece_rule` of the tokenizer (``None``: no fast path).
        text: The document text.
        start: First character of the encoded span.
        end: One past its last character.
        encoding: The tokenizer's ``Encoding`` of ``text[start:end]`` when the caller has it.
            Default ``None`` (encode it here).

    Attributes:
        n: Tokens in the span (special tokens not included).
        coff: ``n + 1`` non-decreasing character offsets: where token ``k`` starts, then ``end``.
        cut: Whether a chunk may end before token ``k`` (it starts a new character and the
            token before it has ended).
        clean: A cut at a word boundary (whitespace on either side).
    """

    def __init__(self, tokenizer: Any, specials: int, rule: Optional[str], text: str, start: int, end: int,
                 encoding: Any = None):
        self.tokenizer, self.specials, self.start, self.end = tokenizer, specials, start, end
        if encoding is None:
            check_piece_lengths(text, start, end)
            encoding = tokenizer.encode(text[start:end], add_special_tokens=False)
        offsets = np.asarray(encoding.offsets, dtype=np.int64).reshape(-1, 2) + start
        n = self.n = len(offsets)
        starts = np.minimum(np.maximum(offsets[:, 0], start), end)
        coff = np.empty(n + 1, dtype=np.int64)
        coff[:n] = np.maximum.accumulate(starts) if n else starts
        coff[n] = end
        self.coff = coff
        cut = np.zeros(n + 1, dtype=bool)
        if n > 1:
            ends = np.maximum.accumulate(offsets[:, 1])
            cut[1:n] = (coff[1:n] > coff[:n - 1]) & (starts[1:] == coff[1:n]) & (ends[:-1] <= coff[1:n])
        cut[n] = True
        self.cut = cut
        # The span's code points, one array pass instead of a Python call per token.
        points = np.frombuffer(text[start:end].encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        space = np.isin(points, _SPACES)
        chars = coff[1:n] - start
        self.clean = cut.copy()
        if n > 1:
            self.clean[1:n] &= space[chars - 1] | space[np.minimum(chars, len(points) - 1)]
        self._safe = self._piece_starts(rule, points, space, chars)
        self._safe_coff = None if self._safe is None else self.coff[self._safe]
        self._memo: Dict[Tuple[int, int], int] = {}

    def _piece_starts(self, rule: Optional[str], points: np.ndarray, space: np.ndarray,
                      chars: np.ndarray) -> Optional[np.ndarray]:
        """Indices ``k`` of tokens that begin a pre-tokenizer piece in any string holding them.

        ``points``: the span's code points; ``space``: which are whitespace; ``chars``: where
        tokens ``1 .. n-1`` start, relative to the span.
        """
        if rule is None or self.n < 2:
            return None
        if rule == "space":
            keep = np.isin(points[chars - 1], _ASCII_SPACES)
        else:  # bytelevel: the token holds the space that begins " word"
            nxt = points[np.minimum(chars + 1, len(points) - 1)] | 0x20  # ASCII letters, lowercased
            keep = (points[chars] == 0x20) & (chars + 1 < len(points)) & (nxt >= 0x61) & (nxt <= 0x7A)
        ks = np.flatnonzero(self.cut[1:self.n] & keep) + 1
        return ks if len(ks) else None

    def _encode_count(self, piece: str) -> int:
        return len(self.tokenizer.encode(piece, add_special_tokens=False).ids)

    def count(self, text: str, s: int, e: int) -> int:
        """Tokens of ``text[s:e]`` encoded on its own, special tokens included; 0 when empty."""
        if e <= s:
            return 0
        got = self._memo.get((s, e))
        if got is not None:
            return got
        n = self.specials + self._content(text, s, e)
        if len(self._memo) >= _MEMO:
            self._memo.clear()
        self._memo[(s, e)] = n
        return n

    def _content(self, text: str, s: int, e: int) -> int:
        safe = self._safe
        if safe is not None and self.start <= s and e <= self.end:
            # First piece start at or after s, last at or before e: their tokens are a slice.
            cs = self._safe_coff
            a = int(cs.searchsorted(s, side="left"))
            b = int(cs.searchsorted(e, side="right")) - 1
            if a <= b < len(safe):
                p, q = int(safe[a]), int(safe[b])
                cp, cq = int(self.coff[p]), int(self.coff[q])
                head = self._encode_count(text[s:cp]) if cp > s else 0
                tail = self._encode_count(text[cq:e]) if e > cq else 0
                return head + (q - p) + tail
        return self._encode_count(text[s:e])

    def count_spans(self, text: str, spans: Sequence[Tuple[int, int]]) -> List[int]:
        """:meth:`count` of every span."""
        return [self.count(text, s, e) for s, e in spans]

    def token_at(self, char: int) -> int:
        """The first token starting at or after ``char``."""
        return int(self.coff.searchsorted(char, side="left"))

    def last_cut(self, mask: np.ndarray, lo: int, hi: int) -> int:
        """Largest ``k`` in ``[lo, hi]`` where ``mask`` holds, or -1."""
        lo = max(lo, 0)
        if hi < lo:
            return -1
        hits = np.flatnonzero(mask[lo:hi + 1])
        return int(hits[-1]) + lo if len(hits) else -1

    def first_cut(self, mask: np.ndarray, lo: int, hi: int) -> int:
        """Smallest ``k`` in ``[lo, hi]`` where ``mask`` holds, or -1."""
        lo = max(lo, 0)
        if hi < lo:
            return -1
        hits = np.flatnonzero(mask[lo:hi + 1])
        return int(hits[0]) + lo if len(hits) else -1


def hf_token_windows(index: HFTokenIndex, text: str, start: int, end: int, window: int,
                     overlap: int) -> List[Tuple[int, int, int]]:
    """Cut ``text[start:end]`` into ``(start, end, token_count)`` windows of ``index``'s tokenizer.

    Every window's text, encoded on its own, has at most ``window`` tokens special tokens
    included; consecutive windows share about ``overlap`` tokens; no window is empty or
    whitespace-only; every non-whitespace character lies in some window. Windows end at a word
    boundary when one keeps the window at least half full, else at any token start, else
    (one token longer than the window) between characters.

    Args:
        index: A :class:`HFTokenIndex` of a span holding ``[start, end)``.
        text: The document text.
        start: First character of the span.
        end: One past its last character.
        window: Most tokens per window, special tokens and overlap included.
        overlap: Tokens shared by consecutive windows, about; ``0 <= overlap < window``.

    Raises:
        ChunkingError: one character alone takes more than ``window`` tokens.
    """
    s = skip_space(text, start, end)
    e = trim_end(text, s, end)
    if s >= e:
        return []
    total = index.count(text, s, e)
    if total <= window:
        return [(s, e, total)]
    room = max(1, window - index.specials)
    last = index.token_at(e)  # tokens [i, last) start inside the span
    out: List[Tuple[int, int, int]] = []
    cs = s
    while cs < e:
        i = index.token_at(cs)
        if i >= last or last - i <= room + 8:
            n = index.count(text, cs, e)
            if n <= window:
                out.append((cs, e, n))
                return out
        target = min(i + room, last - 1)
        j = -1
        while target > i:
            j = index.last_cut(index.clean, max(i + 1, i + room // 2), target)
            if j < 0:
                j = index.last_cut(index.cut, i + 1, target)
            if j < 0:
                break
            ce = trim_end(text, cs, int(index.coff[j]))
            n = index.count(text, cs, ce) if ce > cs else 0
            if n <= window:
                break
            target = j - max(1, n - window)
            j = -1
        if j < 0:
            # No token start in reach makes a window that fits (a token longer than the
            # window, an unbreakable run): grow by characters up to the next token start.
            k = index.first_cut(index.cut, i + 1, last)
            limit = min(int(index.coff[k]), e) if k >= 0 else e
            if limit <= cs:
                limit = e
            ce, n = _by_characters(index, text, cs, limit, window)
            out.append((cs, ce, n))
            cs = skip_space(text, ce, e)
            continue
        if ce > cs:
            out.append((cs, ce, n))
        nxt = j
        if overlap:
            g = index.first_cut(index.clean, max(j - overlap, i + 1), j - 1)
            if g < 0:
                g = index.first_cut(index.cut, max(j - overlap, i + 1), j - 1)
            if g > 0:
                nxt = g
        cs = skip_space(text, int(index.coff[nxt]), e)
    return out


def _by_characters(index: HFTokenIndex, text: str, cs: int, limit: int, window: int) -> Tuple[int, int]:
    """The longest ``[cs, end)`` with ``end <= limit`` whose own count fits ``window``
    (binary search, each candidate counted exactly), trimmed; ``(end, count)``."""
    if index.count(text, cs, cs + 1) > window:
        raise ChunkingError(f"the character {text[cs]!r} at offset {cs} alone takes "
                            f"{index.count(text, cs, cs + 1)} tokens, more than the window of {window}")
    lo, hi = cs + 1, limit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if index.count(text, cs, mid) <= window:
            lo = mid
        else:
            hi = mid - 1
    end = max(trim_end(text, cs, lo), cs + 1)
    return end, index.count(text, cs, end)
