"""What a run's requests cost once answered, and the completion lengths recorded on this machine.

:func:`run_cost` sums a run's request prices for its ``artifacts.json``; :class:`OutputLengths`
(``output_lengths.json`` beside the request cache) keeps the completion tokens per request of every
model and scenario run here, the expected output lengths of ``--plan``'s cost forecast
(:mod:`holistic.execution.forecast`).
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from holistic.core.types import RequestState
from holistic.execution.rates import _read, _write

OUTPUT_LENGTHS_FILE = "output_lengths.json"


@dataclass(frozen=True)
class RunCost:
    """What one run's requests cost (each distinct request once; answers from the cache at their original price)."""

    requests_usd: float
    sent_now_usd: float
    """Of which sent to the provider by this execution (not from the cache)."""
    batch_requests: int
    """Distinct requests answered through a batch API (marked ``batch``)."""

    def facts(self, judges_usd: float) -> dict[str, float | int]:
        """The ``cost_*`` entries of the run's ``artifacts.json`` (``execution``)."""
        return {
            "cost_usd": self.requests_usd + judges_usd,
            "requests_cost_usd": self.requests_usd,
            "judge_cost_usd": judges_usd,
            "cost_usd_sent_now": self.sent_now_usd,
            "batch_requests": self.batch_requests,
        }


def run_cost(states: Sequence[RequestState], keys: Sequence[str]) -> RunCost:
    """The cost of a run's served requests (``keys``: their cache keys, in the same order)."""
    unique = {key: s.result for s, key in zip(states, keys, strict=True) if s.result is not None}
    return RunCost(
        requests_usd=sum(r.cost_usd for r in unique.values()),
        sent_now_usd=sum(r.cost_usd for r in unique.values() if not r.cached),
        batch_requests=sum(1 for r in unique.values() if getattr(r, "batch", False)),
    )


class OutputLengths:
    """Completion tokens per request recorded on this machine, per model and scenario."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._data = _read(path)

    def mean(self, model: str, scenario: str) -> float | None:
        entry = self._data.get(model, {}).get(scenario)
        try:
            requests, tokens = int(entry["requests"]), float(entry["completion_tokens"])  # type: ignore[index]
        except (KeyError, TypeError, ValueError):
            return None
        return tokens / requests if requests > 0 and tokens >= 0 else None

    def add(self, model: str, scenario: str, *, requests: int, completion_tokens: int) -> None:
        """Add one run's answered requests and write the file (never fails a run)."""
        if requests <= 0:
            return
        old = self._data.get(model, {}).get(scenario)
        old = old if isinstance(old, Mapping) else {}
        try:
            before = (int(old.get("requests", 0)), int(old.get("completion_tokens", 0)))
        except (TypeError, ValueError):
            before = (0, 0)
        self._data.setdefault(model, {})[scenario] = {
            "requests": requests + before[0],
            "completion_tokens": completion_tokens + before[1],
            "measured": datetime.date.today().isoformat(),
        }
        _write(self.path, self._data)
