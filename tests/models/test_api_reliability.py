"""Retries, backoff, Retry-After, per-request failures and the concurrency cap of API providers.

Sleeping is injected (delays are recorded, never waited) and HTTP answers come from an
in-process transport, so these tests are fast and deterministic.
"""

from __future__ import annotations

import importlib.util
import json
import threading
import time
from typing import Any

import pytest

from holistic.core.types import Capabilities, ModelDeployment, Request
from holistic.models.openai_client import OpenAIClient
from holistic.models.reliability import RetryPolicy, call_with_retries, classify, map_concurrently, parse_retry_after

httpx: Any = __import__("httpx2" if importlib.util.find_spec("httpx2") else "httpx")

OK_BODY = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "m",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
}

DEPLOYMENT = ModelDeployment(
    name="local/chat",
    provider="openai",
    model_id="m",
    args={"base_url": "http://127.0.0.1:9/v1"},
    capabilities=Capabilities(chat=True, completions=False),
)


def make_client(
    handler: Any, policy: RetryPolicy, sleeps: list[float], deployment: ModelDeployment = DEPLOYMENT
) -> OpenAIClient:
    http = httpx.Client(transport=httpx.MockTransport(handler))
    return OpenAIClient(deployment, http_client=http, policy=policy, sleep=sleeps.append)


def scripted(*answers: Any) -> tuple[Any, list[int]]:
    """A handler that gives ``answers`` in turn (a status, a (status, headers) pair, or an exception)."""
    calls = [0]

    def handler(request: Any) -> Any:
        answer = answers[min(calls[0], len(answers) - 1)]
        calls[0] += 1
        if isinstance(answer, Exception):
            raise answer
        status, headers = answer if isinstance(answer, tuple) else (answer, {})
        if status == 200:
            return httpx.Response(200, json=OK_BODY)
        return httpx.Response(status, headers=headers, json={"error": {"message": f"status {status}", "type": "x"}})

    return handler, calls


def test_rate_limit_then_server_error_then_success_waits_as_told() -> None:
    handler, calls = scripted((429, {"retry-after": "7"}), 503, 200)
    sleeps: list[float] = []
    client = make_client(handler, RetryPolicy(max_attempts=5, backoff_base_s=1.5, jitter=0.0), sleeps)
    [result] = client.process([Request(model="m", prompt="hi")])
    assert result.success and result.attempts == 3
    assert calls[0] == 3  # the SDK's own retries are off: every attempt is ours
    assert sleeps == [7.0, 3.0]  # Retry-After honoured, then 1.5 * 2**(2-1)


def test_backoff_doubles_with_seeded_jitter_and_gives_up_after_max_attempts() -> None:
    handler, calls = scripted(500)
    sleeps: list[float] = []
    policy = RetryPolicy(max_attempts=4, backoff_base_s=1.0, backoff_max_s=3.0, jitter=0.5)
    client = make_client(handler, policy, sleeps)
    [result] = client.process([Request(model="m", prompt="hi")])
    assert not result.success and result.attempts == 4 and calls[0] == 4
    assert result.error_kind == "server" and "500" in (result.error or "")
    assert len(sleeps) == 3
    for delay, cap in zip(sleeps, [1.0, 2.0, 3.0], strict=True):  # capped at backoff_max_s
        assert cap * 0.5 <= delay <= cap
    # Jitter comes from a seed of the request, not from global random state: a rerun waits alike.
    again: list[float] = []
    make_client(scripted(500)[0], policy, again).process([Request(model="m", prompt="hi")])
    assert again == sleeps


def test_timeouts_and_connection_errors_are_retried() -> None:
    handler, _ = scripted(httpx.ReadTimeout("slow"), httpx.ConnectError("refused"), 200)
    sleeps: list[float] = []
    [result] = make_client(handler, RetryPolicy(max_attempts=3, jitter=0.0), sleeps).process(
        [Request(model="m", prompt="x")]
    )
    assert result.success and result.attempts == 3 and len(sleeps) == 2


