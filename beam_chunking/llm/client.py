"""ChatClient: chat completions for batch pipelines, bounded, retried, throttled and cached.

Built once per worker process from an :class:`~beam_chunking.llm.config.LLMConfig` (a
strategy's ``setup()``) and shared by the process's threads, so the concurrency cap and the
request rate hold for the whole process. What it does for each request:

1. Look the answer up in the cache; a hit costs nothing and is counted as cached.
2. Wait for a slot: at most ``max_concurrency`` requests in flight, started no faster than
   ``requests_per_minute``.
3. Send it with the official ``openai`` client (its own retries off), retrying 429s, 5xx,
   timeouts and connection errors with exponential backoff and jitter (``tenacity``), up to
   ``max_retries`` times. Any other 4xx fails at once: retrying a bad request cannot help.
4. Store the answer in the cache before returning it.

:meth:`ChatClient.complete_many` sends a document's requests concurrently, the way Beam's
``RemoteModelHandler`` batches remote calls per bundle, and returns them in order.
"""
from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence, Tuple, Union

from beam_chunking.errors import LLMError, require_extra
from beam_chunking.llm.cache import ResponseCache, cache_key
from beam_chunking.llm.config import LLMConfig

#: One request: ``(system prompt, user text, prompt version)``.
Request = Tuple[str, str, str]


@dataclass(frozen=True)
class Reply:
    """A model's answer.

    Args:
        text: The message content.
        prompt_tokens: Prompt tokens the server reported (0 for a cached answer).
        completion_tokens: Completion tokens the server reported (0 for a cached answer).
        cached: Whether the answer came from the cache.
    """

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False


class RateLimiter:
    """Spaces request starts so that at most ``per_minute`` units start per minute (shared by
    threads): a start costing ``cost`` units holds the next one back ``cost * 60 / per_minute``
    seconds. Requests cost 1 unit each; a tokens-per-minute limiter charges each request its
    tokens.

    Args:
        per_minute: Units per minute; ``None`` for no limit.
    """

    def __init__(self, per_minute: Optional[float]):
        self.interval = 60.0 / per_minute if per_minute else 0.0
        self._next = 0.0
        self._lock = threading.Lock()

    def wait(self, cost: float = 1.0) -> None:
        """Block until this caller may start a request costing ``cost`` units (default 1)."""
        if not self.interval:
            return
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self.interval * cost
        if start > now:
            time.sleep(start - now)


def retryable(openai):
    """A predicate for tenacity: 429, 408, 5xx, timeouts and connection errors of the
    ``openai`` module's client are worth another try; other errors not."""
    def check(exc: BaseException) -> bool:
        if isinstance(exc, openai.APIConnectionError):  # timeouts included
            return True
        return isinstance(exc, openai.APIStatusError) and (exc.status_code in (408, 429) or exc.status_code >= 500)
    return check


