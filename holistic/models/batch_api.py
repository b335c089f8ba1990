"""The two vendors' batch APIs behind one small interface, through their own SDKs.

- OpenAI's Batch API: the lines (``{"custom_id", "method", "url", "body"}``) are uploaded as a
  JSONL file (``files.create``, ``purpose="batch"``), a batch is created for it with its
  ``endpoint`` (one endpoint per batch), polled with ``batches.retrieve``, and its output and
  error files are read with ``files.content``.
- Anthropic's Message Batches: the requests (``{"custom_id", "params"}``) go in one
  ``POST /v1/messages/batches`` body, sent from disk; the batch is polled with
  ``messages.batches.retrieve`` and its results stream is read line by line.

Each batch is sent under an *intent id* the run chose before sending it, so a batch whose
creation reply never arrived can be found at the provider (``find``) instead of sent twice:
OpenAI's batches carry it in their ``metadata`` (``holistic_intent``) and are matched exactly;
Anthropic's batches take no metadata, so the one batch created since the intent (less
``CLOCK_SKEW_S``) with the intent's number of requests, and unknown to the journal, is taken (none,
or more than one: not found). A batch taken wrongly costs nothing: its results are checked line
by line against the ``custom_id`` values sent, and a line it does not answer is sent again.

Files are written and read in pieces: nothing holds a whole batch in memory. Every line of a
results file is bounded (``max_line_bytes``, the deployment's ``max_response_bytes``); a longer
line is skipped and reported, its request answered by a later batch or recorded as failed.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from holistic.models.reliability import Failure

OPENAI_ENDED = frozenset({"completed", "failed", "expired", "cancelled"})
OPENAI_RUNNING = frozenset({"validating", "in_progress", "finalizing", "cancelling"})
ANTHROPIC_STATES = frozenset({"in_progress", "canceling", "ended"})
INTENT_KEY = "holistic_intent"
CLOCK_SKEW_S = 300.0
"""How much earlier than the intent a provider's clock may date the batch it created for it."""
MAX_LISTED = 1_000
"""At most this many of the provider's batches are looked through for one intent."""


def _created_s(value: object) -> float | None:
    """A batch's ``created_at`` in seconds (OpenAI: a Unix time; Anthropic: a datetime)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    timestamp = getattr(value, "timestamp", None)
    if callable(timestamp):
        try:
            return float(timestamp())
        except (TypeError, ValueError, OverflowError, OSError):
            return None
    return None


def _anthropic_counts(batch: Any) -> dict[str, int]:
    """A Message Batch's ``request_counts`` by name (anything but a count is 0)."""
    counts = getattr(batch, "request_counts", None)
    return {n: _count(getattr(counts, n, 0)) for n in ("processing", "succeeded", "errored", "canceled", "expired")}


def _recent(listing: Any, since: float) -> Iterator[Any]:
    """The listed batches (newest first) created since ``since`` less the clock skew: at most
    ``MAX_LISTED``, and none after an id seen already (a server that pages in circles)."""
    seen: set[str] = set()
    for batch in listing:
        created = _created_s(getattr(batch, "created_at", None))
        ident = str(getattr(batch, "id", ""))
        if len(seen) >= MAX_LISTED or ident in seen or (created is not None and created < since - CLOCK_SKEW_S):
            return
        seen.add(ident)
        yield batch


class BadBatchAnswer(Exception):
    """What the batch server said cannot be read (a status or a line that is not what its API defines)."""


@dataclass(frozen=True)
class BatchStatus:
    """A batch as the server reports it."""

    state: str
    ended: bool
    total: int = 0
    done: int = 0
    failed: int = 0


@dataclass(frozen=True)
class Line:
    """One line of a results file: an SDK response object or a failure for ``custom_id``."""

    custom_id: str
    answer: Any = None
    failure: Failure | None = None


def call_body(call: Callable[[], Any]) -> tuple[Any, dict[str, Any]]:
    """``(the SDK method, the JSON body)`` of a thunk from :func:`holistic.models.api_client.sdk_call`."""
    if not isinstance(call, functools.partial):
        raise TypeError(f"cannot send {call!r} by batch")
    kwargs = dict(call.keywords)
    extra = kwargs.pop("extra_body", None) or {}
    for name in ("extra_headers", "extra_query", "timeout"):
        kwargs.pop(name, None)
    return getattr(call.func, "__self__", None), {**kwargs, **dict(extra)}


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _http_failure(status: object, message: str) -> Failure:
    code = status if isinstance(status, int) else 0
    if code == 429:
        return Failure("rate_limit", message, True)
    if code >= 500 or code == 408:
        return Failure("server", message, True)
    return Failure("fatal", message, False)


