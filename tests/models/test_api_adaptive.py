"""Adaptive concurrency of API providers: it finds the endpoint's limit from a cautious
start, backs off on 429, honours Retry-After for every new request, and does not storm.

The controller alone runs on an injected clock; the end-to-end tests run the real OpenAI
client against a loopback server with a fixed latency and a concurrency limit (short
latencies, so each test takes about a second). No test asserts a speed.
"""

from __future__ import annotations

import pytest

from holistic.core.errors import ModelError
from holistic.core.types import Capabilities, ModelDeployment, Request
from holistic.execution.serving import effective_concurrency
from holistic.models.adaptive import AdaptiveLimit
from holistic.models.openai_client import OpenAIClient
from holistic.models.reliability import Failure, RetryPolicy
from tests.support.rate_limited_server import RateLimitedServer

OK = None
RATE_LIMITED = Failure("rate_limit", "HTTP 429", True, retry_after_s=2.0, status=429)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def test_window_starts_cautious_and_doubles_per_round_until_the_ceiling() -> None:
    clock = Clock()
    limit = AdaptiveLimit(10, sleep=clock.sleep, clock=clock)
    assert limit.window == 2
    seen = []
    for _ in range(4):  # one round: fill the window, then answer every request
        slots = [limit.acquire() for _ in range(limit.window)]
        for slot in slots:
            limit.release(slot, OK)
        seen.append(limit.window)
    assert seen == [4, 8, 10, 10]  # bounded by the ceiling (max_concurrency)
    assert clock.sleeps == []


def test_a_429_halves_the_window_once_and_holds_new_requests_for_retry_after() -> None:
    clock = Clock()
    limit = AdaptiveLimit(32, sleep=clock.sleep, clock=clock)
    for _ in range(3):
        for slot in [limit.acquire() for _ in range(limit.window)]:
            limit.release(slot, OK)
    assert limit.window == 16
    slots = [limit.acquire() for _ in range(16)]
    limit.release(slots[-1], RATE_LIMITED)  # the 16th in flight was refused
    assert limit.window == 8  # 16 * 0.5: multiplicative decrease
    for slot in slots[10:-1]:  # refused too, but sent under the old window: no second decrease
        limit.release(slot, RATE_LIMITED)
    assert limit.window == 8 and limit.stats().decreases == 1 and limit.stats().rate_limited == 6
    for slot in slots[:10]:
        limit.release(slot, OK)
    # Back to the last level that was not refused, then no further in ten rounds.
    assert limit.window == 15
    limit.acquire()  # a new request waits for the server's Retry-After ...
    assert clock.sleeps == [pytest.approx(2.0)]
    limit.acquire(gated=False)  # ... a retry has waited its own delay
    assert len(clock.sleeps) == 1


def test_a_retry_after_beyond_max_pause_holds_nobody() -> None:
    clock = Clock()
    limit = AdaptiveLimit(8, sleep=clock.sleep, clock=clock, max_pause_s=60.0)
    hour = Failure("rate_limit", "HTTP 429", True, retry_after_s=3600.0, status=429)
    limit.release(limit.acquire(), hour)  # that request fails at once (max_retry_after_s) ...
    limit.acquire()  # ... and the others are not held for an hour
    assert clock.sleeps == [] and limit.stats().rate_limited == 1


def test_above_the_last_safe_level_the_increase_is_slow() -> None:
    clock = Clock()
    limit = AdaptiveLimit(64, sleep=clock.sleep, clock=clock, probe_rounds=4)
    for _ in range(3):
        for slot in [limit.acquire() for _ in range(limit.window)]:
            limit.release(slot, OK)
    slots = [limit.acquire() for _ in range(limit.window)]  # 16 in flight
    limit.release(slots.pop(), RATE_LIMITED)
    for slot in slots:
        limit.release(slot, OK)
    assert limit.window == 15
    rounds = 0
    while limit.window == 15:
        for slot in [limit.acquire(gated=False) for _ in range(limit.window)]:
            limit.release(slot, OK)
        rounds += 1
    assert rounds == 4 and limit.window == 16  # one more after probe_rounds rounds at the level


def deployment(url: str, **args: object) -> ModelDeployment:
    return ModelDeployment(
        name="local/limited",
        provider="openai",
        model_id="bench",
        args={"base_url": url, **args},
        capabilities=Capabilities(chat=False, completions=True),
    )


def run(server: RateLimitedServer, n: int, **args: object) -> OpenAIClient:
    client = OpenAIClient(deployment(server.url, **args), policy=RetryPolicy(max_attempts=20))
    try:
        results = client.process([Request(model="m", prompt=f"question {i}", max_tokens=2) for i in range(n)])
    finally:
        client.close()
    assert all(r.success for r in results), [r.error for r in results if not r.success][:3]
    return client


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")


def test_the_client_reaches_the_servers_limit_from_two_in_flight() -> None:
    with RateLimitedServer(limit=5, latency_s=0.04, max_requests=2000, deadline_s=60) as server:
        client = run(server, 150)
        stats = server.stats()
    assert stats.served == 150
    assert stats.in_flight_at_arrival[:2] == (1, 2) and max(stats.in_flight_at_arrival[:2]) <= 2  # cautious
    assert stats.peak_in_flight == 5  # the limit was found without tuning anything
    limiter = client._limit
    assert isinstance(limiter, AdaptiveLimit)
    assert limiter.stats().decreases >= 1 and limiter.stats().peak_window <= 32
    assert effective_concurrency(client, 1) == 2  # -j 1: still two batches in flight


def test_no_sustained_429_storm_where_a_fixed_count_storms() -> None:
    with RateLimitedServer(limit=3, latency_s=0.04, max_requests=5000, deadline_s=60) as server:
        run(server, 80)
        adaptive = server.stats().rate_limited
        server.reset()
        run(server, 80, adaptive_concurrency=False, max_concurrency=9)
        fixed = server.stats().rate_limited
    assert adaptive <= 16  # a few probes above the limit, not one per request
    assert fixed > 3 * adaptive, (fixed, adaptive)


def test_adaptive_concurrency_false_keeps_max_concurrency_and_bad_values_are_refused() -> None:
    with RateLimitedServer(limit=8, latency_s=0.04, max_requests=500, deadline_s=60) as server:
        client = run(server, 24, adaptive_concurrency=False, max_concurrency=6)
        stats = server.stats()
    assert client.max_concurrency == 6 and effective_concurrency(client, 1) == 1
    assert stats.in_flight_at_arrival[:6] == (1, 2, 3, 4, 5, 6) and stats.rate_limited == 0
    with pytest.raises(ModelError, match="adaptive_concurrency must be true or false"):
        OpenAIClient(deployment("http://127.0.0.1:9/v1", adaptive_concurrency="yes"))
