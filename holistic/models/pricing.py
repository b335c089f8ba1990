"""What a request costs, and a budget that holds while a suite runs.

Prices come from the models file's ``price`` (US dollars per million tokens):
``input_per_million``, ``output_per_million``, the optional ``cached_input_per_million``
(prompt tokens the provider reports as served from its prompt cache) and ``batch_discount``,
the fraction taken off a request sent through the provider's batch API (default per
provider: :data:`DEFAULT_BATCH_DISCOUNT`). :func:`request_price` prices one request from the
token counts the provider reported; a request marked ``batch`` gets the discount.

:class:`Spending` is the budget of ``helm-run --max-cost``: every path that sends requests
(online clients, the batch path) asks :meth:`Spending.allows` before sending anything new and
adds what the provider's usage says it cost with :meth:`Spending.add`. :func:`spending_limit`
makes one the process's current budget for the length of a suite; :func:`current_spending`
returns it (``None``: no budget).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from holistic.core.types import ModelDeployment

DEFAULT_BATCH_DISCOUNT: dict[str, float] = {"openai": 0.5, "anthropic": 0.5}
"""The fraction of the price taken off a batch request, by provider (both halve the price today)."""

BUDGET_ERROR_KIND = "budget"
"""``error_kind`` of a request not sent because ``--max-cost`` was reached (retried by a rerun)."""


def batch_discount(deployment: ModelDeployment) -> float:
    """The deployment's ``batch_discount``, else its provider's default (0 when it has none)."""
    if deployment.price_batch_discount is not None:
        return deployment.price_batch_discount
    return DEFAULT_BATCH_DISCOUNT.get(deployment.provider, 0.0)


def is_priced(deployment: ModelDeployment) -> bool:
    """Whether what the deployment costs is known: a ``price`` in the models file, or a model that runs
    on this machine (free)."""
    from holistic.models.registry import runs_in_process

    return deployment.priced or runs_in_process(deployment.provider)


def request_price(
    deployment: ModelDeployment,
    prompt_tokens: float,
    completion_tokens: float,
    *,
    batch: bool = False,
    cached_tokens: float = 0,
) -> float:
    """US dollars for one request's tokens at the deployment's prices. ``cached_tokens`` of the prompt
    are priced at ``cached_input_per_million`` when the file gives one; ``batch`` takes the
    :func:`batch_discount` off the whole."""
    cached = min(max(cached_tokens, 0), prompt_tokens) if deployment.price_cached_input_per_million is not None else 0
    cached_price = deployment.price_cached_input_per_million or 0.0
    usd = (
        (prompt_tokens - cached) * deployment.price_input_per_million
        + cached * cached_price
        + completion_tokens * deployment.price_output_per_million
    ) / 1e6
    return usd * (1.0 - batch_discount(deployment)) if batch else usd


def format_usd(usd: float) -> str:
    """Dollars as people read them: cents for most figures, more digits below a cent."""
    if usd == 0:
        return "$0.00"
    if usd < 0.01:
        return f"${usd:.4f}"
    return f"${usd:,.2f}"


class Spending:
    """Dollars spent against a limit, shared by every thread that sends requests (thread-safe).

    Requests already in flight when the limit is reached are paid for and kept; nothing new is sent."""

    def __init__(self, limit_usd: float) -> None:
        if not math.isfinite(limit_usd) or limit_usd < 0:
            raise ValueError(f"a budget must be a finite number of dollars >= 0, not {limit_usd!r}")
        self.limit_usd = limit_usd
        self._spent = 0.0
        self._refused = 0
        self._lock = threading.Lock()

    @property
    def spent_usd(self) -> float:
        with self._lock:
            return self._spent

    @property
    def refused(self) -> int:
        """Requests not sent because the budget was reached."""
        with self._lock:
            return self._refused

    @property
    def reached(self) -> bool:
        with self._lock:
            return self._spent >= self.limit_usd

    def allows(self) -> bool:
        """Whether a new request may be sent (counts the refusal when not)."""
        with self._lock:
            if self._spent < self.limit_usd:
                return True
            self._refused += 1
            return False

    def add(self, usd: float) -> None:
        """Add a request's price (from the provider's reported usage)."""
        if usd > 0 and math.isfinite(usd):
            with self._lock:
                self._spent += usd

    def refusal(self) -> str:
        """The error recorded on a request that was not sent."""
        return (
            f"not sent: the budget --max-cost {format_usd(self.limit_usd)} was reached "
            f"({format_usd(self.spent_usd)} spent); rerun with a higher --max-cost to send it"
        )


_current: Spending | None = None
_current_lock = threading.Lock()


def current_spending() -> Spending | None:
    """The budget of the suite running in this process (``None``: no ``--max-cost``)."""
    return _current


@contextmanager
def spending_limit(limit_usd: float | None) -> Iterator[Spending | None]:
    """Make a :class:`Spending` of ``limit_usd`` the current budget while the block runs
    (``None``: no budget; the current one, if any, is left as it is)."""
    global _current
    if limit_usd is None:
        yield _current
        return
    spending = Spending(limit_usd)
    with _current_lock:
        before, _current = _current, spending
    try:
        yield spending
    finally:
        with _current_lock:
            _current = before
