"""ONNX embedders on onnxruntime and HF ``tokenizers``, loaded once per process.

Model I/O contract: ``input_ids`` is required; ``attention_mask`` and
``token_type_ids`` are fed only when the model declares them; the token-level output is
found by name (``last_hidden_state`` by default, else the model's single output) and its
shape is checked on every pass, so a pooled ``[batch, d]`` export fails with a clear error.

Inputs longer than ``max_tokens`` (special tokens and the passage or query prefix included)
are cut into windows of ``max_tokens`` that overlap by ``window_overlap_tokens``; every
window is a whole model input (the special tokens and the prefix, then its slice of the
text). Token vectors are stitched: each token's vector comes from the window where it sits
furthest from an edge. A text's embedding pools each window as the model was trained to
pool one input and averages the windows: ``mean`` is the mean over all its windows' tokens
(so a windowed text counts the overlap twice, as before); ``cls`` and ``last`` are the mean
of the windows' first-token or last-token vectors (a window's CLS vector summarises that
window only, so no single window's CLS may stand for the whole text). Any length is
accepted; a ``max_tokens`` the model cannot take (more than its position embeddings) fails
at load time with a clear error, never silently.

Where the model runs: ``providers`` go to onnxruntime in order; a provider this process
cannot use (no GPU, or the CPU-only onnxruntime package) gives one :class:`ProviderUnavailable`
warning per process and provider, and the model runs on the CPU. The vectors are the same,
up to floating-point rounding, on every provider.
"""
from __future__ import annotations

import os
import threading
import warnings
from dataclasses import dataclass, field, fields
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from beam_chunking.embeddings.base import normalize
from beam_chunking.embeddings.files import CONFIG_FILES, configured_max_tokens, local_copy
from beam_chunking.errors import ChunkingError, ConfigError, MissingExtra

#: The pooling modes: the mean of the tokens, the first token (``[CLS]``: BGE, GTE, Arctic),
#: the last token (decoder models such as Qwen3-Embedding).
POOLINGS = ("mean", "cls", "last")
#: ``max_tokens`` when neither the option nor the model's configuration gives one.
DEFAULT_MAX_TOKENS = 256
CPU = "CPUExecutionProvider"

_LOCK = threading.Lock()
#: Providers already warned about in this process (so the warning comes once, not per model).
_WARNED: set = set()
#: Padded tokens per model pass, at most: larger passes of long sequences run slower on CPU
#: (measured on MiniLM int8, 1 thread: 32 x 256 tokens 2.6k tokens/s, 8 x 256 5.8k tokens/s).
MAX_BATCH_TOKENS = 2048
_RUNTIMES: Dict[Tuple, "_Runtime"] = {}


class ProviderUnavailable(RuntimeWarning):
    """An onnxruntime execution provider asked for is not usable here; the model runs on the CPU."""


def _warn_fallback(missing: Sequence[str], available: Sequence[str]) -> None:
    new = [p for p in missing if p not in _WARNED]
    if new:
        _WARNED.update(new)
        warnings.warn(f"OnnxEmbedder.providers: {', '.join(new)} not available in this process (onnxruntime "
                      f"offers {', '.join(available)}); running on {CPU}", ProviderUnavailable, stacklevel=4)


def _import(module: str, package: str):
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtra(f"{package} is not installed; install it with: pip install \"beam-chunking[minilm]\" "
                           "(or [hf] plus onnxruntime)") from None


