"""Retries, backoff and concurrency limits for API providers.

- :func:`classify` turns an exception from a provider SDK into a :class:`Failure`:
  429 (rate limit), 408/409, 5xx (server, overloaded), timeouts and connection
  errors are retried; other 4xx (bad request, auth, not found) are final.
- :func:`call_with_retries` retries a call with exponential backoff and jitter,
  honouring ``Retry-After`` (``retry-after-ms``, seconds or an HTTP date). Jitter is
  drawn from a seed derived from the request, never from global random state, so a
  rerun waits the same way; the clock and ``sleep`` are injectable for tests.
- :class:`ConcurrencyLimit` caps the calls in flight for one deployment across all
  threads (:mod:`holistic.models.adaptive` moves that cap with the server's 429s), and :func:`map_concurrently` runs a batch on daemon threads in order.

The SDKs' own retries are switched off (``max_retries=0``) by the providers, so the
attempt counts recorded in results are the real ones.
"""

from __future__ import annotations

import email.utils
import logging
import math
import queue
import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from holistic.core.hashing import stable_seed

T = TypeVar("T")
R = TypeVar("R")

log = logging.getLogger(__name__)

OPERATIONAL_ARGS = frozenset(
    {
        "max_concurrency",
        "adaptive_concurrency",
        "max_attempts",
        "timeout_s",
        "backoff_base_s",
        "backoff_max_s",
        "max_retry_after_s",
        "max_response_bytes",
    }
)
"""Deployment args that change how requests are sent, not what comes back: they are left out of
the client identity, so changing them keeps the cache."""

RETRYABLE_STATUS = {408: "timeout", 409: "conflict", 429: "rate_limit"}


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try one request."""

    max_attempts: int = 6
    """Attempts in total, the first included."""
    backoff_base_s: float = 1.0
    """Delay before the first retry; it doubles with each further attempt."""
    backoff_max_s: float = 60.0
    """Upper bound of the exponential delay."""
    jitter: float = 0.5
    """Fraction of the delay that is random: the delay is ``d * (1 - jitter * u)``, ``u`` in [0, 1)."""
    max_retry_after_s: float = 600.0
    """A server asking to wait longer than this fails the request instead."""
    timeout_s: float = 120.0
    """Deadline of one attempt in all, a body trickling in byte by byte included."""

    @staticmethod
    def from_args(args: Mapping[str, Any]) -> RetryPolicy:
        """The policy set by a deployment's args (see :data:`OPERATIONAL_ARGS`); defaults elsewhere."""
        base = RetryPolicy()
        return RetryPolicy(
            max_attempts=int(args.get("max_attempts", base.max_attempts)),
            backoff_base_s=float(args.get("backoff_base_s", base.backoff_base_s)),
            backoff_max_s=float(args.get("backoff_max_s", base.backoff_max_s)),
            max_retry_after_s=float(args.get("max_retry_after_s", base.max_retry_after_s)),
            timeout_s=float(args.get("timeout_s", base.timeout_s)),
        )

    def backoff(self, retry: int, key: str) -> float:
        """Delay before retry number ``retry`` (1 = the first retry) of the request ``key``."""
        delay = min(self.backoff_max_s, self.backoff_base_s * 2 ** (retry - 1))
        u = random.Random(stable_seed("backoff", key, retry)).random()
        return float(delay * (1.0 - self.jitter * u))


@dataclass(frozen=True)
class Failure:
    """Why a call failed, and whether trying again may help."""

    kind: str
    """``rate_limit``, ``server``, ``timeout``, ``connection``, ``conflict``, ``auth``,
    ``client``, ``unsupported`` or ``fatal``."""
    message: str
    retryable: bool
    retry_after_s: float | None = None
    """What the server asked us to wait (``Retry-After``), if it said."""
    status: int | None = None


