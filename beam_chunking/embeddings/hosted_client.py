"""EmbeddingClient: ``/v1/embeddings`` requests for one worker process, bounded, paced, retried, cached.

Built once per process from a :class:`~beam_chunking.embeddings.hosted.HostedEmbedder`
(:func:`shared_embedding_client`) and shared by its threads, so the concurrency cap and the
rates hold for the whole process. What :meth:`EmbeddingClient.embed` does with a call's texts:

1. Each distinct text is looked up in the cache by (model, dimensions, text); a hit costs
   nothing. Empty texts get a zero vector and no request (servers refuse them).
2. The rest are packed, in order, into requests of at most ``max_batch_size`` texts and
   ``max_batch_tokens`` tokens (counted in ``tokenizer`` only where a text's UTF-8 size
   does not settle it, see :meth:`EmbeddingClient._batches`). Each request goes out as soon
   as it is packed, so packing overlaps the network.
3. A request waits for a slot (at most ``max_concurrency`` in flight), then for
   ``requests_per_minute`` and ``tokens_per_minute``, and is sent through the official
   ``openai`` client's HTTP layer (its own retries off; the answer read as plain JSON, see
   :meth:`EmbeddingClient._post`), retried with the chat client's policy
   (:func:`~beam_chunking.llm.client.retry_policy`: 429, 5xx, timeouts and connection errors,
   with backoff and jitter; never another 4xx).
4. Its vectors are checked (count, dimension) and normalised, and stored in the cache by
   :data:`CACHE_WRITERS` threads of their own while later requests are in flight; the call
   returns (or fails) only once its finished requests are stored, so a call that fails
   half-way still leaves them paid for.
"""
from __future__ import annotations

import base64
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from beam_chunking.embeddings.base import normalize
from beam_chunking.embeddings.cache import VectorCache, vector_key
from beam_chunking.errors import EmbeddingError, require_extra
from beam_chunking.llm.client import RateLimiter, retry_policy, short_message
from beam_chunking.sizing import get_sizer
from beam_chunking.schema import EMBED_COLUMNS

#: Threads storing vectors in the cache, per process: off the request threads, so a slot is
#: free again as soon as its answer is read, and a ``gs://`` cache writes several requests'
#: objects at once (a local database takes one transaction at a time anyway).
CACHE_WRITERS = 4

#: The text embedded once to learn a model's dimension when neither ``dimensions`` nor
#: :data:`~beam_chunking.embeddings.hosted.KNOWN_DIMENSIONS` gives it.
PROBE_TEXT = "dimension probe"


@dataclass(frozen=True)
class Embedded:
    """The vectors of one call and what each text cost, row by row.

    Args:
        vectors: ``float32 [n, d]``, each row of unit length (zero for an empty text).
        cached: ``bool [n]``: the row came from the cache or from an identical text of the call.
        requests: ``int64 [n]``: 1 on the first row of each request sent, else 0.
        tokens: ``int64 [n]``: the input tokens the server reported, a request's split by
            its texts' UTF-8 sizes (largest remainders, so they add up exactly); ``tokenizer``
            counts where the server reports none.
    """

    vectors: np.ndarray
    cached: np.ndarray
    requests: np.ndarray
    tokens: np.ndarray

    def columns(self, start: int = 0, end: Optional[int] = None) -> Dict[str, int]:
        """The documents-table counters (:data:`~beam_chunking.schema.EMBED_COLUMNS`) of rows
        ``[start, end)``: texts, of which cached, requests and tokens."""
        end = len(self.vectors) if end is None else end
        values = (end - start, int(self.cached[start:end].sum()), int(self.requests[start:end].sum()),
                  int(self.tokens[start:end].sum()))
        return dict(zip(EMBED_COLUMNS, values))