class _Runtime:
    """The loaded session and tokenizer of one model (shared by every embedder instance)."""

    def __init__(self, cfg: "OnnxEmbedder"):
        ort = _import("onnxruntime", "onnxruntime")
        tokenizers = _import("tokenizers", "tokenizers")
        options = ort.SessionOptions()
        options.intra_op_num_threads = cfg.threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 4  # failures surface as our own errors, not runtime logs
        siblings = [name for name, _ in CONFIG_FILES]
        model_path = local_copy(cfg.model_path, cfg.cache_dir, siblings + [os.path.basename(cfg.model_path) + suffix
                                                                          for suffix in ("_data", ".data")])
        tokenizer_path = cfg.tokenizer_path and local_copy(cfg.tokenizer_path, cfg.cache_dir, siblings)
        vocab_path = cfg.vocab_path and local_copy(cfg.vocab_path, cfg.cache_dir, siblings)
        available = ort.get_available_providers()
        chosen = [p for p in cfg.providers if p in available]
        if CPU not in chosen:
            chosen.append(CPU)  # the fallback, always last
        try:
            self.session = ort.InferenceSession(model_path, options, providers=chosen)
        except Exception as exc:
            if chosen == [CPU]:
                raise ConfigError(f"OnnxEmbedder.model_path={cfg.model_path!r}: cannot load the model ({exc})",
                                  field="model_path") from None
            # A listed GPU provider whose libraries or device are missing can fail the load.
            self.session = ort.InferenceSession(model_path, options, providers=[CPU])
        used = self.session.get_providers()
        missing = [p for p in cfg.providers if p not in used]
        if missing:
            _warn_fallback(missing, available)
        self.providers = tuple(used)
        declared = {i.name for i in self.session.get_inputs()}
        if "input_ids" not in declared:
            raise ConfigError(f"{cfg.model_path}: the model has no 'input_ids' input (inputs: {sorted(declared)})",
                              field="model_path")
        self.feeds_mask = "attention_mask" in declared
        self.feeds_types = "token_type_ids" in declared
        outputs = [o.name for o in self.session.get_outputs()]
        if cfg.output_name in outputs:
            self.output = cfg.output_name
        elif len(outputs) == 1:
            self.output = outputs[0]
        else:
            raise ConfigError(f"{cfg.model_path}: no output named {cfg.output_name!r} and more than one output "
                              f"({outputs}); set output_name", field="output_name")
        if tokenizer_path:
            tok = tokenizers.Tokenizer.from_file(tokenizer_path)
        else:
            from tokenizers.implementations import BertWordPieceTokenizer

            tok = BertWordPieceTokenizer(vocab_path, lowercase=cfg.lowercase)
        declared_pad = (tok.padding or {}).get("pad_id")  # read before padding is switched off
        tok.no_truncation()  # packaged tokenizer.json files often truncate and pad to 128
        tok.no_padding()
        self.tokenizer = tok
        probe = tok.encode("a", add_special_tokens=True)
        mask = list(probe.special_tokens_mask)
        first = mask.index(0) if 0 in mask else len(mask)
        last = len(mask) - mask[::-1].index(0) if 0 in mask else len(mask)
        self.prefix = list(probe.ids[:first])
        self.suffix = list(probe.ids[last:])
        # Padding is masked out wherever the model takes attention_mask; the id still matters
        # to a model without one, so take the model's own (XLM-R's <pad> is 1, not 0).
        pad = tok.token_to_id("[PAD]")
        for candidate in (declared_pad, tok.token_to_id("<pad>"), 0):
            pad = candidate if pad is None else pad
        self.pad = pad
        self.max_tokens, source = cfg.max_tokens, ""
        if self.max_tokens is None:
            folders = [os.path.dirname(p) for p in (tokenizer_path, vocab_path, model_path) if p]
            found, where = configured_max_tokens(folders + [os.path.dirname(os.path.dirname(model_path))])
            self.max_tokens = found or DEFAULT_MAX_TOKENS
            source = f" (read from {where})" if found else " (the default)"
        self.window = self.max_tokens - len(self.prefix) - len(self.suffix)
        if self.window <= cfg.window_overlap_tokens:
            raise ConfigError(f"OnnxEmbedder.max_tokens={self.max_tokens}{source} leaves {self.window} content "
                              f"tokens, not more than window_overlap_tokens={cfg.window_overlap_tokens}",
                              field="max_tokens")
        self.model_path = cfg.model_path
        # One pass at the full window proves the model takes max_tokens (the "8192 story":
        # a 512-position model asked for more must fail here, not silently later).
        try:
            out = self.forward([self.prefix + [self.pad] * self.window + self.suffix])
        except ChunkingError:
            raise
        except Exception as exc:
            raise ConfigError(f"OnnxEmbedder.max_tokens={self.max_tokens}{source}: the model cannot take that many "
                              f"tokens ({str(exc).splitlines()[0][:200]}); lower max_tokens to what it supports "
                              "(512 for BERT-style models)", field="max_tokens") from None
        self.dimension = int(out.shape[-1])

    def forward(self, sequences: List[List[int]]) -> np.ndarray:
        """Hidden states ``[batch, longest, d]`` for id sequences (right-padded)."""
        longest = max(len(s) for s in sequences)
        ids = np.full((len(sequences), longest), self.pad, dtype=np.int64)
        mask = np.zeros((len(sequences), longest), dtype=np.int64)
        for k, seq in enumerate(sequences):
            ids[k, :len(seq)] = seq
            mask[k, :len(seq)] = 1
        feeds = {"input_ids": ids}
        if self.feeds_mask:
            feeds["attention_mask"] = mask
        if self.feeds_types:
            feeds["token_type_ids"] = np.zeros_like(ids)
        (out,) = self.session.run([self.output], feeds)
        if out.ndim != 3 or out.shape[0] != len(sequences) or out.shape[1] != longest:
            raise ChunkingError(
                f"{self.model_path}: output {self.output!r} has shape {list(out.shape)}, expected token-level "
                f"[batch={len(sequences)}, sequence={longest}, dim]; a pooled export cannot be used here")
        return out

    def batches(self, lengths: Sequence[int], batch_size: int) -> List[List[int]]:
        """Indices grouped into passes: by length, at most ``batch_size`` sequences and
        :data:`MAX_BATCH_TOKENS` padded tokens each (a single long sequence still gets a pass)."""
        order = sorted(range(len(lengths)), key=lambda i: lengths[i])
        out: List[List[int]] = []
        cur: List[int] = []
        for i in order:
            if cur and (len(cur) >= batch_size or (len(cur) + 1) * lengths[i] > MAX_BATCH_TOKENS):
                out.append(cur)
                cur = []
            cur.append(i)
        if cur:
            out.append(cur)
        return out

    def windows(self, n: int, overlap: int, width: Optional[int] = None) -> List[Tuple[int, int]]:
        """Content windows ``[start, end)`` covering ``n`` tokens, each at most ``width``
        (default: the model's window less its special tokens)."""
        width = self.window if width is None else width
        if n <= width:
            return [(0, n)]
        out, start, step = [], 0, width - overlap
        while True:
            end = min(start + width, n)
            out.append((start, end))
            if end == n:
                return out
            start += step