class OpenAIBatches:
    """OpenAI's Batch API (see the module docstring)."""

    endpoints: ClassVar[dict[str, str]] = {"chat": "/v1/chat/completions", "completions": "/v1/completions"}
    opening, separator, closing = b"", b"", b""

    def __init__(self, sdk: Any, io_sdk: Any) -> None:
        self._sdk = sdk
        self._io = io_sdk

    def endpoint(self, owner: Any) -> str:
        if owner is self._sdk.chat.completions:
            return self.endpoints["chat"]
        if owner is self._sdk.completions:
            return self.endpoints["completions"]
        raise TypeError("only completions and chat completions go by batch")

    def line(self, custom_id: str, endpoint: str, body: dict[str, Any]) -> bytes:
        line = {"custom_id": custom_id, "method": "POST", "url": endpoint, "body": body}
        return json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"

    def submit(self, endpoint: str, path: Path, intent: str) -> Callable[[], str]:
        def upload_and_create() -> str:
            with path.open("rb") as f:
                uploaded = self._io.files.create(file=(path.name, f), purpose="batch")
            batch = self._sdk.batches.create(
                input_file_id=uploaded.id, endpoint=endpoint, completion_window="24h", metadata={INTENT_KEY: intent}
            )
            return str(batch.id)

        return upload_and_create

    def find(self, intent: str, since: float, lines: int, known: set[str]) -> str | None:
        """The id of the batch created for ``intent`` (its metadata names it), or ``None``."""
        for batch in _recent(self._sdk.batches.list(limit=100), since):
            metadata = getattr(batch, "metadata", None)
            if isinstance(metadata, dict) and metadata.get(INTENT_KEY) == intent:
                return str(batch.id)
        return None

    def status(self, batch_id: str) -> BatchStatus:
        batch = self._sdk.batches.retrieve(batch_id)
        state = str(getattr(batch, "status", ""))
        if state not in OPENAI_ENDED | OPENAI_RUNNING:
            raise BadBatchAnswer(f"batch {batch_id}: the server reports the status {state[:80]!r}")
        counts = getattr(batch, "request_counts", None)
        return BatchStatus(
            state,
            state in OPENAI_ENDED,
            _count(getattr(counts, "total", 0)),
            _count(getattr(counts, "completed", 0)),
            _count(getattr(counts, "failed", 0)),
        )

    def result_streams(self, batch_id: str) -> Iterator[Callable[[], Any]]:
        """Openers of the batch's output and error files (context managers yielding byte chunks)."""
        batch = self._sdk.batches.retrieve(batch_id)
        for file_id in (getattr(batch, "output_file_id", None), getattr(batch, "error_file_id", None)):
            if isinstance(file_id, str) and file_id:
                yield functools.partial(self._io.files.with_streaming_response.content, file_id)

    @staticmethod
    def chunks(response: Any) -> Iterator[bytes]:
        return iter(response.iter_bytes())

    def parse(self, data: Any, endpoint: str) -> Line:
        from openai.types import Completion
        from openai.types.chat import ChatCompletion

        custom_id = data.get("custom_id")
        if not isinstance(custom_id, str):
            raise BadBatchAnswer("a results line has no custom_id")
        response = data.get("response") if isinstance(data.get("response"), dict) else {}
        body = response.get("body")
        status = response.get("status_code")
        if status == 200 and isinstance(body, dict):
            kind = ChatCompletion if endpoint == self.endpoints["chat"] else Completion
            return Line(custom_id, answer=kind.construct(**body))
        error = data.get("error") if isinstance(data.get("error"), dict) else {}
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            error = body["error"]
        code = str(error.get("code") or "")
        message = f"batch line failed ({status or code or 'no status'}): {str(error.get('message') or '')[:500]}"
        if code in ("batch_expired", "batch_cancelled") or not status:
            return Line(custom_id, failure=Failure("batch_" + (code.removeprefix("batch_") or "error"), message, True))
        return Line(custom_id, failure=_http_failure(status, message))


