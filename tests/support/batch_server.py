"""A loopback server that speaks both vendors' batch APIs (and their online endpoints, counted).

OpenAI: ``POST /v1/files`` (multipart, ``purpose=batch``), ``POST /v1/batches``,
``GET /v1/batches/{id}``, ``GET /v1/files/{id}/content``; Anthropic: ``POST /v1/messages/batches``,
``GET /v1/messages/batches/{id}``, ``GET /v1/messages/batches/{id}/results``. Online:
``POST /v1/chat/completions``, ``/v1/completions`` and ``/v1/messages``, answered with the same
deterministic answers a batch line gets (:func:`tests.support.rate_limited_server.answer`), so a
batch answer equals the online one.

A batch ends after ``polls_to_end`` looks at it. ``mode`` makes it misbehave: ``never`` (never
ends), ``expire_first`` (the first batch expires without answering), ``garbage`` (lines that are
not JSON), ``dupes`` (every answer twice, and an unknown custom_id), ``huge`` (a results file of
``huge_bytes`` padding after the answers), ``bad_status`` (a status the API does not define),
``nan`` (log-probabilities that are not numbers), ``cut`` (results downloads that break off),
``lose_create`` (the first batch is created but the connection closes before its reply),
``circular_list`` (a batch listing that always says it has more, and serves the same page).
Both vendors' batch listings (``GET /v1/batches``, ``GET /v1/messages/batches``, newest first)
are served, OpenAI's batches with the ``metadata`` they were created with.

Bounded: 127.0.0.1 only, at most ``MAX_BODY_BYTES`` per request, ``max_requests`` in all, and it
shuts itself down ``deadline_s`` after it starts.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.loopback import LoopbackServer
from tests.support.rate_limited_server import answer, completion_text

MAX_BODY_BYTES = 256 * 1024 * 1024


def message_answer(body: dict[str, Any]) -> dict[str, Any]:
    """The Anthropic Messages answer to ``body`` (the same words the OpenAI answer has)."""
    messages = body.get("messages") or []
    last = messages[-1] if messages and isinstance(messages[-1], dict) else {}
    prompt = str(last.get("content", ""))
    tokens = completion_text(prompt, int(body.get("max_tokens") or 4))
    return {
        "id": "msg_loopback",
        "type": "message",
        "role": "assistant",
        "model": str(body.get("model", "loopback")),
        "content": [{"type": "text", "text": "".join(tokens)}],
        "stop_reason": "max_tokens",
        "stop_sequence": None,
        "usage": {"input_tokens": max(1, len(prompt) // 4), "output_tokens": len(tokens)},
    }


def read_body(handler: BaseHTTPRequestHandler) -> bytes | None:
    """A request's body (plain or chunked); ``None`` past ``MAX_BODY_BYTES``."""
    if handler.headers.get("Transfer-Encoding", "").lower() == "chunked":
        parts: list[bytes] = []
        size = 0
        while True:
            n = int(handler.rfile.readline().strip() or b"0", 16)
            size += n
            if size > MAX_BODY_BYTES:
                return None
            if n == 0:
                handler.rfile.readline()
                return b"".join(parts)
            parts.append(handler.rfile.read(n))
            handler.rfile.readline()
    length = int(handler.headers.get("Content-Length") or 0)
    return None if length > MAX_BODY_BYTES else handler.rfile.read(length)


@dataclass
class _Batch:
    id: str
    vendor: str
    endpoint: str
    input: bytes
    metadata: dict[str, Any] | None = None
    created_at: float = field(default_factory=time.time)
    polls: int = 0
    output: bytes | None = None
    expired: bool = False


@dataclass
class Seen:
    """What the server was asked."""

    online: int = 0
    batches_created: int = 0
    polls: int = 0
    lines: int = 0
    paths: list[str] = field(default_factory=list)


