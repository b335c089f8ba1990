"""Statistics: structured metric names, mergeable summaries and per-instance values.

Frozen dataclasses, values only (see :mod:`holistic.core.types`, which re-exports every
name here).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from holistic.core.instances import TEST_SPLIT


@dataclass(frozen=True, order=True)
class MetricName:
    """A structured metric name: never a string with parameters baked in."""

    name: str
    split: str = TEST_SPLIT
    sub_split: str | None = None
    perturbation: str | None = None
    """Perturbation name; ``worst`` families use ``robustness`` / ``fairness``."""

    def with_perturbation(self, perturbation: str | None) -> MetricName:
        return replace(self, perturbation=perturbation)


@dataclass(frozen=True)
class Stat:
    """A mergeable summary of values of one metric."""

    name: MetricName
    count: int = 0
    sum: float = 0.0
    sum_sq: float = 0.0
    min: float | None = None
    max: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    """95% bootstrap interval of the mean over instances (``None`` when not computed)."""
    num_trials: int = 1
    """Trials (independent draws of in-context examples) the values were averaged over."""
    trial_stddev: float | None = None
    """Population standard deviation of the per-trial means (``None`` with one trial)."""

    def add(self, value: float) -> Stat:
        return Stat(
            name=self.name,
            count=self.count + 1,
            sum=self.sum + value,
            sum_sq=self.sum_sq + value * value,
            min=value if self.min is None else min(self.min, value),
            max=value if self.max is None else max(self.max, value),
        )

    def merge(self, other: Stat) -> Stat:
        mins = [v for v in (self.min, other.min) if v is not None]
        maxs = [v for v in (self.max, other.max) if v is not None]
        return Stat(
            name=self.name,
            count=self.count + other.count,
            sum=self.sum + other.sum,
            sum_sq=self.sum_sq + other.sum_sq,
            min=min(mins) if mins else None,
            max=max(maxs) if maxs else None,
        )

    @property
    def mean(self) -> float | None:
        return self.sum / self.count if self.count else None

    @property
    def variance(self) -> float | None:
        if not self.count:
            return None
        mean = self.sum / self.count
        return max(self.sum_sq / self.count - mean * mean, 0.0)

    @property
    def stddev(self) -> float | None:
        var = self.variance
        return math.sqrt(var) if var is not None else None

    @staticmethod
    def of(name: MetricName, values: Sequence[float]) -> Stat:
        stat = Stat(name=name)
        for v in values:
            stat = stat.add(float(v))
        return stat


@dataclass(frozen=True)
class PerInstanceStat:
    """One metric value for one instance (and trial)."""

    instance_id: str
    trial: int
    name: MetricName
    value: float
    details: Mapping[str, Any] | None = field(default=None, compare=False)
    """JSON-compatible facts behind the value, stored beside it (e.g. each choice's
    log-likelihood and the index picked under every length normalisation)."""