class ProviderFailure(Exception):
    """Raised by provider code for a problem it detected itself (e.g. no logprobs came back)."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure


def _finite(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _number_like(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def parse_retry_after(headers: Mapping[str, str] | None, now: Callable[[], float] = time.time) -> float | None:
    """Seconds to wait from ``retry-after-ms``, or ``retry-after`` (seconds or an HTTP date)."""
    if not headers:
        return None
    lowered = {str(k).lower(): str(v) for k, v in headers.items()}
    millis = lowered.get("retry-after-ms")
    if millis is not None:
        seconds = _finite(millis)
        if seconds is not None:
            return max(seconds / 1000.0, 0.0)
    value = lowered.get("retry-after")
    if value is None:
        return None
    seconds = _finite(value)
    if seconds is not None:
        return max(seconds, 0.0)
    if _number_like(value):  # "nan", "inf": not a wait we can honour; fall back to backoff
        return None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(when.timestamp() - now(), 0.0)


def classify(
    exc: BaseException,
    *,
    timeout_types: tuple[type[BaseException], ...] = (),
    connection_types: tuple[type[BaseException], ...] = (),
    now: Callable[[], float] = time.time,
) -> Failure:
    """A :class:`Failure` for ``exc``.

    HTTP errors are recognised by a ``status_code`` attribute and, for ``Retry-After``,
    ``response.headers`` (the shape of the openai and anthropic SDK errors); the SDK's
    timeout and connection error classes are passed by the provider.
    """
    if isinstance(exc, ProviderFailure):
        return exc.failure
    from holistic.models.http_bounds import too_large

    big = too_large(exc)
    if big is not None:
        return Failure("too_large", str(big), False)
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None)
        retry_after = parse_retry_after(headers, now)
        message = f"HTTP {status}: {_detail(exc)}"
        if status in RETRYABLE_STATUS:
            return Failure(RETRYABLE_STATUS[status], message, True, retry_after, status)
        if status >= 500:
            return Failure("server", message, True, retry_after, status)
        if status in (401, 403):
            return Failure("auth", message, False, None, status)
        return Failure("client", message, False, None, status)
    if isinstance(exc, (*timeout_types, TimeoutError)):
        return Failure("timeout", f"timed out: {exc}", True)
    if isinstance(exc, (*connection_types, ConnectionError)):
        return Failure("connection", f"connection error: {exc}", True)
    return Failure("fatal", f"{type(exc).__name__}: {exc}", False)


def _detail(exc: BaseException) -> str:
    """The server's own error message when the body carries one (``{"error": {"message": ...}}``
    or ``{"message": ...}``), else the exception text."""
    body = getattr(exc, "body", None)
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping) and isinstance(inner.get("message"), str):
            kind = inner.get("type")
            return f"{inner['message']}" + (f" ({kind})" if isinstance(kind, str) and kind else "")
    return str(getattr(exc, "message", None) or exc)


@dataclass(frozen=True)
class Attempted(Generic[T]):
    """The outcome of :func:`call_with_retries`."""

    value: T | None
    failure: Failure | None
    attempts: int
    elapsed_s: float
    """Duration of the last attempt (the one that succeeded, or the last failure)."""
    waited_s: float
    """Total time spent waiting between attempts."""


Classifier = Callable[[BaseException], Failure]


def call_with_retries(
    fn: Callable[[], T],
    policy: RetryPolicy,
    *,
    key: str,
    classify_error: Classifier = classify,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.perf_counter,
    limit: Limit | None = None,
    describe: str = "request",
) -> Attempted[T]:
    """Call ``fn`` until it succeeds, fails for good, or ``policy.max_attempts`` is reached.

    ``key`` identifies the request (it seeds the jitter). ``limit`` is held during each
    attempt only, never while waiting, so a backing-off request frees its slot; it is told
    how each attempt ended (an adaptive limit moves its window with that).
    """
    waited = 0.0
    elapsed = 0.0
    attempt = 0
    while True:
        attempt += 1
        # A retry has waited its own delay (the server's Retry-After, or backoff) already.
        slot = limit.acquire(gated=attempt == 1) if limit is not None else None
        start = clock()
        failure: Failure | None = None
        try:
            value = fn()
        except Exception as exc:
            failure = classify_error(exc)
        finally:
            elapsed = clock() - start
            if limit is not None:
                limit.release(slot, failure)
        if failure is None:
            return Attempted(value, None, attempt, elapsed, waited)
        if not failure.retryable or attempt >= max(policy.max_attempts, 1):
            return Attempted(None, failure, attempt, elapsed, waited)
        if failure.retry_after_s is not None:
            if failure.retry_after_s > policy.max_retry_after_s:
                message = (
                    f"{failure.message} (the server asked to retry after {failure.retry_after_s:.0f} s, "
                    f"more than max_retry_after_s={policy.max_retry_after_s:.0f})"
                )
                return Attempted(
                    None,
                    Failure(failure.kind, message, False, failure.retry_after_s, failure.status),
                    attempt,
                    elapsed,
                    waited,
                )
            delay = failure.retry_after_s
        else:
            delay = policy.backoff(attempt, key)
        log.info(
            "%s failed (%s, attempt %d of %d); retrying in %.1f s",
            describe,
            failure.kind,
            attempt,
            policy.max_attempts,
            delay,
        )
        sleep(delay)
        waited += delay


class Limit(Protocol):
    """Caps the calls in flight: :meth:`acquire` before a call, :meth:`release` after it with
    how it ended (``None``: it succeeded)."""

    limit: int

    def acquire(self, *, gated: bool = True) -> Any: ...

    def release(self, slot: Any, failure: Failure | None) -> None: ...


class ConcurrencyLimit:
    """At most ``limit`` calls in flight."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("max_concurrency must be at least 1")
        self.limit = limit
        self._semaphore = threading.BoundedSemaphore(limit)

    def acquire(self, *, gated: bool = True) -> None:
        self._semaphore.acquire()

    def release(self, slot: Any, failure: Failure | None) -> None:
        self._semaphore.release()


