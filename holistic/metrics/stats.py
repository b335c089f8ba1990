"""Aggregating per-instance values into run statistics, with bootstrap intervals.

For every structured metric name (name, split, sub-split, perturbation):

1. each instance's values are averaged over the trials it appears in;
2. the :class:`~holistic.core.types.Stat` holds count (instances), sum, sum of
   squares, min and max of those instance means, so its mean is the mean over
   instances of the trial-averaged values. When every trial scores the same
   instances (as the adapter guarantees) this equals the mean of the trial means;
3. ``num_trials`` and ``trial_stddev`` (population standard deviation of the
   per-trial means) record the spread across in-context example draws;
4. ``ci_low``/``ci_high`` are a percentile bootstrap interval of the mean over
   instances (1,000 resamples, 95%). Resamples are drawn from a generator seeded
   by ``stable_seed(seed, "bootstrap", <hash of the instance ids>)``, so names that
   share an instance set (the same split under different metrics or perturbations)
   share resamples — paired comparisons — and the interval does not depend on
   which other metrics the run has or on input order.

Worst-case rows (perturbation ``robustness``/``fairness``, ``P:worst`` and
``P:original``, made by :func:`holistic.metrics.robustness.worst_case`) are aggregated
like any other name.
:func:`aggregate` adds them itself when given the run's ``instances`` and the
per-instance values do not already contain them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from holistic.core.hashing import sha256_hex, stable_seed
from holistic.core.interfaces import MetricInfo
from holistic.core.types import Instance, MetricName, PerInstanceStat, Stat

NUM_RESAMPLES = 1000
CONFIDENCE = 0.95
# Bootstrap counts are built in chunks so memory stays bounded (chunk x instances floats).
_CHUNK_CELLS = 4_000_000

Infos = Mapping[str, MetricInfo] | Callable[[str], MetricInfo] | None


@dataclass(frozen=True)
class _Series:
    """One metric name's values: instance means (sorted by instance id) and trial means."""

    name: MetricName
    instance_ids: tuple[str, ...]
    instance_means: NDArray[np.float64]
    trial_means: NDArray[np.float64]