def test_a_retry_after_beyond_the_limit_fails_at_once() -> None:
    handler, calls = scripted((429, {"retry-after": "3600"}), 200)
    sleeps: list[float] = []
    policy = RetryPolicy(max_attempts=5, max_retry_after_s=60)
    [result] = make_client(handler, policy, sleeps).process([Request(model="m", prompt="x")])
    assert not result.success and result.error_kind == "rate_limit" and "3600" in (result.error or "")
    assert sleeps == [] and calls[0] == 1


def test_a_bad_request_is_recorded_while_the_rest_of_the_batch_completes() -> None:
    seen: list[str] = []
    lock = threading.Lock()

    def handler(request: Any) -> Any:
        prompt = json.loads(request.content)["messages"][0]["content"]
        with lock:
            seen.append(prompt)
        if prompt == "bad":
            return httpx.Response(
                400, json={"error": {"message": "Invalid 'messages': too long", "type": "invalid_request_error"}}
            )
        return httpx.Response(200, json=OK_BODY)

    sleeps: list[float] = []
    client = make_client(handler, RetryPolicy(max_attempts=4), sleeps)
    prompts = ["a", "b", "bad", "c", "d"]
    results = client.process([Request(model="m", prompt=p) for p in prompts])
    assert [r.success for r in results] == [True, True, False, True, True]
    bad = results[2]
    assert bad.error_kind == "client" and bad.attempts == 1 and "too long" in (bad.error or "")
    assert sleeps == [] and sorted(seen) == sorted(prompts)  # a 400 is not retried


def test_concurrency_is_capped_per_deployment() -> None:
    in_flight = [0, 0]  # current, maximum
    lock = threading.Lock()

    def handler(request: Any) -> Any:
        with lock:
            in_flight[0] += 1
            in_flight[1] = max(in_flight[1], in_flight[0])
        time.sleep(0.05)  # hold the slot so that calls overlap
        with lock:
            in_flight[0] -= 1
        return httpx.Response(200, json=OK_BODY)

    capped = ModelDeployment(**{**DEPLOYMENT.__dict__, "args": {**DEPLOYMENT.args, "max_concurrency": 3}})
    client = make_client(handler, RetryPolicy(), [], capped)
    # Two batches at once (the executor may call process from several threads).
    outer = [
        threading.Thread(target=client.process, args=([Request(model="m", prompt=str(i)) for i in range(6)],))
        for _ in range(2)
    ]
    for t in outer:
        t.start()
    for t in outer:
        t.join()
    assert 1 < in_flight[1] <= 3


def test_parse_retry_after_forms() -> None:
    now = 1_700_000_000.0
    assert parse_retry_after({"Retry-After": "12"}) == 12.0
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    date = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(now + 30))
    assert parse_retry_after({"retry-after": date}, now=lambda: now) == pytest.approx(30.0)
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None


def test_classify_and_retry_without_http() -> None:
    class Status(Exception):
        def __init__(self, status: int) -> None:
            super().__init__(f"status {status}")
            self.status_code = status

    assert classify(Status(529)).kind == "server" and classify(Status(529)).retryable
    assert classify(Status(401)).kind == "auth" and not classify(Status(401)).retryable
    assert classify(TimeoutError()).retryable
    assert not classify(ValueError("bad json")).retryable

    attempts = iter([Status(429), Status(502), "done"])

    def flaky() -> str:
        item = next(attempts)
        if isinstance(item, Exception):
            raise item
        return str(item)

    sleeps: list[float] = []
    outcome = call_with_retries(flaky, RetryPolicy(backoff_base_s=2.0, jitter=0.0), key="k", sleep=sleeps.append)
    assert outcome.value == "done" and outcome.attempts == 3 and sleeps == [2.0, 4.0]


def test_after_a_failing_call_no_thread_starts_another_request() -> None:
    """A batch that raises stops the others from sending more requests (a thread pool's
    cancel_futures did this before the threads became daemons)."""
    started: list[int] = []
    lock = threading.Lock()

    def call(i: int) -> int:
        with lock:
            started.append(i)
        if i == 1:
            raise RuntimeError("boom")
        time.sleep(0.05)
        return i

    with pytest.raises(RuntimeError, match="boom"):
        map_concurrently(call, list(range(40)), max_workers=2)
    time.sleep(0.3)
    assert len(started) <= 4, started