def completed_concurrently(fn: Callable[[T], R], items: Sequence[T], max_workers: int) -> Iterator[tuple[int, R]]:
    """``(i, fn(items[i]))`` for every item, in the order they finish, from up to ``max_workers`` threads.

    The threads are daemons and the caller waits in short slices, so Ctrl-C (or SIGTERM, which
    the commands turn into it) returns at once even while a call is stuck on a silent or
    trickling server, and the process exits without joining them (a thread pool's shutdown
    would wait for the stuck call). An exception of ``fn`` is raised in the caller as soon as
    it happens; once the caller stops (an exception, Ctrl-C, or the iterator closed early), no
    thread starts another item, and the calls still running are left to finish unobserved.
    """
    done: queue.Queue[tuple[int, bool, Any]] = queue.Queue()
    pending = iter(range(len(items)))
    lock = threading.Lock()
    stopped = threading.Event()

    def work() -> None:
        while True:
            with lock:
                i = None if stopped.is_set() else next(pending, None)
            if i is None:
                return
            try:
                done.put((i, True, fn(items[i])))
            except BaseException as exc:  # re-raised in the caller
                done.put((i, False, exc))

    for n in range(min(max_workers, len(items))):
        threading.Thread(target=work, name=f"holistic-worker-{n}", daemon=True).start()
    try:
        for _ in range(len(items)):
            while True:
                try:
                    i, ok, value = done.get(timeout=0.2)
                    break
                except queue.Empty:
                    continue
            if not ok:
                raise value
            yield i, value
    finally:
        stopped.set()


def map_concurrently(fn: Callable[[T], R], items: Sequence[T], max_workers: int) -> list[R]:
    """``[fn(x) for x in items]`` on up to ``max_workers`` daemon threads, results in input order.

    ``fn`` should not raise (providers turn failures into results); if it does, the exception
    propagates at once. Ctrl-C returns at once, whatever the threads are waiting for (see
    :func:`completed_concurrently`): their answers are lost with the process (none was cached yet).
    """
    if max_workers <= 1 or len(items) <= 1:
        return [fn(x) for x in items]
    results: list[Any] = [None] * len(items)
    for i, result in completed_concurrently(fn, items, max_workers):
        results[i] = result
    return results