def bootstrap_means(
    values: NDArray[np.float64], *, seed: int, num_resamples: int = NUM_RESAMPLES
) -> NDArray[np.float64]:
    """Means of ``num_resamples`` resamples with replacement of the columns of ``values``.

    ``values`` is ``(metrics, instances)`` (or 1-d for one metric); the result is
    ``(num_resamples, metrics)`` (or 1-d). All rows use the same resampled instances.
    Vectorised: each chunk of resamples becomes a matrix of instance counts, and the
    means are one matrix product.
    """
    matrix = np.atleast_2d(np.asarray(values, dtype=np.float64))
    n = matrix.shape[1]
    if n == 0:
        raise ValueError("cannot bootstrap an empty set of instances")
    rng = np.random.default_rng(seed)
    out = np.empty((num_resamples, matrix.shape[0]))
    chunk = max(1, min(num_resamples, _CHUNK_CELLS // n))
    for start in range(0, num_resamples, chunk):
        rows = min(chunk, num_resamples - start)
        picks = rng.integers(0, n, size=(rows, n))
        picks += (np.arange(rows) * n)[:, None]
        counts = np.bincount(picks.ravel(), minlength=rows * n).reshape(rows, n).astype(np.float64)
        out[start : start + rows] = counts @ matrix.T / n
    return out if np.ndim(values) > 1 else out[:, 0]


def bootstrap_ci(
    values: Sequence[float] | NDArray[np.float64],
    *,
    seed: int,
    num_resamples: int = NUM_RESAMPLES,
    confidence: float = CONFIDENCE,
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values``."""
    means = bootstrap_means(np.asarray(values, dtype=np.float64), seed=seed, num_resamples=num_resamples)
    low, high = _percentiles(means, confidence)
    return float(low), float(high)


def _percentiles(means: NDArray[np.float64], confidence: float) -> NDArray[np.float64]:
    tail = _tail(confidence)
    return np.asarray(np.quantile(means, [tail, 1 - tail], axis=0), dtype=np.float64)


def _tail(confidence: float) -> float:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return (1 - confidence) / 2


def _series(per_instance: Sequence[PerInstanceStat]) -> list[_Series]:
    cells: dict[MetricName, dict[tuple[str, int], float]] = {}
    for stat in per_instance:
        value = float(stat.value)
        if not np.isfinite(value):
            raise ValueError(
                f"metric {stat.name.name!r} has a non-finite value {value} for instance {stat.instance_id!r} "
                f"(trial {stat.trial})"
            )
        bucket = cells.setdefault(stat.name, {})
        key = (stat.instance_id, stat.trial)
        if key in bucket:
            raise ValueError(
                f"metric {stat.name} has two values for instance {stat.instance_id!r} in trial {stat.trial}; "
                "two selected metrics produce the same value name"
            )
        bucket[key] = value
    out = []
    for name in sorted(cells, key=_name_key):
        bucket = cells[name]
        by_instance: dict[str, list[float]] = {}
        by_trial: dict[int, list[float]] = {}
        for (instance_id, trial), value in bucket.items():
            by_instance.setdefault(instance_id, []).append(value)
            by_trial.setdefault(trial, []).append(value)
        ids = tuple(sorted(by_instance))
        out.append(
            _Series(
                name=name,
                instance_ids=ids,
                instance_means=np.array([_mean(by_instance[i]) for i in ids]),
                trial_means=np.array([_mean(by_trial[t]) for t in sorted(by_trial)]),
            )
        )
    return out


def _mean(values: list[float]) -> float:
    return values[0] if len(values) == 1 else sum(values) / len(values)


def _name_key(name: MetricName) -> tuple[str, str, str, str]:
    return (name.name, name.split, name.sub_split or "", name.perturbation or "")


def _info_lookup(infos: Infos) -> Callable[[str], MetricInfo]:
    if infos is None:
        from holistic.metrics.registry import metric_info

        return metric_info
    if callable(infos):
        return infos
    table = infos

    def from_table(name: str) -> MetricInfo:
        if name not in table:
            from holistic.core.errors import UnknownNameError

            raise UnknownNameError("metric value", name, table)
        return table[name]

    return from_table


def _higher_is_better(infos: Infos) -> Callable[[str], bool]:
    lookup = _info_lookup(infos)

    def higher(name: str) -> bool:
        try:
            return lookup(name).higher_is_better
        except KeyError:  # a value no metric declares: taken as higher-is-better
            return True

    return higher


def with_worst_case(
    per_instance: Sequence[PerInstanceStat],
    instances: Sequence[Instance],
    *,
    infos: Infos = None,
    directional: bool = False,
) -> list[PerInstanceStat]:
    """``per_instance`` plus the worst-case rows of every value (unless already present).

    As in HELM, worst cases are taken of every metric value, for the robustness and
    fairness families and for each perturbation (see
    :func:`holistic.metrics.robustness.worst_case`); ``directional`` adds holistic's
    direction-aware rows.
    """
    from holistic.metrics.robustness import is_derived, worst_case

    if any(is_derived(s.name.perturbation) for s in per_instance):
        return list(per_instance)
    direction = _higher_is_better(infos) if directional else None
    return [*per_instance, *worst_case(per_instance, instances, direction, directional=directional)]


def aggregate(
    per_instance: Sequence[PerInstanceStat],
    *,
    seed: int,
    infos: Infos = None,
    instances: Sequence[Instance] | None = None,
    num_resamples: int = NUM_RESAMPLES,
    confidence: float = CONFIDENCE,
) -> list[Stat]:
    """One :class:`Stat` per metric name, sorted by name (see the module docstring).

    ``infos`` gives each value name's direction (a mapping, a lookup function, or
    ``None`` for :func:`holistic.metrics.registry.metric_info`); it is used only for
    direction-aware worst cases.
    """
    _tail(confidence)  # a bad confidence is an error whatever the values
    if instances is not None:
        per_instance = with_worst_case(per_instance, instances, infos=infos)
    series = _series(per_instance)
    intervals: dict[MetricName, tuple[float, float]] = {}
    by_ids: dict[tuple[str, ...], list[_Series]] = {}
    for s in series:
        by_ids.setdefault(s.instance_ids, []).append(s)
    for ids, members in by_ids.items():
        matrix = np.stack([m.instance_means for m in members])
        if len(ids) == 1:
            # Every resample of one instance is that instance: each mean is its value, and so are
            # both percentiles (what the resampling gives, exactly, without drawing or sorting).
            bounds = np.vstack([matrix[:, 0], matrix[:, 0]])
        else:
            resample_seed = stable_seed(seed, "bootstrap", sha256_hex("\n".join(ids)))
            means = bootstrap_means(matrix, seed=resample_seed, num_resamples=num_resamples)
            bounds = _percentiles(means, confidence)
        for j, member in enumerate(members):
            intervals[member.name] = (float(bounds[0, j]), float(bounds[1, j]))
    stats = []
    for s in series:
        values = s.instance_means
        low, high = intervals[s.name]
        mean = float(values.mean())
        stats.append(
            Stat(
                name=s.name,
                count=int(values.size),
                sum=float(values.sum()),
                sum_sq=float(np.square(values).sum()),
                min=float(values.min()),
                max=float(values.max()),
                ci_low=min(low, mean),
                ci_high=max(high, mean),
                num_trials=int(s.trial_means.size),
                trial_stddev=float(s.trial_means.std()) if s.trial_means.size > 1 else None,
            )
        )
    return stats