def split_tokens(total: int, weights: Sequence[int]) -> List[int]:
    """``total`` split in proportion to ``weights`` (evenly when they are all 0), in whole
    numbers that add up to ``total``: floors, then one more to the largest remainders."""
    weights = [max(0, w) for w in weights] if any(w > 0 for w in weights) else [1] * len(weights)
    whole = sum(weights)
    shares = [total * w // whole for w in weights]
    order = sorted(range(len(weights)), key=lambda k: (-(total * weights[k] % whole), k))
    for k in order[:total - sum(shares)]:
        shares[k] += 1
    return shares


class EmbeddingClient:
    """Sends embedding requests for one worker process (see the module docstring).

    Args:
        config: A :class:`~beam_chunking.embeddings.hosted.HostedEmbedder`.

    Raises:
        MissingExtra: ``openai`` or ``tenacity`` is missing (the ``llm`` extra).
    """

    def __init__(self, config):
        self.config = config
        self._openai = require_extra("openai", "openai", "llm")
        self._tenacity = require_extra("tenacity", "tenacity", "llm")
        self._httpx = require_extra("httpx", "openai", "llm")  # the openai client's own HTTP library
        self._client = self._openai.OpenAI(
            api_key=os.environ.get(config.api_key_env) or "not-needed",
            base_url=config.base_url, timeout=config.timeout, max_retries=0)
        location = config.cache_location
        self.cache = VectorCache(location) if location else None
        self._sizer = get_sizer(config.tokenizer)
        # No token of a byte-level BPE (tiktoken's encodings) or of "characters" is shorter
        # than a UTF-8 byte; an hf: tokenizer's may be, so its texts are always counted.
        self._bytes_bound = not config.tokenizer.startswith("hf:")
        self._count_all = config.tokens_per_minute is not None
        self._slots = threading.BoundedSemaphore(config.max_concurrency)
        self._requests = RateLimiter(config.requests_per_minute)
        self._tokens = RateLimiter(config.tokens_per_minute)
        self._format = "base64"  # a quarter of the JSON; a server that refuses it gets "float"
        self._dimension: Optional[int] = config.dimensions
        self._pool = ThreadPoolExecutor(config.max_concurrency, thread_name_prefix="beam-chunking-embed")
        self._writers = ThreadPoolExecutor(CACHE_WRITERS, thread_name_prefix="beam-chunking-embed-cache")

    def close(self) -> None:
        """Release the HTTP connections, the request threads and the cache writers."""
        self._pool.shutdown(wait=False)
        self._writers.shutdown(wait=True)
        self._client.close()

    def dimension(self) -> int:
        """The model's vector size (one request, or a cache hit, the first time)."""
        if self._dimension is None:
            self._dimension = int(self.embed([PROBE_TEXT]).vectors.shape[1])
        return self._dimension

    def embed(self, texts: Sequence[str]) -> Embedded:
        """Vectors for ``texts``, in order, with their costs (see :class:`Embedded`).

        Raises:
            EmbeddingError: a request failed after its retries, was refused, or was answered
                with vectors that do not fit.
        """
        n = len(texts)
        cached, requests, tokens = np.ones(n, bool), np.zeros(n, np.int64), np.zeros(n, np.int64)
        first: Dict[str, int] = {}  # each distinct text's first row
        for k, text in enumerate(texts):
            if text not in first:
                first[text] = k
                cached[k] = False
        found = self._lookup([t for t in first if t])
        todo = [t for t in first if t and t not in found]
        for text in found:
            cached[first[text]] = True
        futures = [self._pool.submit(self._send, batch, counts) for batch, counts in self._batches(todo)]
        try:
            for future in futures:
                batch, vectors, used, _ = future.result()
                requests[first[batch[0]]] = 1
                for text, vector, spent in zip(batch, vectors, used):
                    found[text] = vector
                    tokens[first[text]] = spent
        finally:
            for future in futures:  # after a failure, what has not started is not sent ...
                future.cancel()
            for future in futures:  # ... and what was answered is stored before the call ends
                if not future.cancelled() and future.exception() is None and future.result()[3] is not None:
                    future.result()[3].result()
        if n and self._dimension is None:  # every vector came from the cache, or every text was empty
            self._dimension = len(next(iter(found.values()))) if found else self.dimension()
        out = np.zeros((n, self._dimension or 0), dtype=np.float32)
        for k, text in enumerate(texts):
            if text:
                out[k] = found[text]
        return Embedded(out, cached, requests, tokens)

    def _batches(self, texts: List[str]):
        """``(texts, token counts)`` of each request, packed greedily in order (see the module
        docstring); a count is ``None`` where it was not needed.

        Counting costs about a millisecond per chunk (cl100k on these machines), more than a
        request's share of a 3,000-a-minute limit, so a text is counted only when its UTF-8
        size, a bound on its tokens, does not settle whether it fits, and always under
        ``tokens_per_minute``. The batches are the ones exact counts would give.
        """
        cfg = self.config
        batch: List[str] = []
        counts: List[Optional[int]] = []
        bound = 0
        for text in texts:
            size = len(text.encode("utf-8")) if self._bytes_bound else None
            if batch and len(batch) >= cfg.max_batch_size:
                yield batch, counts
                batch, counts, bound = [], [], 0
            if self._count_all or size is None or bound + size > cfg.max_batch_tokens:
                counts = [self._sizer.count(t) if c is None else c for t, c in zip(batch, counts)]
                tokens = self._sizer.count(text)
                if batch and sum(counts) + tokens > cfg.max_batch_tokens:
                    yield batch, counts
                    batch, counts, bound = [], [], 0
            else:
                tokens = None
            batch.append(text)
            counts.append(tokens)
            bound += size or 0
        if batch:
            yield batch, counts

    def _key(self, text: str) -> str:
        return vector_key(self.config.model, self.config.dimensions, text)

    def _lookup(self, texts: List[str]) -> Dict[str, np.ndarray]:
        """The cached vectors of ``texts`` (the ones found, of the model's dimension)."""
        if self.cache is None or not texts:
            return {}
        keys = [self._key(t) for t in texts]
        # A bucket answers each lookup over the network: ask on the request threads at once.
        hits = self.cache.get_many(keys, threads=self._pool if self.cache.remote else None)
        size = self._dimension
        return {t: hits[k] for t, k in zip(texts, keys) if k in hits and len(hits[k]) == (size or len(hits[k]))}

    def _send(self, batch: List[str], counts: List[int]) -> Tuple[List[str], np.ndarray, List[int], Optional[Future]]:
        openai, cfg = self._openai, self.config
        retrying = retry_policy(self._tenacity, openai, cfg.max_retries, cfg.retry_initial_delay, cfg.retry_max_delay)
        try:
            response = retrying(self._request, batch, sum(c or 0 for c in counts))
        except openai.APIStatusError as exc:
            raise EmbeddingError(f"the embedding server answered HTTP {exc.status_code}: {short_message(exc)}") from None
        except openai.APIError as exc:  # timeouts and connection errors after the retries
            raise EmbeddingError(f"the embedding server could not be reached after {cfg.max_retries} retries: "
                                 f"{type(exc).__name__}: {short_message(exc)}") from None
        vectors = self._vectors(response, len(batch))
        usage = response.get("usage") if isinstance(response.get("usage"), dict) else {}
        reported = int(usage.get("prompt_tokens") or usage.get("total_tokens") or 0)
        # A server that reports no usage (some local ones) is charged our own count.
        if reported:
            spent = split_tokens(reported, [len(t.encode("utf-8")) for t in batch])
        else:
            spent = [self._sizer.count(t) if c is None else c for t, c in zip(batch, counts)]
        store = self._writers.submit(self._store, batch, vectors) if self.cache is not None else None
        return batch, vectors, spent, store

    def _store(self, batch: List[str], vectors: np.ndarray) -> None:
        self.cache.put_many((self._key(text), vector) for text, vector in zip(batch, vectors))

    def _request(self, batch: List[str], tokens: int):
        openai = self._openai
        with self._slots:
            self._requests.wait()
            self._tokens.wait(tokens)
            kwargs = {"model": self.config.model, "input": batch}
            if self.config.dimensions:
                kwargs["dimensions"] = self.config.dimensions
            fmt = self._format
            try:
                return self._post(dict(kwargs, encoding_format=fmt))
            except openai.BadRequestError as exc:
                if fmt != "base64" or not any(w in short_message(exc).lower() for w in ("base64", "encoding")):
                    raise
                # A server without base64 answers says so: ask it for floats from now on.
                self._format = "float"
                return self._post(dict(kwargs, encoding_format="float"))

    def _post(self, body: dict) -> dict:
        # The official client's HTTP layer (auth, timeouts, its error types), with the
        # answer read as plain JSON: its typed request and response models cost about 10 ms
        # of CPU for 64 inputs, the GIL held, as much as the rest of a request's handling.
        response = self._client.post("/embeddings", body=body, cast_to=self._httpx.Response,
                                     options={"security": {"bearer_auth": True}})
        try:
            return response.json()
        except ValueError:
            raise EmbeddingError(f"the embedding server answered something that is not JSON: "
                                 f"{response.text[:200]!r}") from None

    def _vectors(self, response: dict, count: int) -> np.ndarray:
        """The response's vectors in input order, checked and normalised."""
        try:
            data = sorted(response.get("data") or [], key=lambda d: d["index"])
            rows = [np.frombuffer(base64.b64decode(d["embedding"]), dtype="<f4") if isinstance(d["embedding"], str)
                    else np.asarray(d["embedding"], dtype=np.float32) for d in data]
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise EmbeddingError(f"the embedding server answered an unreadable list of vectors ({exc!r})") from None
        if len(data) != count or [d["index"] for d in data] != list(range(count)):
            raise EmbeddingError(f"the embedding server answered {len(data)} vectors for {count} texts")
        sizes = {len(r) for r in rows}
        expected = self._dimension
        if len(sizes) != 1 or (expected is not None and sizes != {expected}) or 0 in sizes:
            want = f"; expected {expected} (dimensions)" if expected else ""
            raise EmbeddingError(f"the embedding server answered vectors of {sorted(sizes)} dimensions{want}")
        if self._dimension is None:
            self._dimension = sizes.pop()
        return normalize(np.stack(rows))


_SHARED: Dict[tuple, EmbeddingClient] = {}
_SHARED_LOCK = threading.Lock()


def shared_embedding_client(config) -> EmbeddingClient:
    """The process's one :class:`EmbeddingClient` for ``config`` (all its options), built on
    first use: every copy of the embedder in a worker process, on every thread, shares it, so
    its concurrency cap and rates hold process-wide."""
    key = config.options()
    with _SHARED_LOCK:
        found = _SHARED.get(key)
        if found is None:
            found = _SHARED[key] = EmbeddingClient(config)
        return found
