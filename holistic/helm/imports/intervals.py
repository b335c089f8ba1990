"""Bootstrap intervals of imported stats, from HELM's per-instance values, in bounded memory.

The values are read back from the ``per_instance_stats.parquet`` the import has written,
in passes that each hold at most :data:`VALUE_BUDGET` values, as typed arrays (8 bytes
each plus two indexes), not Python objects. The
interval of each stat name is computed as :func:`holistic.metrics.stats.aggregate`
computes a native run's: each instance's values averaged over its trials, a percentile
bootstrap of the mean over instances (1,000 resamples, 95%), seeded by
``stable_seed(seed, "bootstrap", <hash of the sorted instance ids>)``, so an imported run
and a native run of the same instances get the same resamples.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

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


VALUE_BUDGET = 2_000_000
"""Per-instance values held at once while computing intervals (about 24 bytes each)."""


def intervals_from_parquet(
    path: Path, counts: Mapping[MetricName, int], *, seed: int, budget: int = VALUE_BUDGET
) -> dict[MetricName, Interval]:
    """The intervals of every stat name in ``counts``, read back from a written
    ``per_instance_stats.parquet`` in passes that each hold at most ``budget`` values
    (a stat name with more values than that gets a pass of its own)."""
    passes: list[list[MetricName]] = []
    held = budget
    for name, count in sorted(
        counts.items(), key=lambda kv: (kv[0].name, kv[0].split, str(kv[0].sub_split), str(kv[0].perturbation))
    ):
        if held + count > budget:
            passes.append([])
            held = 0
        passes[-1].append(name)
        held += count
    out: dict[MetricName, Interval] = {}
    columns = ["instance_id", "trial", "metric", "split", "sub_split", "perturbation", "value"]
    for names in passes:
        wanted = set(names)
        metrics = pa.array(sorted({n.name for n in names}), pa.string())
        values = PerInstanceValues()
        for batch in pq.ParquetFile(path).iter_batches(columns=columns, batch_size=16384):
            batch = batch.filter(pc.is_in(batch.column("metric"), value_set=metrics))
            for row in batch.to_pylist():
                name = MetricName(row["metric"], row["split"], row["sub_split"], row["perturbation"])
                if name in wanted:
                    values.add(name, row["instance_id"], row["trial"], row["value"])
        out.update(values.intervals(seed))
    return out
