"""Bootstrap intervals of imported stats, from HELM's per-instance values, in compact memory.

The values are held as typed arrays (8 bytes each plus two small indexes), not Python
objects, so a run with millions of per-instance values stays within tens of MB. The
interval of each stat name is computed as :func:`holistic.metrics.stats.aggregate`
computes a native run's: each instance's values averaged over its trials, a percentile
bootstrap of the mean over instances (1,000 resamples, 95%), seeded by
``stable_seed(seed, "bootstrap", <hash of the sorted instance ids>)``, so an imported run
and a native run of the same instances get the same resamples.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field

import numpy as np

from holistic.core.hashing import sha256_hex, stable_seed
from holistic.core.types import MetricName
from holistic.metrics.stats import bootstrap_ci


@dataclass(frozen=True)
class Interval:
    ci_low: float
    ci_high: float
    num_trials: int
    trial_stddev: float | None


@dataclass
class _Column:
    instances: array[int] = field(default_factory=lambda: array("q"))
    trials: array[int] = field(default_factory=lambda: array("q"))
    values: array[float] = field(default_factory=lambda: array("d"))


class PerInstanceValues:
    """Per-instance values of a run, gathered while streaming."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self._names: list[str] = []
        self._columns: dict[MetricName, _Column] = {}

    def add(self, name: MetricName, instance_id: str, trial: int, value: float) -> None:
        index = self._ids.get(instance_id)
        if index is None:
            index = self._ids[instance_id] = len(self._names)
            self._names.append(instance_id)
        column = self._columns.get(name)
        if column is None:
            column = self._columns[name] = _Column()
        column.instances.append(index)
        column.trials.append(trial)
        column.values.append(value)

    def intervals(self, seed: int) -> dict[MetricName, Interval]:
        out: dict[MetricName, Interval] = {}
        seeds: dict[bytes, int] = {}
        for name, column in self._columns.items():
            values = np.frombuffer(column.values, dtype=np.float64)
            if not np.all(np.isfinite(values)):
                continue
            instances = np.frombuffer(column.instances, dtype=np.int64)
            trials = np.frombuffer(column.trials, dtype=np.int64)
            ids, inverse = np.unique(instances, return_inverse=True)
            means = np.bincount(inverse, weights=values) / np.bincount(inverse)
            # sort by instance id text, as a native run's series are
            order = sorted(range(len(ids)), key=lambda k: self._names[int(ids[k])])
            means = means[order]
            key = np.asarray(ids[order]).tobytes()
            if key not in seeds:
                seeds[key] = stable_seed(
                    seed, "bootstrap", sha256_hex("\n".join(self._names[int(ids[k])] for k in order))
                )
            low, high = bootstrap_ci(means, seed=seeds[key])
            trial_ids, trial_inverse = np.unique(trials, return_inverse=True)
            trial_means = np.bincount(trial_inverse, weights=values) / np.bincount(trial_inverse)
            out[name] = Interval(
                ci_low=low,
                ci_high=high,
                num_trials=int(trial_ids.size),
                trial_stddev=float(trial_means.std()) if trial_ids.size > 1 else None,
            )
        return out
