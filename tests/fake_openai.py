"""A real local HTTP server that speaks the OpenAI chat-completions protocol, with injected faults.

Started by tests on 127.0.0.1 (an ephemeral port). Each request is answered
by ``plan(body, attempt)``, where ``attempt`` counts earlier requests with the
same messages (so "fail twice, then succeed" is expressible); it returns a
:class:`Reply`. :func:`marker_plan` reads a fault marker such as
``<<fault:500x2>>`` from the request text.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

OK_TEXT = "[ACTION: CONFIRM] Great, let's go with that."


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: bytes | None = None  # None: a chat completion holding ``text``
    text: str = OK_TEXT
    content_type: str = "application/json"
    delay: float = 0.0
    headers: tuple[tuple[str, str], ...] = ()  # extra response headers, e.g. (("retry-after", "2"),)


def completion(text: str, model: str = "fake") -> bytes:
    return json.dumps({
        "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": len(text.split()), "total_tokens": 1},
    }).encode()


def message_completion(message: dict[str, Any], finish_reason: str = "length") -> bytes:
    """A chat completion whose message is given as is (``content`` null, a list, extra fields...)."""
    return json.dumps({
        "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": "fake",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 7, "total_tokens": 8},
    }).encode()


FAULTS: dict[str, Reply] = {
    "500": Reply(status=500, body=b'{"error": {"message": "boom"}}'),
    "503": Reply(status=503, body=b'{"error": {"message": "overloaded"}}'),
    "400": Reply(status=400, body=b'{"error": {"message": "bad request"}}'),
    "badjson": Reply(body=b'{"choices": [ {"message": '),
    "text": Reply(body=b"<html>gateway hiccup</html>", content_type="text/html"),
    "nochoices": Reply(body=b'{"id": "x", "object": "chat.completion", "choices": []}'),
    "nocontent": Reply(body=b'{"id": "x", "choices": [{"index": 0, "message": {"role": "assistant"}}]}'),
    "garbage": Reply(text="qwzx !! ## not an action at all"),
    "hang": Reply(delay=5.0),
}
_MARKER = re.compile(r"<<fault:([a-z]+|\d+)(?:x(\d+))?(?::([\d.]+))?>>")


def request_text(body: dict[str, Any]) -> str:
    parts = []
    for m in body.get("messages", []):
        content = m.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(p.get("text", "") for p in content if isinstance(p, dict))
    return "\n".join(parts)


def marker_plan(body: dict[str, Any], attempt: int) -> Reply:
    """``<<fault:NAME>>`` always, ``<<fault:NAMExN>>`` the first N attempts, ``<<fault:slow:S>>`` delay S s."""
    m = _MARKER.search(request_text(body))
    if m is None:
        return Reply()
    name, times, seconds = m.group(1), m.group(2), m.group(3)
    if name == "slow":
        return Reply(delay=float(seconds or 0.2))
    if times is not None and attempt >= int(times):
        return Reply()
    return FAULTS[name]


class FakeChatServer:
    """``with FakeChatServer(plan) as server: server.url`` -> ``http://127.0.0.1:PORT/v1``."""

    def __init__(self, plan: Callable[[dict[str, Any], int], Reply] = marker_plan) -> None:
        self.plan = plan
        self.attempts: Counter[str] = Counter()
        self.bodies: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                key = hashlib.sha1(json.dumps(body.get("messages"), sort_keys=True).encode()).hexdigest()
                with server._lock:
                    attempt = server.attempts[key]
                    server.attempts[key] += 1
                    server.bodies.append(body)
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    reply = server.plan(body, attempt)
                    if reply.delay:
                        time.sleep(reply.delay)
                    payload = reply.body if reply.body is not None else completion(reply.text, body.get("model", ""))
                    self.send_response(reply.status)
                    self.send_header("content-type", reply.content_type)
                    self.send_header("content-length", str(len(payload)))
                    for name, value in reply.headers:
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout)
                finally:
                    with server._lock:
                        server.in_flight -= 1

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> FakeChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
