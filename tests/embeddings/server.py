"""A local OpenAI-compatible ``/v1/embeddings`` server for tests and the bench, on 127.0.0.1.

Vectors are deterministic: a text's vector is drawn from a generator seeded by its SHA-256
(not normalised, so a client's normalising shows), ``dimensions`` long when the request asks,
else :attr:`EmbeddingServer.dimension`. It can be told to misbehave: HTTP errors for the next
requests, a latency, a requests-per-minute limit (answered 429), a cap on inputs per request
(answered 413), no base64 answers (400), no usage. The real ``openai`` client is pointed at
it; nothing under test is mocked.

Run on its own (the bench does, so the server does not share the client's interpreter)::

    python -m tests.embeddings.server --latency 0.05 --rpm 3000    # prints its base URL
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Optional

import numpy as np


def vector_of(text: str, dimension: int) -> np.ndarray:
    """The server's raw (unnormalised) vector for ``text``."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
    return np.random.default_rng(seed).standard_normal(dimension).astype(np.float32)


def unit_vector_of(text: str, dimension: int) -> np.ndarray:
    """What a client should return for ``text``: :func:`vector_of`, L2-normalised."""
    v = vector_of(text, dimension)
    return v / np.linalg.norm(v)


class EmbeddingServer:
    """Start with :meth:`start`; ``base_url`` is what the client needs.

    Attributes:
        requests: Every request body received, in order (429s of the rate limit included).
        headers: Every request's HTTP headers (names in lower case), in order.
        started: ``time.monotonic()`` of each request's arrival.
        dimension: Vector size when a request asks for none. Default 8.
        failures: HTTP statuses to answer the next requests with, consumed one per request.
        latency: Seconds to wait before answering each request.
        rpm: Requests per minute allowed (a token bucket holding ``burst``); more get 429.
        max_inputs: Inputs per request allowed; more get 413.
        refuse_base64: Answer 400 to requests asking for base64.
        ignore_dimensions: Answer ``dimension``-long vectors whatever a request asks.
        usage: Report ``usage`` (prompt tokens: the inputs' words).
    """

    def __init__(self, dimension: int = 8, latency: float = 0.0, rpm: Optional[float] = None, burst: float = 5):
        self.requests: List[Dict[str, Any]] = []
        self.headers: List[Dict[str, str]] = []
        self.started: List[float] = []
        self.dimension = dimension
        self.failures: List[int] = []
        self.latency = latency
        self.rpm = rpm
        self.burst = burst
        self.max_inputs: Optional[int] = None
        self.refuse_base64 = False
        self.ignore_dimensions = False
        self.usage = True
        self.limited = 0
        self._bucket = burst
        self._filled = time.monotonic()
        self._lock = threading.Lock()
        self._httpd: Optional[ThreadingHTTPServer] = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def calls(self) -> int:
        """Requests received."""
        return len(self.requests)

    @property
    def texts(self) -> List[str]:
        """Every input received, in order."""
        return [t for body in self.requests for t in _inputs(body)]

    def _admit(self) -> bool:
        if not self.rpm:
            return True
        now = time.monotonic()
        self._bucket = min(self.burst, self._bucket + (now - self._filled) * self.rpm / 60.0)
        self._filled = now
        if self._bucket >= 1:
            self._bucket -= 1
            return True
        self.limited += 1
        return False

    def answer(self, body: Dict[str, Any], headers: Optional[Dict[str, str]] = None) -> tuple:
        """``(status, payload)`` for one request body."""
        with self._lock:
            self.requests.append(body)
            self.headers.append({k.lower(): v for k, v in (headers or {}).items()})
            self.started.append(time.monotonic())
            status = self.failures.pop(0) if self.failures else 200
            if status == 200 and not self._admit():
                status = 429
        if self.latency:
            time.sleep(self.latency)
        inputs = _inputs(body)
        fmt = body.get("encoding_format", "float")
        if status == 200 and self.max_inputs is not None and len(inputs) > self.max_inputs:
            status = 413
        if status == 200 and (any(not t for t in inputs) or (fmt == "base64" and self.refuse_base64)):
            status = 400
        if status == 400 and fmt == "base64" and self.refuse_base64:
            return status, {"error": {"message": "encoding_format 'base64' is not supported", "type": "test"}}
        if status != 200:
            return status, {"error": {"message": f"test server says {status}", "type": "test"}}
        dim = self.dimension if self.ignore_dimensions else int(body.get("dimensions") or self.dimension)
        data = []
        for k, text in enumerate(inputs):
            v = vector_of(text, dim)
            value = base64.b64encode(v.tobytes()).decode() if fmt == "base64" else v.tolist()
            data.append({"object": "embedding", "index": k, "embedding": value})
        data.reverse()  # servers need not answer in order: the index says where each goes
        words = sum(len(t.split()) for t in inputs)
        payload = {"object": "list", "model": body.get("model", "test"), "data": data}
        if self.usage:
            payload["usage"] = {"prompt_tokens": words, "total_tokens": words}
        return 200, payload

    def start(self, port: int = 0) -> "EmbeddingServer":
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real servers

            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                status, payload = server.answer(body, dict(self.headers))
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
                    pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()


def _inputs(body: Dict[str, Any]) -> List[str]:
    value = body.get("input", [])
    return [value] if isinstance(value, str) else list(value)


def main(argv: Optional[List[str]] = None) -> None:
    """Serve until killed; print the base URL, then each request count on ``stats`` lines
    when stdin says ``stats`` (the bench asks between rounds)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--dimension", type=int, default=512)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--rpm", type=float, default=None)
    parser.add_argument("--burst", type=float, default=5)
    args = parser.parse_args(argv)
    server = EmbeddingServer(args.dimension, args.latency, args.rpm, args.burst).start()
    print(server.base_url, flush=True)
    for line in sys.stdin:
        if line.strip() == "stats":
            print(json.dumps({"requests": server.calls, "limited": server.limited}), flush=True)


if __name__ == "__main__":
    main()
