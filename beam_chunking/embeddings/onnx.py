"""ONNX embedders on onnxruntime and HF ``tokenizers``, loaded once per process.

Model I/O contract: ``input_ids`` is required; ``attention_mask`` and
``token_type_ids`` are fed only when the model declares them; the token-level output is
found by name (``last_hidden_state`` by default, else the model's single output) and its
shape is checked on every pass, so a pooled ``[batch, d]`` export fails with a clear error.

Inputs longer than ``max_tokens`` (special tokens included) are cut into windows of
``max_tokens`` that overlap by ``window_overlap_tokens`` and stitched: each token's vector
comes from the window where it sits furthest from an edge, and a text's embedding is the
mean over all its windows' tokens. Any length is accepted; a ``max_tokens`` the model cannot
take (more than its position embeddings) fails at load time with a clear error, never
silently.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from beam_chunking.embeddings.base import normalize
from beam_chunking.errors import ChunkingError, ConfigError, MissingExtra

_LOCK = threading.Lock()
#: Padded tokens per model pass, at most: larger passes of long sequences run slower on CPU
#: (measured on MiniLM int8, 1 thread: 32 x 256 tokens 2.6k tokens/s, 8 x 256 5.8k tokens/s).
MAX_BATCH_TOKENS = 2048
_RUNTIMES: Dict[Tuple, "_Runtime"] = {}


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
        try:
            self.session = ort.InferenceSession(cfg.model_path, options, providers=["CPUExecutionProvider"])
        except Exception as exc:
            raise ConfigError(f"OnnxEmbedder.model_path={cfg.model_path!r}: cannot load the model ({exc})",
                              field="model_path") from None
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
        if cfg.tokenizer_path:
            tok = tokenizers.Tokenizer.from_file(cfg.tokenizer_path)
        else:
            from tokenizers.implementations import BertWordPieceTokenizer

            tok = BertWordPieceTokenizer(cfg.vocab_path, lowercase=cfg.lowercase)
        tok.no_truncation()  # packaged tokenizer.json files often truncate and pad to 128
        tok.no_padding()
        self.tokenizer = tok
        probe = tok.encode("a", add_special_tokens=True)
        mask = list(probe.special_tokens_mask)
        first = mask.index(0) if 0 in mask else len(mask)
        last = len(mask) - mask[::-1].index(0) if 0 in mask else len(mask)
        self.prefix = list(probe.ids[:first])
        self.suffix = list(probe.ids[last:])
        pad = tok.token_to_id("[PAD]")
        self.pad = 0 if pad is None else pad
        self.window = cfg.max_tokens - len(self.prefix) - len(self.suffix)
        if self.window <= cfg.window_overlap_tokens:
            raise ConfigError(f"OnnxEmbedder.max_tokens={cfg.max_tokens} leaves {self.window} content tokens, not more "
                              f"than window_overlap_tokens={cfg.window_overlap_tokens}", field="max_tokens")
        self.model_path = cfg.model_path
        # One pass at the full window proves the model takes max_tokens (the "8192 story":
        # a 512-position model asked for more must fail here, not silently later).
        try:
            out = self.forward([self.prefix + [self.pad] * self.window + self.suffix])
        except ChunkingError:
            raise
        except Exception as exc:
            raise ConfigError(f"OnnxEmbedder.max_tokens={cfg.max_tokens}: the model cannot take that many tokens "
                              f"({str(exc).splitlines()[0][:200]}); lower max_tokens to what it supports "
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

    def windows(self, n: int, overlap: int) -> List[Tuple[int, int]]:
        """Content windows ``[start, end)`` covering ``n`` tokens."""
        if n <= self.window:
            return [(0, n)]
        out, start, step = [], 0, self.window - overlap
        while True:
            end = min(start + self.window, n)
            out.append((start, end))
            if end == n:
                return out
            start += step


@dataclass(frozen=True)
class OnnxEmbedder:
    """A local ONNX embedding model: sentence vectors (mean pooling) and token vectors.

    Picklable and cheap to construct: the model loads on first use (or :meth:`setup`), once
    per process, and is shared by equal configurations.

    Args:
        model_path: Path of the ``.onnx`` file.
        tokenizer_path: Path of a HF ``tokenizer.json``; or give ``vocab_path``.
        vocab_path: Path of a WordPiece ``vocab.txt`` (BERT tokenization).
        lowercase: Lowercase with ``vocab_path``. Default ``True``.
        max_tokens: Tokens per model pass, special tokens included. Default 256.
        window_overlap_tokens: Overlap between windows of a longer input. Default 64.
        output_name: Token-level output. Default ``"last_hidden_state"`` (else the single output).
        threads: onnxruntime intra-op threads. Default 1 per process (best when cores are shared).
        batch_size: Sequences per model pass, at most (passes also stay under
            :data:`MAX_BATCH_TOKENS` padded tokens). Default 32.
        name: Label recorded with the vectors (``embedding_model`` metadata). Default ``"onnx"``.
    """

    model_path: str
    tokenizer_path: Optional[str] = None
    vocab_path: Optional[str] = None
    lowercase: bool = True
    max_tokens: int = 256
    window_overlap_tokens: int = 64
    output_name: str = "last_hidden_state"
    threads: int = 1
    batch_size: int = 32
    name: str = "onnx"

    def __post_init__(self) -> None:
        if (self.tokenizer_path is None) == (self.vocab_path is None):
            raise ConfigError("OnnxEmbedder needs exactly one of tokenizer_path (tokenizer.json) or vocab_path (vocab.txt)",
                              field="tokenizer_path")
        for field, minimum in (("max_tokens", 8), ("window_overlap_tokens", 0), ("threads", 1), ("batch_size", 1)):
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise ConfigError(f"OnnxEmbedder.{field} must be an integer >= {minimum}, got {value!r}", field=field)
        if self.window_overlap_tokens >= self.max_tokens:
            raise ConfigError(f"OnnxEmbedder.window_overlap_tokens={self.window_overlap_tokens} must be smaller than "
                              f"max_tokens={self.max_tokens}", field="window_overlap_tokens")

    def _key(self) -> Tuple:
        return (self.model_path, self.tokenizer_path, self.vocab_path, self.lowercase, self.max_tokens,
                self.window_overlap_tokens, self.output_name, self.threads)

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

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalised mean-pooled vectors ``float32 [len(texts), d]``; long texts are windowed."""
        rt = self.runtime
        if not texts:
            return np.zeros((0, rt.dimension), dtype=np.float32)
        encodings = rt.tokenizer.encode_batch(list(texts), add_special_tokens=False)
        seqs: List[Tuple[int, List[int]]] = []
        for k, enc in enumerate(encodings):
            ids = list(enc.ids)
            for s, e in rt.windows(len(ids), self.window_overlap_tokens):
                seqs.append((k, rt.prefix + ids[s:e] + rt.suffix))
        sums = np.zeros((len(texts), rt.dimension), dtype=np.float64)
        counts = np.zeros(len(texts), dtype=np.int64)
        for group in rt.batches([len(s) for _, s in seqs], self.batch_size):
            batch = [seqs[i] for i in group]
            out = rt.forward([s for _, s in batch])
            for row, (k, seq) in enumerate(batch):
                sums[k] += out[row, :len(seq)].sum(axis=0)
                counts[k] += len(seq)
        return normalize(sums / np.maximum(counts, 1)[:, None])

    def embed_tokens(self, text: str) -> Tuple[np.ndarray, np.ndarray]:
        """Per-token vectors of ``text`` and their code-point offsets (special tokens excluded)."""
        rt = self.runtime
        enc = rt.tokenizer.encode(text, add_special_tokens=False)
        ids = list(enc.ids)
        offsets = np.asarray(enc.offsets, dtype=np.int64).reshape(-1, 2)
        n = len(ids)
        vectors = np.zeros((n, rt.dimension), dtype=np.float32)
        if n == 0:
            return vectors, offsets
        wins = rt.windows(n, self.window_overlap_tokens)
        lo = len(rt.prefix)
        for group in rt.batches([e - s for s, e in wins], self.batch_size):
            out = rt.forward([rt.prefix + ids[wins[k][0]:wins[k][1]] + rt.suffix for k in group])
            for row, k in enumerate(group):
                s, e = wins[k]
                # Each token from the window where it is furthest from an edge: overlaps split in half.
                own_s = s if k == 0 else (s + wins[k - 1][1]) // 2
                own_e = e if k == len(wins) - 1 else (wins[k + 1][0] + e) // 2
                vectors[own_s:own_e] = out[row, lo + own_s - s: lo + own_e - s]
        return vectors, offsets
