"""A local OpenAI-compatible chat-completions server for tests, on 127.0.0.1.

It answers deterministically and can be told to misbehave: HTTP errors for the next
requests, slow answers, refusal of JSON mode, or any content. The real ``openai`` client is
pointed at it; nothing in the package under test is mocked.
"""
from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional

_SENTENCE = re.compile(r"[^.!?]+[.!?]")


def propositions_of(text: str) -> Dict[str, Any]:
    """The default answer: each sentence of the user text is one proposition."""
    return {"propositions": [s.strip() for s in _SENTENCE.findall(text) if s.strip()]}


class ChatServer:
    """Start with :meth:`start`; ``base_url`` is what the client needs.

    Attributes:
        requests: Every request body received, in order.
        headers: Every request's HTTP headers, in order.
        started: ``time.monotonic()`` of each request's arrival.
        answer: ``answer(system, user) -> str | dict | list``: the content of a normal reply
            (a dict or list is sent as its JSON). Default :func:`propositions_of` the user text.
        failures: HTTP statuses to answer the next requests with, consumed one per request.
        delay: Seconds to wait before answering each request.
        refuse_json_mode: Answer 400 to requests that ask for ``response_format``.
    """

    def __init__(self) -> None:
        self.requests: List[Dict[str, Any]] = []
        self.headers: List[Dict[str, str]] = []
        self.started: List[float] = []
        self.answer: Callable[[str, str], Any] = lambda system, user: propositions_of(user)
        self.failures: List[int] = []
        self.delay = 0.0
        self.refuse_json_mode = False
        self._lock = threading.Lock()
        self._httpd: Optional[ThreadingHTTPServer] = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def calls(self) -> int:
        return len(self.requests)

    def start(self) -> "ChatServer":
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                with server._lock:
                    server.requests.append(body)
                    server.headers.append(dict(self.headers))
                    server.started.append(time.monotonic())
                    status = server.failures.pop(0) if server.failures else 200
                if server.delay:
                    time.sleep(server.delay)
                if status == 200 and server.refuse_json_mode and "response_format" in body:
                    status = 400
                if status != 200:
                    return self._send(status, {"error": {"message": f"test server says {status}", "type": "test"}})
                messages = body.get("messages", [])
                system = next((m["content"] for m in messages if m["role"] == "system"), "")
                user = next((m["content"] for m in messages if m["role"] == "user"), "")
                content = server.answer(system, user)
                if not isinstance(content, str):
                    content = json.dumps(content)
                self._send(200, {
                    "id": f"chatcmpl-{len(server.requests)}", "object": "chat.completion", "created": 0,
                    "model": body.get("model", "test"),
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": content}}],
                    "usage": {"prompt_tokens": len(user.split()) + 10, "completion_tokens": len(content.split()),
                              "total_tokens": len(user.split()) + 10 + len(content.split())},
                })

            def _send(self, status, payload):
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
                    pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
