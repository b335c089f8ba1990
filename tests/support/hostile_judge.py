"""A loopback OpenAI-compatible server whose answers are hostile judge verdicts.

The model id of a request chooses the answer (chat or text completions, as asked):

- ``wildbench``: 25,600 characters on which HELM's WildBench pattern backtracks for minutes;
- ``digits``: ``{"score": <400 digits>}`` (overflows ``float``);
- ``nested``: ``{"score": [[[...]]]}``, 20,000 lists deep (``RecursionError`` in ``json``);
- ``huge_score``: ``<reasoning>r</reasoning><score>1e308</score>`` (HELM's rule would take it);
- ``huge_answer``: a 10 MiB answer (a candidate too long for a judge's template);
- ``good``: a verdict every rule of the tests reads (what every model answers after :meth:`heal`).

Bound to 127.0.0.1, threads are daemons and the server stops when the ``with`` block ends.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

WILDBENCH_BOMB = '"strengths":"","weaknesses":"' * 880 + "x" * 80
GOOD = '{"strengths": "clear", "weaknesses": "none", "score": 7}\n<reasoning>fine</reasoning><score>1</score>'
VERDICTS = {
    "wildbench": WILDBENCH_BOMB,
    "digits": '{"score": ' + "9" * 400 + "}",
    "nested": '{"score": ' + "[" * 20_000 + "]" * 20_000 + "}",
    "huge_score": "<reasoning>r</reasoning><score>1e308</score>",
    "huge_answer": "yes " + "a" * (10 << 20),
    "good": GOOD,
}


class HostileJudge:
    def __init__(self) -> None:
        self.healed = False
        self.calls: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self.answer))
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def answer(self, path: str, payload: bytes) -> bytes:
        """The response body to one request (its model id picks the verdict)."""
        model = str(json.loads(payload or b"{}").get("model", "good"))
        with self._lock:
            self.calls[model] += 1
        text = VERDICTS["good" if self.healed and model != "huge_answer" else model]
        return json.dumps(_body(path.endswith("/chat/completions"), model, text)).encode()

    def heal(self) -> None:
        """From now on every judge answers a good verdict."""
        self.healed = True

    def models_file(self, path: Path) -> Path:
        """The simple candidate and one ``judge/<mode>`` deployment per answer, on this server."""
        entries = "".join(
            f"  - name: judge/{mode}\n    provider: openai\n    model_id: {mode}\n    context_window: 1000000\n"
            f"    args: {{base_url: 'http://127.0.0.1:{self.port}/v1', timeout_s: 30, max_attempts: 1}}\n"
            "    capabilities: {chat: true, completions: false}\n"
            for mode in VERDICTS
        )
        candidate = (
            "  - name: simple/candidate\n    provider: simple\n    model_id: echo\n    context_window: 4096\n"
            "    capabilities: {logprobs: true, prompt_logprobs: true, chat: true, completions: true}\n"
        )
        path.write_text("models:\n" + candidate + entries, encoding="utf-8")
        return path

    def __enter__(self) -> HostileJudge:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def _handler(answer: Callable[[str, bytes], bytes]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            """Quiet."""

        def do_POST(self) -> None:
            body = answer(self.path, self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client gave up
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

    return Handler


def _body(chat: bool, model: str, text: str) -> dict[str, Any]:
    usage = {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}
    if chat:
        choice: dict[str, Any] = {
            "index": 0,
            "message": {"role": "assistant", "content": text},
            "finish_reason": "stop",
        }
        return {
            "id": "x",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [choice],
            "usage": usage,
        }
    choice = {"index": 0, "text": text, "finish_reason": "stop", "logprobs": None}
    return {"id": "x", "object": "text_completion", "created": 0, "model": model, "choices": [choice], "usage": usage}