class AnthropicBatches:
    """Anthropic's Message Batches (see the module docstring)."""

    opening, separator, closing = b'{"requests":[', b",", b"]}"

    def __init__(self, sdk: Any, io_sdk: Any) -> None:
        self._sdk = sdk
        self._io = io_sdk

    def endpoint(self, owner: Any) -> str:
        if owner is self._sdk.messages:
            return "/v1/messages"
        raise TypeError("only messages go by batch")

    def line(self, custom_id: str, endpoint: str, body: dict[str, Any]) -> bytes:
        return json.dumps({"custom_id": custom_id, "params": body}, ensure_ascii=False, separators=(",", ":")).encode()

    def submit(self, endpoint: str, path: Path, intent: str) -> Callable[[], str]:
        from anthropic.types.messages import MessageBatch

        def create() -> str:
            with path.open("rb") as f:
                batch = self._io.post(
                    "/v1/messages/batches",
                    content=f,
                    cast_to=MessageBatch,
                    options={"headers": {"Content-Type": "application/json"}},
                )
            return str(batch.id)

        return create

    def find(self, intent: str, since: float, lines: int, known: set[str]) -> str | None:
        """The one batch created since the intent with its number of requests and unknown to the
        journal (Message Batches take no metadata to name the intent), or ``None``."""
        found: list[str] = []
        for batch in _recent(self._sdk.messages.batches.list(limit=100), since):
            total = sum(_anthropic_counts(batch).values())
            created = _created_s(getattr(batch, "created_at", None))
            if total == lines and created is not None and str(batch.id) not in known:
                found.append(str(batch.id))
        return found[0] if len(found) == 1 else None

    def status(self, batch_id: str) -> BatchStatus:
        batch = self._sdk.messages.batches.retrieve(batch_id)
        state = str(getattr(batch, "processing_status", ""))
        if state not in ANTHROPIC_STATES:
            raise BadBatchAnswer(f"batch {batch_id}: the server reports the status {state[:80]!r}")
        values = _anthropic_counts(batch)
        failed = values["errored"] + values["canceled"] + values["expired"]
        return BatchStatus(state, state == "ended", sum(values.values()), values["succeeded"] + failed, failed)

    def result_streams(self, batch_id: str) -> Iterator[Callable[[], Any]]:
        yield functools.partial(_anthropic_results, self._io, batch_id)

    @staticmethod
    def chunks(response: Any) -> Iterator[bytes]:
        return iter(response.http_response.iter_bytes())

    def parse(self, data: Any, endpoint: str) -> Line:
        from anthropic.types import Message

        custom_id = data.get("custom_id")
        if not isinstance(custom_id, str):
            raise BadBatchAnswer("a results line has no custom_id")
        result = data.get("result") if isinstance(data.get("result"), dict) else {}
        kind = result.get("type")
        if kind == "succeeded" and isinstance(result.get("message"), dict):
            return Line(custom_id, answer=Message.construct(**result["message"]))
        if kind in ("canceled", "expired"):
            return Line(custom_id, failure=Failure(f"batch_{kind}", f"batch line {kind}", True))
        outer: dict[str, Any] = result["error"] if isinstance(result.get("error"), dict) else {}
        error: dict[str, Any] = outer["error"] if isinstance(outer.get("error"), dict) else outer
        error_type = str(error.get("type") or kind or "unknown")
        message = f"batch line failed ({error_type}): {str(error.get('message') or '')[:500]}"
        retry = error_type not in ("invalid_request_error", "authentication_error", "permission_error")
        return Line(custom_id, failure=Failure("server" if retry else "fatal", message, retry))


class _AnthropicResults:
    """The results stream of a message batch as a context manager."""

    def __init__(self, io_sdk: Any, batch_id: str) -> None:
        self._decoder = io_sdk.messages.batches.results(batch_id)
        self.http_response = self._decoder.http_response

    def __enter__(self) -> _AnthropicResults:
        return self

    def __exit__(self, *exc: object) -> None:
        self._decoder.close()


def _anthropic_results(io_sdk: Any, batch_id: str) -> _AnthropicResults:
    return _AnthropicResults(io_sdk, batch_id)


def read_lines(chunks: Iterator[bytes], max_line_bytes: int) -> Iterator[bytes | None]:
    """The lines of a byte stream; ``None`` for each line longer than ``max_line_bytes`` (skipped
    without being held)."""
    parts: list[bytes] = []
    size = 0
    skipping = False
    for chunk in chunks:
        start = 0
        while start < len(chunk):
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            start = len(chunk) if end < 0 else end + 1
            if not skipping:
                size += len(piece)
                if size > max_line_bytes:
                    parts, skipping = [], True
                else:
                    parts.append(piece)
            if end >= 0:
                if skipping:
                    yield None
                elif size:
                    yield b"".join(parts)
                parts, size, skipping = [], 0, False
    if skipping:
        yield None
    elif size:
        yield b"".join(parts)


VENDORS: dict[str, type[OpenAIBatches] | type[AnthropicBatches]] = {
    "openai": OpenAIBatches,
    "anthropic": AnthropicBatches,
}
"""The batch API of each provider in :data:`holistic.models.batch_spec.BATCH_PROVIDERS`."""


def vendor_for(provider: str, sdk: Any, io_sdk: Any) -> OpenAIBatches | AnthropicBatches:
    return VENDORS[provider](sdk, io_sdk)
