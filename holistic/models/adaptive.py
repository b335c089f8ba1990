"""Adaptive concurrency for API providers: find the endpoint's limit without tuning ``-j``.

:class:`AdaptiveLimit` caps the requests in flight for one deployment, like
:class:`~holistic.models.reliability.ConcurrencyLimit`, but moves the cap (the *window*)
with what the server says:

- **cautious start**: the window starts at 2 requests in flight;
- **increase**: until the first 429, each answer adds one (the window doubles per round
  trip, as TCP's slow start); after a 429, each answer adds one back up to the last level
  that was not refused, and above it the increase is additive and slow (one more request
  in flight after ``probe_rounds`` windows of answers), so the window probes for a raised
  limit without refusals in every round;
- **multiplicative decrease**: a 429 multiplies the window by ``decrease`` (0.5), once per
  window: further 429s of requests sent before that decrease do not decrease it again;
- **Retry-After is honoured by all**: a 429 that says how long to wait holds every new
  request of the deployment until then (the refused one waits it before its retry), so a rate limit that
  has run out is not hammered by the other threads (no sustained 429 storm); a wait
  longer than ``max_pause_s`` (the policy's ``max_retry_after_s``) holds nobody, since the
  refused request fails at once instead of waiting;
- **bounded**: the window never exceeds ``ceiling`` (the deployment's ``max_concurrency``).

The waits use the client's injected ``sleep`` and ``clock``; blocking for a free slot is a
condition variable that another thread's answer wakes.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from holistic.models.reliability import Failure

DEFAULT_START = 2
DEFAULT_DECREASE = 0.5
DEFAULT_PROBE_ROUNDS = 16


@dataclass(frozen=True)
class Slot:
    """One request in flight: the window's epoch and how many were in flight when it was sent."""

    epoch: int
    in_flight: int


@dataclass(frozen=True)
class AdaptiveStats:
    """What the controller did (reported by benchmarks and tests)."""

    window: int
    peak_window: int
    rate_limited: int
    """429 answers seen."""
    decreases: int
    """Times the window was decreased (at most once per window)."""


class AdaptiveLimit:
    """At most ``window`` calls in flight; the window follows the server (see the module docstring)."""

    def __init__(
        self,
        ceiling: int,
        *,
        start: int = DEFAULT_START,
        decrease: float = DEFAULT_DECREASE,
        probe_rounds: int = DEFAULT_PROBE_ROUNDS,
        max_pause_s: float = 600.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if ceiling < 1:
            raise ValueError("max_concurrency must be at least 1")
        if not 0.0 < decrease < 1.0:
            raise ValueError("decrease must lie strictly between 0 and 1")
        self.limit = ceiling
        self._window = float(max(1, min(start, ceiling)))
        self._decrease = decrease
        self._probe_rounds = max(1, probe_rounds)
        self._max_pause = max_pause_s
        self._safe: int | None = None
        """The highest level not refused since the last 429 (``None``: no 429 yet)."""
        self._in_flight = 0
        self._epoch = 0
        self._pause_until = 0.0
        self._peak = int(self._window)
        self._rate_limited = 0
        self._decreases = 0
        self._sleep = sleep
        self._clock = clock
        self._cond = threading.Condition()

    @property
    def window(self) -> int:
        """Requests allowed in flight now."""
        return max(1, math.floor(self._window))

    def stats(self) -> AdaptiveStats:
        with self._cond:
            return AdaptiveStats(self.window, self._peak, self._rate_limited, self._decreases)

    def acquire(self, *, gated: bool = True) -> Slot:
        """Wait for the Retry-After pause (unless ``gated`` is false: a retry, which has
        waited its own delay) and for a free slot in the window."""
        if gated:
            with self._cond:
                wait = self._pause_until - self._clock()
            if wait > 0:
                self._sleep(wait)
        with self._cond:
            while self._in_flight >= self.window:
                self._cond.wait()
            self._in_flight += 1
            return Slot(self._epoch, self._in_flight)

    def release(self, slot: Slot, failure: Failure | None) -> None:
        """The call of ``slot`` ended: successfully (``failure`` None) or with ``failure``."""
        with self._cond:
            self._in_flight -= 1
            if failure is None:
                self._grow()
            elif failure.kind == "rate_limit":
                self._back_off(slot, failure)
            self._cond.notify_all()

    def _grow(self) -> None:
        if self._safe is None or self._window + 1 <= self._safe:
            self._window += 1.0
        elif self._window < self._safe:
            self._window = float(self._safe)
        else:
            self._window += 1.0 / (self._probe_rounds * self._window)
        self._window = min(self._window, float(self.limit))
        self._peak = max(self._peak, self.window)

    def _back_off(self, slot: Slot, failure: Failure) -> None:
        self._rate_limited += 1
        if failure.retry_after_s is not None and failure.retry_after_s <= self._max_pause:
            self._pause_until = max(self._pause_until, self._clock() + failure.retry_after_s)
        if slot.epoch != self._epoch:
            return  # sent under a window that has already been decreased
        self._epoch += 1
        self._decreases += 1
        refused = min(slot.in_flight, self.window)
        self._safe = max(1, refused - 1)
        self._window = max(1.0, math.floor(refused * self._decrease))
