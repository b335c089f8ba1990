"""Batch mode's settings: which providers have a batch API, their limits, and a deployment's options.

Cheap to import (no SDK): the models file parser uses :data:`BATCH_PROVIDERS` to refuse
``batch: true`` on a provider without a batch API.

A deployment goes by batch when its models file entry says ``batch: true`` (kept as the arg
``batch``) or ``helm-run --batch`` is given and its provider is in :data:`BATCH_PROVIDERS`.
Its ``args`` may tune batch mode (all operational: none changes an answer, so none is part of
the cache key):

- ``batch_retry``: ``batch`` (default) sends the lines a batch did not answer (expired,
  cancelled, failed by the server) in a new batch; ``online`` sends them one by one;
- ``batch_max_retries`` (default 2): how many times such a line is sent again before it is
  recorded as a failed request;
- ``batch_timeout_s`` (default 86400, 24 h): how long one ``helm-run`` waits for its batches;
  past it the run is left partial and the batches keep running: the same command collects them;
- ``batch_poll_s`` (default 60): the longest pause between two looks at a batch (the first
  looks come after 1, 2, 4... seconds);
- ``batch_max_requests`` / ``batch_max_bytes``: split batches below the provider's own limits;
- ``batch_max_results_bytes`` (default 4 GiB): the most one results file may hold; the lines
  past it are recorded as failed requests (and sent again, bounded).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from holistic.core.errors import ModelError


@dataclass(frozen=True)
class BatchLimits:
    """What one batch of a provider may hold."""

    max_requests: int
    max_bytes: int


BATCH_PROVIDERS: dict[str, BatchLimits] = {
    # https://platform.openai.com/docs/guides/batch: 50,000 requests, an input file of 200 MB
    "openai": BatchLimits(max_requests=50_000, max_bytes=200 * 1000 * 1000),
    # https://docs.anthropic.com/en/docs/build-with-claude/batch-processing: 100,000 requests or 256 MB;
    # a lower byte cap keeps the request body (sent from disk) and the server's parse small
    "anthropic": BatchLimits(max_requests=100_000, max_bytes=256 * 1000 * 1000),
}
"""Providers with a batch API and their per-batch limits."""

BATCH_ARGS = frozenset(
    {
        "batch",
        "batch_retry",
        "batch_max_retries",
        "batch_timeout_s",
        "batch_poll_s",
        "batch_max_requests",
        "batch_max_bytes",
        "batch_max_results_bytes",
    }
)
"""Deployment args of batch mode (operational: left out of the cache key)."""

RETRY_MODES = ("batch", "online")
DEFAULT_BATCH_TIMEOUT_S = 24 * 3600.0
DEFAULT_POLL_S = 60.0
DEFAULT_MAX_RETRIES = 2
DEFAULT_MAX_RESULTS_BYTES = 4 * 1024 * 1024 * 1024
BATCH_IO_TIMEOUT_S = 3600.0
"""The longest one upload or one results download may take."""


@dataclass(frozen=True)
class BatchSettings:
    """A deployment's batch options (see the module docstring)."""

    limits: BatchLimits
    retry: str = "batch"
    max_retries: int = DEFAULT_MAX_RETRIES
    timeout_s: float = DEFAULT_BATCH_TIMEOUT_S
    poll_s: float = DEFAULT_POLL_S
    max_results_bytes: int = DEFAULT_MAX_RESULTS_BYTES

    @staticmethod
    def of(name: str, provider: str, args: Mapping[str, Any]) -> BatchSettings:
        """The settings of deployment ``name``; a bad value is a :class:`ModelError` naming it."""
        if provider not in BATCH_PROVIDERS:
            raise ModelError(f"model {name!r}: {no_batch_api(provider)}")
        base = BATCH_PROVIDERS[provider]
        retry = args.get("batch_retry", "batch")
        if retry not in RETRY_MODES:
            raise ModelError(f"model {name!r}: batch_retry must be one of {', '.join(RETRY_MODES)}, not {retry!r}")

        def number(arg: str, default: float, low: float, high: float) -> float:
            value = args.get(arg, default)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
                raise ModelError(f"model {name!r}: {arg} must be a number from {low:g} to {high:g}, not {value!r}")
            return float(value)

        return BatchSettings(
            limits=BatchLimits(
                max_requests=int(number("batch_max_requests", base.max_requests, 1, base.max_requests)),
                max_bytes=int(number("batch_max_bytes", base.max_bytes, 1024, base.max_bytes)),
            ),
            retry=str(retry),
            max_retries=int(number("batch_max_retries", DEFAULT_MAX_RETRIES, 0, 10)),
            timeout_s=number("batch_timeout_s", DEFAULT_BATCH_TIMEOUT_S, 0, 30 * 24 * 3600),
            poll_s=number("batch_poll_s", DEFAULT_POLL_S, 0.001, 3600),
            max_results_bytes=int(number("batch_max_results_bytes", DEFAULT_MAX_RESULTS_BYTES, 1, 2**50)),
        )


def no_batch_api(provider: str) -> str:
    """Why ``batch: true`` cannot be used with ``provider``."""
    return f"provider {provider!r} has no batch API; batch mode works with {', '.join(sorted(BATCH_PROVIDERS))}"


def wants_batch(provider: str, args: Mapping[str, Any], forced: bool) -> bool:
    """Whether a deployment goes by batch: its ``batch: true``, or ``--batch`` (``forced``) where it can."""
    return bool(args.get("batch")) or (forced and provider in BATCH_PROVIDERS)