class BatchServer(LoopbackServer):
    """The server (a context manager); ``openai_url`` and ``anthropic_url`` are the SDKs' base URLs."""

    def __init__(
        self,
        *,
        polls_to_end: int = 2,
        mode: str = "ok",
        huge_bytes: int = 0,
        max_requests: int = 10_000,
        deadline_s: float = 300.0,
        cached_tokens: int = 0,
    ) -> None:
        self.polls_to_end = polls_to_end
        self.cached_tokens = cached_tokens
        """Prompt tokens every answer says it read from the prompt cache (both vendors' usage fields)."""
        self.mode = mode
        self.huge_bytes = huge_bytes
        self.max_requests = max_requests
        self.seen = Seen()
        self._lock = threading.Lock()
        self._files: dict[str, bytes] = {}
        self._batches: dict[str, _Batch] = {}
        self._serve(self._handler(), "batch-server", deadline_s)
        self._httpd.handle_error = lambda request, client_address: None  # type: ignore[method-assign]  # a client hanging up

    @property
    def openai_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def anthropic_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    # -- the APIs ------------------------------------------------------------------------

    def _cached(self, reply: dict[str, Any]) -> dict[str, Any]:
        """``reply`` with ``cached_tokens`` of its prompt read from the cache, in its vendor's words."""
        usage = reply.get("usage")
        if self.cached_tokens and isinstance(usage, dict):
            if "input_tokens" in usage:  # Anthropic: input_tokens leaves the cached ones out
                cached = min(self.cached_tokens, usage["input_tokens"])
                usage["input_tokens"] -= cached
                usage["cache_read_input_tokens"] = cached
            else:
                cached = min(self.cached_tokens, usage["prompt_tokens"])
                usage["prompt_tokens_details"] = {"cached_tokens": cached}
        return reply

    def _new_batch(self, vendor: str, endpoint: str, data: bytes, metadata: Any = None) -> _Batch:
        with self._lock:
            self.seen.batches_created += 1
            batch = _Batch(f"batch_{self.seen.batches_created}", vendor, endpoint, data, metadata)
            batch.expired = self.mode == "expire_first" and self.seen.batches_created == 1
            self._batches[batch.id] = batch
            return batch

    def _poll(self, batch_id: str) -> _Batch | None:
        with self._lock:
            batch = self._batches.get(batch_id)
            if batch is not None:
                self.seen.polls += 1
                batch.polls += 1
                if batch.output is None and batch.polls >= self.polls_to_end and self.mode != "never":
                    batch.output = b"".join(self._results(batch))
                    self._files[f"file-out-{batch.id}"] = batch.output
            return batch

    def _requests(self, batch: _Batch) -> Iterator[tuple[str, dict[str, Any]]]:
        if batch.vendor == "openai":
            for raw in batch.input.splitlines():
                if raw.strip():
                    line = json.loads(raw)
                    yield line["custom_id"], line["body"]
        else:
            for item in json.loads(batch.input)["requests"]:
                yield item["custom_id"], item["params"]

    def _results(self, batch: _Batch) -> Iterator[bytes]:
        for custom_id, body in self._requests(batch):
            self.seen.lines += 1
            if self.mode == "garbage":
                yield b"{not json at all\n"
                continue
            line = self._line(batch, custom_id, body)
            yield line
            if self.mode == "dupes":
                yield line
        if self.mode == "dupes":
            yield self._line(batch, "f" * 64, {"messages": [{"role": "user", "content": "x"}], "prompt": "x"})
        if self.mode == "huge":
            yield b"x" * self.huge_bytes + b"\n"

    def _line(self, batch: _Batch, custom_id: str, body: dict[str, Any]) -> bytes:
        out: dict[str, Any]
        if batch.vendor == "openai":
            if batch.expired:
                error = {"code": "batch_expired", "message": "This request could not be executed before expiry."}
                out = {"id": "r", "custom_id": custom_id, "response": None, "error": error}
            else:
                response = {"status_code": 200, "request_id": "r", "body": self._cached(answer(batch.endpoint, body))}
                out = {"id": "r", "custom_id": custom_id, "response": response, "error": None}
        elif batch.expired:
            out = {"custom_id": custom_id, "result": {"type": "expired"}}
        else:
            out = {
                "custom_id": custom_id,
                "result": {"type": "succeeded", "message": self._cached(message_answer(body))},
            }
        data = json.dumps(out).encode() + b"\n"
        return data.replace(b"-0.5", b"NaN") if self.mode == "nan" else data

    def openai_batch(self, batch: _Batch) -> dict[str, Any]:
        status = "bogus" if self.mode == "bad_status" else ("in_progress" if batch.output is None else "completed")
        if batch.output is not None and batch.expired:
            status = "expired"
        total = sum(1 for _ in batch.input.splitlines())
        done = total if batch.output is not None else 0
        return {
            "id": batch.id,
            "object": "batch",
            "endpoint": batch.endpoint,
            "input_file_id": f"file-in-{batch.id}",
            "completion_window": "24h",
            "status": status,
            "created_at": int(batch.created_at),
            "metadata": batch.metadata,
            "output_file_id": None if batch.output is None or batch.expired else f"file-out-{batch.id}",
            "error_file_id": f"file-out-{batch.id}" if batch.output is not None and batch.expired else None,
            "request_counts": {
                "total": total,
                "completed": 0 if batch.expired else done,
                "failed": done if batch.expired else 0,
            },
        }

    def anthropic_batch(self, batch: _Batch) -> dict[str, Any]:
        ended = batch.output is not None
        total = len(json.loads(batch.input)["requests"])
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": "bogus" if self.mode == "bad_status" else ("ended" if ended else "in_progress"),
            "request_counts": {
                "processing": 0 if ended else total,
                "succeeded": total if ended and not batch.expired else 0,
                "errored": 0,
                "canceled": 0,
                "expired": total if ended and batch.expired else 0,
            },
            "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(batch.created_at)),
            "expires_at": "2026-01-02T00:00:00Z",
            "ended_at": "2026-01-01T01:00:00Z" if ended else None,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"{self.anthropic_url}/v1/messages/batches/{batch.id}/results" if ended else None,
        }

    def _listing(self, vendor: str) -> dict[str, Any]:
        """One page of the vendor's batch listing: every batch, newest first."""
        show = self.openai_batch if vendor == "openai" else self.anthropic_batch
        with self._lock:
            listed = [b for b in reversed(self._batches.values()) if b.vendor == vendor]
        data = [show(b) for b in listed]
        ids = [b["id"] for b in data]
        page = {"object": "list", "data": data, "has_more": self.mode == "circular_list"}
        return {**page, "first_id": ids[0] if ids else None, "last_id": ids[-1] if ids else None}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def _send(self, status: int, body: dict[str, Any] | bytes, content_type: str = "application/json") -> None:
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                cut = server.mode == "cut" and content_type != "application/json"
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data) + (1000 if cut else 0)))
                if cut:  # a results download that breaks off halfway
                    self.end_headers()
                    self.wfile.write(data[: len(data) // 2])
                    self.close_connection = True
                    return
                self.end_headers()
                self.wfile.write(data)

            def _admit(self) -> bool:
                with server._lock:
                    server.seen.paths.append(f"{self.command} {self.path}")
                    if len(server.seen.paths) > server.max_requests:
                        self._send(503, {"error": {"message": "request budget used up", "type": "server"}})
                        return False
                return True

            def do_GET(self) -> None:
                if not self._admit():
                    return
                parts = self.path.split("?")[0].strip("/").split("/")
                if parts in (["v1", "batches"], ["v1", "messages", "batches"]):
                    self._send(200, server._listing("openai" if len(parts) == 2 else "anthropic"))
                elif parts[:2] == ["v1", "batches"] and len(parts) == 3:
                    batch = server._poll(parts[2])
                    self._send(200, server.openai_batch(batch)) if batch else self._send(404, {"error": {}})
                elif parts[:2] == ["v1", "files"] and len(parts) == 4 and parts[3] == "content":
                    data = server._files.get(parts[2])
                    self._send(200, data, "application/octet-stream") if data is not None else self._send(404, {})
                elif parts[:3] == ["v1", "messages", "batches"] and len(parts) == 4:
                    batch = server._poll(parts[3])
                    self._send(200, server.anthropic_batch(batch)) if batch else self._send(404, {"error": {}})
                elif parts[:3] == ["v1", "messages", "batches"] and len(parts) == 5 and parts[4] == "results":
                    batch = server._batches.get(parts[3])
                    out = batch.output if batch is not None else None
                    self._send(200, out, "application/binary") if out is not None else self._send(404, {})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def _reply_created(self, batch: dict[str, Any]) -> None:
                if server.mode == "lose_create" and server.seen.batches_created == 1:
                    self.close_connection = True  # created, but the reply never arrives
                    return
                self._send(200, batch)

            def do_POST(self) -> None:
                if not self._admit():
                    return
                data = read_body(self)
                if data is None:
                    self.close_connection = True
                    self._send(413, {"error": {"message": "request too large", "type": "invalid_request"}})
                    return
                path = self.path.split("?")[0].rstrip("/")
                if path == "/v1/files":
                    self._send(200, server._upload(self.headers.get("Content-Type", ""), data))
                elif path == "/v1/batches":
                    body = json.loads(data)
                    batch = server._new_batch(
                        "openai", body["endpoint"], server._files[body["input_file_id"]], body.get("metadata")
                    )
                    self._reply_created(server.openai_batch(batch))
                elif path == "/v1/messages/batches":
                    batch = server._new_batch("anthropic", "/v1/messages", data)
                    self._reply_created(server.anthropic_batch(batch))
                elif path in ("/v1/chat/completions", "/v1/completions", "/v1/messages"):
                    with server._lock:
                        server.seen.online += 1
                    body = json.loads(data)
                    self._send(
                        200, server._cached(message_answer(body) if path == "/v1/messages" else answer(path, body))
                    )
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

        return Handler

    def _upload(self, content_type: str, data: bytes) -> dict[str, Any]:
        """Store the ``file`` part of a multipart upload."""
        boundary = content_type.split("boundary=")[-1].strip('"').encode()
        content = b""
        for part in data.split(b"--" + boundary):
            head, _, rest = part.partition(b"\r\n\r\n")
            if b'name="file"' in head:
                content = rest.removesuffix(b"\r\n")
        with self._lock:
            file_id = f"file-in-{len(self._files) + 1}"
            self._files[file_id] = content
        return {
            "id": file_id,
            "object": "file",
            "bytes": len(content),
            "created_at": 0,
            "filename": "batch.jsonl",
            "purpose": "batch",
            "status": "processed",
        }
