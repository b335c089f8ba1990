"""A loopback OpenAI-compatible server with a fixed latency and a concurrency limit.

Used by the adaptive-concurrency tests and by ``python -m tools.bench.api``. It answers
``POST /v1/completions`` and ``POST /v1/chat/completions`` after ``latency_s`` with a
deterministic completion (with logprobs, as the legacy completions API gives them). A
request that arrives while ``limit`` others are being served is refused at once with
429, ``Retry-After`` (whole seconds, rounded up, as HTTP allows) and ``retry-after-ms``
(OpenAI's header, which the OpenAI SDK and holistic read first).

Bounded, so that nothing it is sent can keep it running: it listens on 127.0.0.1 only,
reads at most ``MAX_BODY_BYTES`` of a request, answers 503 once ``max_requests`` have
arrived, and shuts itself down ``deadline_s`` after it starts.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.loopback import LoopbackServer

MAX_BODY_BYTES = 1 << 20


@dataclass(frozen=True)
class ServerStats:
    served: int
    rate_limited: int
    peak_in_flight: int
    first_arrival: float | None
    last_answer: float | None
    in_flight_at_arrival: tuple[int, ...]
    """Requests being served when each accepted request arrived (itself included), in order."""

    @property
    def span_s(self) -> float:
        """From the first request's arrival to the last answer (0 when nothing was served)."""
        if self.first_arrival is None or self.last_answer is None:
            return 0.0
        return self.last_answer - self.first_arrival


def completion_text(prompt: str, max_tokens: int) -> list[str]:
    """The tokens answered for ``prompt``: up to 4 words drawn from its hash."""
    digest = hashlib.sha256(prompt.encode("utf-8", "surrogatepass")).hexdigest()
    return [f" w{digest[2 * k : 2 * k + 2]}" for k in range(max(1, min(int(max_tokens or 1), 4)))]


class RateLimitedServer(LoopbackServer):
    """The server (a context manager); ``url`` is its ``/v1`` base URL."""

    def __init__(
        self,
        *,
        limit: int,
        latency_s: float,
        retry_after_s: float | None = None,
        max_requests: int = 100_000,
        deadline_s: float = 600.0,
    ) -> None:
        self.limit = limit
        self.latency_s = latency_s
        self.retry_after_s = latency_s if retry_after_s is None else retry_after_s
        self.max_requests = max_requests
        self.deadline_s = deadline_s
        self._lock = threading.Lock()
        self._arrived = 0
        self._reset_counts()
        self._serve(self._handler(), "rate-limited-server", deadline_s)

    def _reset_counts(self) -> None:
        self._in_flight = 0
        self._served = 0
        self._rate_limited = 0
        self._peak = 0
        self._first: float | None = None
        self._last: float | None = None
        self._at_arrival: list[int] = []

    def reset(self) -> None:
        """Zero the counts (between the tools of a benchmark); the request budget is not reset."""
        with self._lock:
            self._reset_counts()

    def stats(self) -> ServerStats:
        with self._lock:
            return ServerStats(
                self._served,
                self._rate_limited,
                self._peak,
                self._first,
                self._last,
                tuple(self._at_arrival),
            )

    # -- serving -----------------------------------------------------------------------------

    def _admit(self) -> str:
        """``ok``, ``limited`` or ``exhausted`` for a request arriving now."""
        with self._lock:
            self._arrived += 1
            if self._arrived > self.max_requests:
                return "exhausted"
            now = time.monotonic()
            if self._first is None:
                self._first = now
            if self._in_flight >= self.limit:
                self._rate_limited += 1
                return "limited"
            self._in_flight += 1
            self._peak = max(self._peak, self._in_flight)
            self._at_arrival.append(self._in_flight)
            return "ok"

    def _done(self) -> None:
        with self._lock:
            self._in_flight -= 1
            self._served += 1
            self._last = time.monotonic()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def _send(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._send(200, {"object": "list", "data": [{"id": "bench", "object": "model"}]})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length > MAX_BODY_BYTES:
                    self.close_connection = True
                    self._send(413, {"error": {"message": "request too large", "type": "invalid_request"}})
                    return
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    self._send(400, {"error": {"message": "body is not JSON", "type": "invalid_request"}})
                    return
                verdict = server._admit()
                if verdict == "exhausted":
                    self._send(503, {"error": {"message": "request budget used up", "type": "server"}})
                    return
                if verdict == "limited":
                    wait = server.retry_after_s
                    headers = {"Retry-After": str(max(1, math.ceil(wait))), "retry-after-ms": str(int(wait * 1000))}
                    self._send(
                        429, {"error": {"message": "too many requests in flight", "type": "rate_limit"}}, headers
                    )
                    return
                try:
                    time.sleep(server.latency_s)
                    self._send(200, answer(self.path, body))
                finally:
                    server._done()

        return Handler


def answer(path: str, body: dict[str, Any]) -> dict[str, Any]:
    """The 200 answer to a completions or chat request."""
    chat = path.rstrip("/").endswith("chat/completions")
    if chat:
        messages = body.get("messages") or []
        prompt = str(messages[-1].get("content", "")) if messages and isinstance(messages[-1], dict) else ""
    else:
        raw = body.get("prompt", "")
        prompt = str(raw[0] if isinstance(raw, list) and raw else raw)
    tokens = completion_text(prompt, body.get("max_tokens") or body.get("max_completion_tokens") or 4)
    text = "".join(tokens)
    usage = {"prompt_tokens": max(1, len(prompt) // 4), "completion_tokens": len(tokens)}
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    if chat:
        choice: dict[str, Any] = {
            "index": 0,
            "message": {"role": "assistant", "content": text},
            "finish_reason": "length",
        }
        return {"object": "chat.completion", **_envelope(body, choice, usage)}
    offsets = [len(prompt) + sum(len(t) for t in tokens[:k]) for k in range(len(tokens))]
    logprobs = {
        "tokens": tokens,
        "token_logprobs": [-0.5] * len(tokens),
        "top_logprobs": [{t: -0.5} for t in tokens],
        "text_offset": offsets,
    }
    choice = {"index": 0, "text": text, "finish_reason": "length", "logprobs": logprobs}
    return {"object": "text_completion", **_envelope(body, choice, usage)}


def _envelope(body: dict[str, Any], choice: dict[str, Any], usage: dict[str, int]) -> dict[str, Any]:
    return {"id": "bench", "created": 0, "model": str(body.get("model", "bench")), "choices": [choice], "usage": usage}