class ChatClient:
    """Sends chat requests for one worker process (see the module docstring).

    Args:
        config: Server, model, limits and cache.

    Raises:
        MissingExtra: the ``openai`` or ``tenacity`` package is missing (the ``llm`` extra).
    """

    def __init__(self, config: LLMConfig):
        self.config = config
        self._openai = require_extra("openai", "openai", "llm")
        self._tenacity = require_extra("tenacity", "tenacity", "llm")
        self._client = self._openai.OpenAI(
            api_key=os.environ.get(config.api_key_env) or "not-needed",
            base_url=config.base_url, timeout=config.timeout, max_retries=0)
        location = config.cache_location
        self.cache = ResponseCache(location) if location else None
        self._slots = threading.BoundedSemaphore(config.max_concurrency)
        self._rate = RateLimiter(config.requests_per_minute)
        self._json = config.json_mode
        self._pool = ThreadPoolExecutor(config.max_concurrency, thread_name_prefix="beam-chunking-llm")

    def close(self) -> None:
        """Release the HTTP connections and the request threads."""
        self._pool.shutdown(wait=False)
        self._client.close()

    def complete(self, system: str, text: str, prompt_version: str,
                 accept: Optional[Callable[[str], bool]] = None) -> Reply:
        """Answer one request, from the cache when it holds it.

        Args:
            system: The system prompt (the task).
            text: The user message (the input).
            prompt_version: Names the prompt; part of the cache key, so a new prompt is
                never answered from an old one's cache.
            accept: Whether the caller can use an answer (it parses, it holds what was asked
                for). Only accepted answers are cached, and a cached answer it refuses is
                asked for again: a server that answered badly once is not believed for ever.
                Default ``None``: every answer.

        Raises:
            LLMError: the request failed after its retries, or was refused.
        """
        key = cache_key(self.config.model, prompt_version, text)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None and isinstance(hit.get("text"), str) and (accept is None or accept(hit["text"])):
                return Reply(hit["text"], cached=True)
        reply = self._send(system, text)
        if self.cache is not None and (accept is None or accept(reply.text)):
            self.cache.put(key, {"model": self.config.model, "prompt_version": prompt_version, "text": reply.text,
                                 "prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens})
        return reply

    def complete_many(self, requests: Sequence[Request],
                      accept: Optional[Callable[[str], bool]] = None) -> List[Union[Reply, LLMError]]:
        """Answer ``requests`` concurrently (within the process's limits), in order; ``accept``
        as in :meth:`complete`.

        A request that fails gives its :class:`LLMError` in its place; anything else (a
        cancellation, a bug) propagates.
        """
        def one(request: Request) -> Union[Reply, LLMError]:
            try:
                return self.complete(*request, accept=accept)
            except LLMError as exc:
                return exc

        if len(requests) == 1:
            return [one(requests[0])]
        return list(self._pool.map(one, requests))

    def _send(self, system: str, text: str) -> Reply:
        openai, tenacity = self._openai, self._tenacity
        cfg = self.config
        retrying = retry_policy(tenacity, openai, cfg.max_retries, cfg.retry_initial_delay, cfg.retry_max_delay)
        messages = [{"role": "system", "content": system}, {"role": "user", "content": text}]
        try:
            response = retrying(self._request, messages)
        except openai.APIStatusError as exc:
            raise LLMError(f"the model server answered HTTP {exc.status_code}: {short_message(exc)}") from None
        except openai.APIError as exc:  # timeouts and connection errors after the retries
            raise LLMError(f"the model server could not be reached after {cfg.max_retries} retries: "
                           f"{type(exc).__name__}: {short_message(exc)}") from None
        choices = getattr(response, "choices", None) or []
        content = choices[0].message.content if choices and choices[0].message else None
        if not isinstance(content, str):
            raise LLMError("the model server answered without message content")
        usage = getattr(response, "usage", None)
        return Reply(content, int(getattr(usage, "prompt_tokens", 0) or 0),
                     int(getattr(usage, "completion_tokens", 0) or 0))

    def _request(self, messages):
        openai = self._openai
        with self._slots:
            self._rate.wait()
            kwargs = dict(model=self.config.model, messages=messages, temperature=self.config.temperature,
                          max_tokens=self.config.max_output_tokens)
            if not self._json:
                return self._client.chat.completions.create(**kwargs)
            try:
                return self._client.chat.completions.create(response_format={"type": "json_object"}, **kwargs)
            except openai.BadRequestError:
                # A server without JSON mode refuses the option: ask without it from now on
                # (answers are parsed tolerantly either way). A request that is bad for
                # another reason fails again below, and that failure is reported.
                self._json = False
                return self._client.chat.completions.create(**kwargs)


def retry_policy(tenacity, openai, max_retries: int, initial_delay: float, max_delay: float):
    """A ``tenacity.Retrying`` for one request: up to ``max_retries`` retries of
    :func:`retryable` errors, exponential backoff from ``initial_delay`` seconds capped at
    ``max_delay``, plus up to ``initial_delay`` of random jitter; the last error is re-raised."""
    return tenacity.Retrying(
        stop=tenacity.stop_after_attempt(max_retries + 1),
        wait=tenacity.wait_exponential_jitter(initial=initial_delay, max=max_delay, jitter=initial_delay),
        retry=tenacity.retry_if_exception(retryable(openai)), reraise=True)


def short_message(exc: BaseException) -> str:
    """An error's message on one line, at most 300 characters."""
    text = " ".join(str(getattr(exc, "message", None) or exc).split())
    return text[:300]


_SHARED: dict = {}
_SHARED_LOCK = threading.Lock()


def shared_client(config: LLMConfig) -> ChatClient:
    """The process's one :class:`ChatClient` for ``config``, built on first use.

    Strategies hold only the picklable config; every copy of a strategy in a worker process,
    on every thread, shares this client, so its concurrency cap and rate hold process-wide.
    """
    with _SHARED_LOCK:
        found = _SHARED.get(config)
        if found is None:
            found = _SHARED[config] = ChatClient(config)
        return found
