"""Each run's per-trial means of its main metric, from the per-instance values the leaderboards read.

The site's trial-spread plots need, per run, the mean of its main metric's original values in each
trial (:func:`holistic.site.plots._run_trial_means` reads them from the run's own
``per_instance_stats.parquet``). The metric groups have just read those very rows for every run
(:meth:`holistic.summarize.load.SuiteData.instance_values`), so the means are taken from there,
vectorized, instead of reading thousands of files again: the same rows in the same order, so the
same means to the bit (each trial's values averaged by NumPy in file order).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from holistic.summarize.per_instance import encoded

TrialMeans = list[list[float]]
"""``[[trial, mean], ...]``, trials in the order first seen in the run's file."""


def trial_means_from(
    table: pa.Table, runs: Iterable[str], metrics: Iterable[str], main_metric: Mapping[str, str | None]
) -> dict[str, TrialMeans]:
    """Run id -> its trial means, for each of ``runs`` (all of whose rows of ``metrics`` are in
    ``table``) whose main metric is one of ``metrics``; other runs are left out."""
    names = set(metrics)
    wanted = {r: m for r in runs if (m := main_metric.get(r)) is not None and m in names}
    out: dict[str, TrialMeans] = {r: [] for r in wanted}
    if not {"run_id", "metric", "trial", "perturbation", "value"} <= set(table.column_names):
        return {}  # not what a run's file holds: each run reads its own
    if not wanted or table.num_rows == 0:
        return out
    run_codes, run_names = encoded(table.column("run_id"))
    metric_codes, metric_names = encoded(table.column("metric"))
    metric_index = {m: k for k, m in enumerate(metric_names)}
    main_code = np.array([metric_index.get(wanted.get(r, ""), -1) for r in run_names] or [-1], dtype=np.int64)
    keep = np.asarray(
        pc.and_(pc.is_null(table.column("perturbation")), pc.is_valid(table.column("value"))).to_numpy(
            zero_copy_only=False
        ),
        dtype=bool,
    )
    keep &= metric_codes == main_code[run_codes]
    rows = np.flatnonzero(keep)
    if len(rows) == 0:
        return out
    trials = np.asarray(table.column("trial").to_numpy(), dtype=np.int64)[rows]
    values = np.asarray(pc.cast(table.column("value"), pa.float64()).to_numpy(), dtype=np.float64)[rows]
    run_of = run_codes[rows]
    order = np.lexsort((trials, run_of))  # stable: each (run, trial) keeps its rows' file order
    run_of, trials, values, first = run_of[order], trials[order], values[order], rows[order]
    starts = np.flatnonzero(np.r_[True, (run_of[1:] != run_of[:-1]) | (trials[1:] != trials[:-1])])
    ends = np.r_[starts[1:], len(order)]
    groups: dict[str, list[tuple[int, int, float]]] = {}
    for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
        run = run_names[int(run_of[s])]
        groups.setdefault(run, []).append((int(first[s]), int(trials[s]), float(np.mean(values[s:e]))))
    for run, found in groups.items():
        out[run] = [[trial, mean] for _, trial, mean in sorted(found)]
    return out
