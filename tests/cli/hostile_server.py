"""A hostile OpenAI-compatible server on 127.0.0.1 for the fault-injection tests.

The model id of a request chooses how it misbehaves (``ok`` answers well); after
:meth:`HostileServer.heal` every model answers well, as a fixed server would."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODES = (
    "ok",
    "surrogate",
    "huge_count",
    "nan",
    "infinity",
    "trickle",
    "trickle_headers",
    "endless",
    "huge_length",
    "silent",
    "echo",
    "echo_error",
)


def _echo(payload: dict[str, Any]) -> bytes:
    """A server that echoes what it was sent (its whole JSON body), in 5-character tokens: a key in
    it is split across tokens, and shows in the finish reason too."""
    text = json.dumps(payload, sort_keys=True)
    pieces = [text[i : i + 5] for i in range(0, len(text), 5)]
    choice = {
        "index": 0,
        "text": text,
        "finish_reason": "stop",
        "logprobs": {
            "tokens": pieces,
            "token_logprobs": [-0.5] * len(pieces),
            "top_logprobs": [{p: -0.5} for p in pieces],
            "text_offset": [5 * i for i in range(len(pieces))],
        },
    }
    usage = {"prompt_tokens": 5, "completion_tokens": len(pieces), "total_tokens": 5 + len(pieces)}
    body = {"id": "x", "object": "text_completion", "created": 0, "model": "echo", "choices": [choice], "usage": usage}
    return json.dumps(body).encode()


def _answer(mode: str, model: str) -> bytes:
    text, logprob, usage = "42", -0.5, {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}
    if mode == "surrogate":
        text = "4\ud8002"
    elif mode == "huge_count":
        usage = {"prompt_tokens": 10**30, "completion_tokens": 1, "total_tokens": 10**30}
    elif mode in ("nan", "infinity"):
        logprob = float("nan") if mode == "nan" else float("inf")
    choice: dict[str, Any] = {
        "index": 0,
        "text": text,
        "finish_reason": "stop",
        "logprobs": {
            "tokens": [text],
            "token_logprobs": [logprob],
            "top_logprobs": [{text: logprob}],
            "text_offset": [0],
        },
    }
    body = {"id": "x", "object": "text_completion", "created": 0, "model": model, "choices": [choice], "usage": usage}
    return json.dumps(body).encode()  # json.dumps writes NaN/Infinity and \\ud800 as such servers do


class HostileServer:
    def __init__(self) -> None:
        self.healed = False
        self.requests = 0
        self.payloads: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                payload = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.requests += 1
                    server.payloads.append(payload)
                model = str(payload.get("model", "ok"))
                mode = "ok" if server.healed else model
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client gave up
                    server._respond(self, mode, model, payload)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def _respond(self, handler: BaseHTTPRequestHandler, mode: str, model: str, payload: dict[str, Any]) -> None:
        if mode == "silent":  # headers never come
            time.sleep(600)
            return
        if mode == "trickle_headers":  # the status line and then header lines, one byte every half second
            head = b"HTTP/1.1 200 OK\r\n" + b"X-Pad: a\r\n" * 1000
            for i in range(len(head)):
                handler.wfile.write(head[i : i + 1])
                handler.wfile.flush()
                time.sleep(0.5)
            return
        if mode in ("trickle", "huge_length"):
            handler.send_response(200)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(2**31 if mode == "huge_length" else 10_000))
            handler.end_headers()
            for _ in range(10_000 if mode == "trickle" else 2**31 // 65536):
                handler.wfile.write(b" " if mode == "trickle" else b" " * 65536)
                handler.wfile.flush()
                if mode == "trickle":
                    time.sleep(0.5)
            return
        if mode == "endless":
            handler.send_response(200)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Transfer-Encoding", "chunked")
            handler.end_headers()
            chunk = b" " * 65536
            while True:
                handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        if mode == "echo_error":  # a rejected request whose error message quotes the request
            error = json.dumps({"error": {"message": "bad request: " + json.dumps(payload), "type": "invalid"}})
            handler.send_response(400)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(error.encode())))
            handler.end_headers()
            handler.wfile.write(error.encode())
            return
        body = _echo(payload) if mode == "echo" else _answer(mode, model)
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    def heal(self) -> None:
        self.healed = True

    def models_file(self, path: Any, *, timeout_s: float = 2.0, max_attempts: int = 1) -> Any:
        """A registry of one deployment per mode, ``hostile/<mode>``, on this server."""
        entries = "".join(
            f"  - name: hostile/{mode}\n    provider: openai\n    model_id: {mode}\n    context_window: 4096\n"
            f"    args: {{base_url: 'http://127.0.0.1:{self.port}/v1', timeout_s: {timeout_s}, "
            f"max_attempts: {max_attempts}, max_concurrency: 2}}\n"
            "    capabilities: {logprobs: true, completions: true, chat: false}\n"
            for mode in MODES
        )
        path.write_text("models:\n" + entries, encoding="utf-8")
        return path

    def __enter__(self) -> HostileServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