@dataclass(frozen=True)
class OnnxEmbedder:
    """A local ONNX embedding model, run as published: sentence vectors and token vectors.

    Picklable and cheap to construct: the model loads on first use (or :meth:`setup`), once
    per process, and is shared by equal configurations.

    Args:
        model_path: Path of the ``.onnx`` file, local or ``gs://`` (copied once per process
            to ``cache_dir``, with its configuration files and external data; gcp extra).
        tokenizer_path: Path of a HF ``tokenizer.json``; or give ``vocab_path``.
        vocab_path: Path of a WordPiece ``vocab.txt`` (BERT tokenization).
        lowercase: Lowercase with ``vocab_path``. Default ``True``.
        max_tokens: Tokens per model pass, special tokens and prefix included. Default
            ``None``: read from the model's published configuration beside the files
            (``sentence_bert_config.json`` ``max_seq_length``, else ``tokenizer_config.json``
            ``model_max_length``, else ``config.json`` ``max_position_embeddings``; see
            :func:`~beam_chunking.embeddings.files.configured_max_tokens`), else 256.
        window_overlap_tokens: Overlap between windows of a longer input. Default 64.
        output_name: Token-level output. Default ``"last_hidden_state"`` (else the single output).
        threads: onnxruntime intra-op threads. Default 1 per process (best when cores are shared).
        batch_size: Sequences per model pass, at most (passes also stay under
            :data:`MAX_BATCH_TOKENS` padded tokens). Default 32.
        name: Label recorded with the vectors (``embedding_model`` metadata, with the options
            that change the vectors appended: see :attr:`identity`). Default ``"onnx"``.
        pooling: ``"mean"`` (default; MiniLM, E5, most sentence-transformers), ``"cls"``
            (the first token: BGE, GTE, Arctic) or ``"last"`` (the last token, end token
            included: decoder embedders). Long inputs: see the module docstring.
        normalize: Scale each vector to unit length. Default ``True``; ``False`` returns the
            pooled vectors as the model gives them (for models meant for dot products).
        passage_prefix: Text put before every text :meth:`embed` and :meth:`embed_tokens`
            embed (E5: ``"passage: "``). Default ``""``.
        query_prefix: Text put before every text :meth:`embed_queries` embeds (E5:
            ``"query: "``; BGE: its instruction). Default ``""``.
        providers: onnxruntime execution providers, in order of preference, e.g.
            ``("CUDAExecutionProvider", "CPUExecutionProvider")``. Default CPU only. One
            this process cannot use gives one warning and the CPU runs the model. Not part
            of equality or the options fingerprint: it moves the work, not the vectors.
        cache_dir: Folder for local copies of ``gs://`` files. Default
            ``$TMPDIR/beam-chunking-models``.

    Example:
        >>> bge = OnnxEmbedder(model_path="bge-small/onnx/model.onnx",
        ...                    tokenizer_path="bge-small/tokenizer.json", pooling="cls", name="bge-small")
        >>> bge.identity
        'bge-small[pooling=cls]'
    """

    model_path: str
    tokenizer_path: Optional[str] = None
    vocab_path: Optional[str] = None
    lowercase: bool = True
    # Keyword-only from here on: a new option left at its default is left out of the
    # options fingerprint (beam_chunking.ids), so existing configurations keep theirs. Not
    # max_tokens, whose default changed from 256 to None (read from the model's files): a
    # configuration that named no max_tokens gets a new fingerprint, and an incremental run
    # embeds again, rightly when the window read is not 256 (tested).
    max_tokens: Optional[int] = field(default=None, kw_only=True)
    window_overlap_tokens: int = 64
    output_name: str = "last_hidden_state"
    threads: int = 1
    batch_size: int = 32
    name: str = "onnx"
    pooling: str = field(default="mean", kw_only=True)
    normalize: bool = field(default=True, kw_only=True)
    passage_prefix: str = field(default="", kw_only=True)
    query_prefix: str = field(default="", kw_only=True)
    providers: Tuple[str, ...] = field(default=(CPU,), kw_only=True, compare=False)
    cache_dir: Optional[str] = field(default=None, kw_only=True, compare=False)

    def __post_init__(self) -> None:
        if (self.tokenizer_path is None) == (self.vocab_path is None):
            raise ConfigError("OnnxEmbedder needs exactly one of tokenizer_path (tokenizer.json) or vocab_path (vocab.txt)",
                              field="tokenizer_path")
        for name, minimum in (("max_tokens", 8), ("window_overlap_tokens", 0), ("threads", 1), ("batch_size", 1)):
            value = getattr(self, name)
            if name == "max_tokens" and value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise ConfigError(f"OnnxEmbedder.{name} must be an integer >= {minimum}"
                                  f"{' or None (read from the model)' if name == 'max_tokens' else ''}, got {value!r}",
                                  field=name)
        if self.max_tokens is not None and self.window_overlap_tokens >= self.max_tokens:
            raise ConfigError(f"OnnxEmbedder.window_overlap_tokens={self.window_overlap_tokens} must be smaller than "
                              f"max_tokens={self.max_tokens}", field="window_overlap_tokens")
        if self.pooling not in POOLINGS:
            raise ConfigError(f"OnnxEmbedder.pooling must be one of {', '.join(POOLINGS)}, got {self.pooling!r}",
                              field="pooling")
        if not isinstance(self.normalize, bool):
            raise ConfigError(f"OnnxEmbedder.normalize must be true or false, got {self.normalize!r}",
                              field="normalize")
        for name in ("passage_prefix", "query_prefix"):
            if not isinstance(getattr(self, name), str):
                raise ConfigError(f"OnnxEmbedder.{name} must be a string, got {getattr(self, name)!r}", field=name)
        providers = (self.providers,) if isinstance(self.providers, str) else self.providers
        if (not isinstance(providers, (list, tuple)) or not providers
                or not all(isinstance(p, str) and p.endswith("ExecutionProvider") for p in providers)):
            raise ConfigError("OnnxEmbedder.providers must be a list of onnxruntime provider names such as "
                              f"[CUDAExecutionProvider, CPUExecutionProvider], got {self.providers!r}",
                              field="providers")
        object.__setattr__(self, "providers", tuple(providers))  # hashable, as the runtime key needs

    @classmethod
    def of(cls, options: Mapping[str, Any]) -> "OnnxEmbedder":
        """An embedder from a mapping of options (the spec's ``embed: {model_path: ...}``).

        Raises:
            ConfigError: an unknown option (the message lists the known ones), or no
                ``model_path``.
        """
        known = [f.name for f in fields(cls)]
        unknown = [k for k in options if k not in known]
        if unknown:
            raise ConfigError(f"unknown OnnxEmbedder option {unknown[0]!r}; the options are: {', '.join(known)}",
                              field=str(unknown[0]))
        if "model_path" not in options:
            raise ConfigError("OnnxEmbedder needs model_path (the .onnx file)", field="model_path")
        return cls(**options)

    @property
    def identity(self) -> str:
        """``name`` plus every option that changes the vectors and is not at its default,
        e.g. ``"e5[passage_prefix='passage: ', query_prefix='query: ']"``: recorded as the
        chunks' ``embedding_model``, so vectors made under other options are not reused."""
        changed = [f"{f.name}={getattr(self, f.name)!r}" if isinstance(f.default, str) and f.name != "pooling"
                   else f"{f.name}={getattr(self, f.name)}"
                   for f in fields(self) if f.name in _VECTOR_OPTIONS and getattr(self, f.name) != f.default]
        return f"{self.name}[{', '.join(changed)}]" if changed else self.name

    def _key(self) -> Tuple:
        return (self.model_path, self.tokenizer_path, self.vocab_path, self.lowercase, self.max_tokens,
                self.window_overlap_tokens, self.output_name, self.threads, self.providers, self.cache_dir)

    @property
    def runtime(self) -> _Runtime:
        """The loaded model (loads it on first use in this process)."""
        key = self._key()
        rt = _RUNTIMES.get(key)
        if rt is None:
            with _LOCK:
                rt = _RUNTIMES.get(key)
                if rt is None:
                    rt = _Runtime(self)
                    _RUNTIMES[key] = rt
        return rt

    def setup(self) -> None:
        """Load the model now (workers call this in ``DoFn.setup``)."""
        _ = self.runtime

    @property
    def dimension(self) -> int:
        """Vector dimension."""
        return self.runtime.dimension

    @property
    def window_tokens(self) -> int:
        """``max_tokens`` in effect: given, or read from the model's configuration, or 256."""
        return self.runtime.max_tokens

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Passage vectors ``float32 [len(texts), d]``: ``passage_prefix`` put before each text,
        pooled by ``pooling``, unit length unless ``normalize`` is off; long texts are windowed."""
        return self._embed(texts, self.passage_prefix)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Query vectors, as :meth:`embed` but with ``query_prefix`` before each text."""
        return self._embed(texts, self.query_prefix)

    def _embed(self, texts: Sequence[str], prefix: str) -> np.ndarray:
        rt = self.runtime
        if not texts:
            return np.zeros((0, rt.dimension), dtype=np.float32)
        encodings = rt.tokenizer.encode_batch([prefix + t for t in texts] if prefix else list(texts),
                                              add_special_tokens=False)
        seqs: List[Tuple[int, List[int]]] = []
        for k, enc in enumerate(encodings):
            ids = list(enc.ids)
            head = _head(enc, len(prefix), rt, self.window_overlap_tokens) if prefix else 0
            lead, body = rt.prefix + ids[:head], ids[head:]
            for s, e in rt.windows(len(body), self.window_overlap_tokens, rt.window - head):
                seqs.append((k, lead + body[s:e] + rt.suffix))
        sums = np.zeros((len(texts), rt.dimension), dtype=np.float64)
        counts = np.zeros(len(texts), dtype=np.int64)
        for group in rt.batches([len(s) for _, s in seqs], self.batch_size):
            batch = [seqs[i] for i in group]
            out = rt.forward([s for _, s in batch])
            if self.pooling == "mean":
                for row, (k, seq) in enumerate(batch):
                    sums[k] += out[row, :len(seq)].sum(axis=0)
                    counts[k] += len(seq)
                continue
            rows = np.fromiter((k for k, _ in batch), dtype=np.int64, count=len(batch))
            at = 0 if self.pooling == "cls" else np.fromiter((len(s) - 1 for _, s in batch), np.int64, len(batch))
            np.add.at(sums, rows, out[np.arange(len(batch)), at])  # a text's windows: summed, then averaged
            np.add.at(counts, rows, 1)
        pooled = sums / np.maximum(counts, 1)[:, None]
        return normalize(pooled) if self.normalize else pooled.astype(np.float32)

    def embed_tokens(self, text: str) -> Tuple[np.ndarray, np.ndarray]:
        """Per-token vectors of ``text`` and their code-point offsets (special tokens excluded).

        The ``passage_prefix`` is fed before the text in every window (as :meth:`embed` does)
        and left out of the result; offsets stay offsets into ``text``.
        """
        rt = self.runtime
        prefix = self.passage_prefix
        enc = rt.tokenizer.encode(prefix + text, add_special_tokens=False)
        head = _head(enc, len(prefix), rt, self.window_overlap_tokens) if prefix else 0
        all_ids = list(enc.ids)
        lead, ids = rt.prefix + all_ids[:head], all_ids[head:]
        offsets = np.asarray(enc.offsets, dtype=np.int64).reshape(-1, 2)[head:] - len(prefix)
        n = len(ids)
        vectors = np.zeros((n, rt.dimension), dtype=np.float32)
        if n == 0:
            return vectors, offsets
        wins = rt.windows(n, self.window_overlap_tokens, rt.window - head)
        lo = len(lead)
        for group in rt.batches([e - s for s, e in wins], self.batch_size):
            out = rt.forward([lead + ids[wins[k][0]:wins[k][1]] + rt.suffix for k in group])
            for row, k in enumerate(group):
                s, e = wins[k]
                # Each token from the window where it is furthest from an edge: overlaps split in half.
                own_s = s if k == 0 else (s + wins[k - 1][1]) // 2
                own_e = e if k == len(wins) - 1 else (wins[k + 1][0] + e) // 2
                vectors[own_s:own_e] = out[row, lo + own_s - s: lo + own_e - s]
        return vectors, offsets


#: The options that change the vectors a model gives (recorded in :attr:`OnnxEmbedder.identity`).
_VECTOR_OPTIONS = ("pooling", "normalize", "passage_prefix", "query_prefix")


def _head(encoding, prefix_chars: int, rt: _Runtime, overlap: int) -> int:
    """How many leading tokens of ``encoding`` start inside the prefix's ``prefix_chars``
    characters (the prefix is encoded with the text, as the model was trained; a token
    spanning the boundary counts as the prefix's)."""
    head = 0
    for start, _ in encoding.offsets:
        if start >= prefix_chars:
            break
        head += 1
    if rt.window - head <= overlap:
        raise ConfigError(f"OnnxEmbedder: the prefix takes {head} tokens and leaves no more than "
                          f"window_overlap_tokens={overlap} of max_tokens={rt.max_tokens} "
                          "for the text; shorten the prefix or raise max_tokens", field="passage_prefix")
    return head
