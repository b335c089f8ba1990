"""A loopback server that answers as reasoning models do, in each provider's shape.

It speaks OpenAI's chat completions (``POST /v1/chat/completions``) and Responses API
(``POST /v1/responses``) and Anthropic's Messages API (``POST /v1/messages``). Its "model" adds
the last ``a+b`` of the prompt, and thinks first: the thought has as many words as the setting
asks (:data:`EFFORT_WORDS` for an effort, half the budget for an Anthropic ``budget_tokens``), ends
with a wrong sum (``maybe a+b+7``: read from the thought, the answer would be wrong), and is
right only when it thought enough (:func:`needed_words`). A thought that does not fit
``max_tokens`` is cut there with no answer, as a real model's would be.

Chat completions return the thought as the ``shape`` says: ``effort`` (OpenAI's o-series: no
thought text, only ``completion_tokens_details.reasoning_tokens``), ``reasoning_content``
(vLLM, DeepSeek) or ``think_tags`` (``<think>…</think>`` inside the content). ``ignore=True``
makes it think at its default whatever it is asked (and the Responses API report ``medium``).
``override(path, body)`` may return a whole response body instead (for hostile answers).

Bounded: 127.0.0.1 only, at most ``MAX_BODY_BYTES`` read per request, 503 after
``max_requests``, shut down ``deadline_s`` after it starts. ``bodies`` keeps what it was sent.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.loopback import LoopbackServer

MAX_BODY_BYTES = 1 << 20
EFFORT_WORDS = {"none": 0, "minimal": 4, "low": 8, "medium": 24, "high": 48}
DEFAULT_WORDS = 24


def needed_words(a: int) -> int:
    """How long a thought must be to get ``a + b`` right: 4, 8, 12 or 16 words."""
    return 4 * (a % 4 + 1)


def question(text: str) -> tuple[int, int]:
    found = re.findall(r"(\d+)\s*\+\s*(\d+)", text)
    return (int(found[-1][0]), int(found[-1][1])) if found else (0, 0)


class Reply:
    """What the model thought and answered for one request."""

    def __init__(self, prompt: str, words: int, limit: int) -> None:
        a, b = question(prompt)
        thought = ["hmm"] * max(words - 2, 0) + (["maybe", str(a + b + 7)] if words >= 2 else ["hmm"] * words)
        self.answer: str | None = str(a + b if words >= needed_words(a) else a + b + 1)
        if len(thought) + 1 > limit:
            thought, self.answer = thought[: max(limit, 0)], None
        self.thought = " ".join(thought)
        self.thought_tokens = len(thought)
        self.tokens = self.thought_tokens + (1 if self.answer is not None else 0)


class ReasoningServer(LoopbackServer):
    """The server (a context manager); ``url`` is its ``/v1`` base URL (see the module docstring)."""

    def __init__(
        self,
        shape: str = "effort",
        *,
        ignore: bool = False,
        override: Callable[[str, dict[str, Any]], dict[str, Any] | None] | None = None,
        max_requests: int = 10_000,
        deadline_s: float = 300.0,
    ) -> None:
        self.shape = shape
        self.ignore = ignore
        self.override = override
        self.max_requests = max_requests
        self.bodies: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()
        self._serve(self._handler(), "reasoning-server", deadline_s)

    @property
    def base(self) -> str:
        """The URL without ``/v1`` (the anthropic SDK adds it)."""
        return self.url.removesuffix("/v1")

    # -- the model ---------------------------------------------------------------------------

    def words(self, effort: Any = None, budget: Any = None) -> int:
        if self.ignore:
            return DEFAULT_WORDS
        if isinstance(budget, int):
            return budget // 2
        return EFFORT_WORDS.get(str(effort), DEFAULT_WORDS) if effort is not None else DEFAULT_WORDS

    def answer(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        if self.override is not None:
            custom = self.override(path, body)
            if custom is not None:
                return custom
        if path.endswith("/responses"):
            return self._responses(body)
        if path.endswith("/messages"):
            return self._messages(body)
        return self._chat(body)

    def _chat(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body.get("messages") or [{}]
        kwargs = body.get("chat_template_kwargs") or {}
        effort = body.get("reasoning_effort", kwargs.get("reasoning_effort"))
        if kwargs.get("enable_thinking") is False:
            effort = "none"
        limit = int(body.get("max_completion_tokens") or body.get("max_tokens") or 16)
        reply = Reply(str(messages[-1].get("content", "")), self.words(effort), limit)
        message: dict[str, Any] = {"role": "assistant", "content": reply.answer or ""}
        if self.shape == "reasoning_content":
            message["reasoning_content"] = reply.thought or None
        elif self.shape == "think_tags":
            closing = "</think>\n\n" + reply.answer if reply.answer is not None else ""
            message["content"] = f"<think>\n{reply.thought}\n{closing}"
        usage = {"prompt_tokens": 10, "completion_tokens": reply.tokens, "total_tokens": 10 + reply.tokens}
        if self.shape == "effort":
            usage["completion_tokens_details"] = {"reasoning_tokens": reply.thought_tokens}  # type: ignore[assignment]
        choice = {"index": 0, "message": message, "finish_reason": "stop" if reply.answer is not None else "length"}
        return {
            "id": "c1",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model"),
            "choices": [choice],
            "usage": usage,
        }

    def _responses(self, body: dict[str, Any]) -> dict[str, Any]:
        setting = body.get("reasoning") or {}
        items = body.get("input") or [{}]
        prompt = items if isinstance(items, str) else str(items[-1].get("content", ""))
        reply = Reply(prompt, self.words(setting.get("effort")), int(body.get("max_output_tokens") or 16))
        output: list[dict[str, Any]] = [
            {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": reply.thought}]}
        ]
        if reply.answer is not None:
            content = [{"type": "output_text", "text": reply.answer, "annotations": []}]
            output.append(
                {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed", "content": content}
            )
        reported = {"effort": "medium" if self.ignore else setting.get("effort"), "summary": "auto"}
        return {
            "id": "resp_1",
            "object": "response",
            "created_at": 0,
            "model": body.get("model"),
            "status": "completed" if reply.answer is not None else "incomplete",
            "incomplete_details": None if reply.answer is not None else {"reason": "max_output_tokens"},
            "output": output,
            "reasoning": reported,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "usage": {
                "input_tokens": 10,
                "output_tokens": reply.tokens,
                "total_tokens": 10 + reply.tokens,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens_details": {"reasoning_tokens": reply.thought_tokens},
            },
        }

    def _messages(self, body: dict[str, Any]) -> dict[str, Any]:
        thinking = body.get("thinking") or {}
        budget = thinking.get("budget_tokens") if thinking.get("type") == "enabled" else 0
        messages = body.get("messages") or [{}]
        reply = Reply(
            str(messages[-1].get("content", "")), self.words(budget=budget), int(body.get("max_tokens") or 16)
        )
        content: list[dict[str, Any]] = []
        if reply.thought:
            content.append({"type": "thinking", "thinking": reply.thought, "signature": "sig"})
        if reply.answer is not None:
            content.append({"type": "text", "text": reply.answer})
        return {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "content": content,
            "stop_reason": "end_turn" if reply.answer is not None else "max_tokens",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": reply.tokens},
        }

    # -- HTTP --------------------------------------------------------------------------------

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def _reply(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length > MAX_BODY_BYTES:
                    self.close_connection = True
                    self._reply(413, {"error": {"message": "too large", "type": "invalid_request_error"}})
                    return
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.bodies.append((self.path, body))
                    exhausted = len(server.bodies) > server.max_requests
                if exhausted:
                    self._reply(503, {"error": {"message": "request budget used up", "type": "server_error"}})
                    return
                self._reply(200, server.answer(self.path, body))

        return Handler
