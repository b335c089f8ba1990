"""One metric group of a suite's summary: its cells with their bootstrap replicates, the
mean win rates and rank ranges, and its leaderboard table (with the baseline rows).

:func:`metric_group` takes the group's steps in order: which runs measure it in which
cell (:func:`_members`), each cell's value, replicates and 95% interval
(:func:`_estimate`), the cells as summary rows, the win-rate bootstrap, then the
leaderboard table (:func:`_leaderboard_header`, :func:`_leaderboard_rows`).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from holistic.core.hashing import stable_seed
from holistic.results.output_cache import OutputCache
from holistic.summarize.baselines import BASELINE_KINDS, BASELINE_NOTES, EXACT_MATCH_METRICS, column_baselines
from holistic.summarize.load import RunInfo, SuiteData
from holistic.summarize.per_instance import per_instance_arrays
from holistic.summarize.replicates import GroupReplicates, PerRun, Replicates
from holistic.summarize.schema import MetricGroup
from holistic.summarize.summary import (
    StatIndex,
    StatRow,
    Summary,
    column_of,
    error_rate_cell,
    error_rate_column,
    eval_split,
)
from holistic.summarize.tables import Cell, Column, Table, anchor
from holistic.summarize.winrate import WinRateResult, bootstrap_win_rates

Member = tuple[RunInfo, str, str, StatRow]
"""A sub-run of a cell: the run, the group's metric for it, the split measured and its stat."""
Members = dict[tuple[str, str], list[Member]]
"""(system, column) -> the sub-runs whose means make the cell."""


@dataclass
class _Grid:
    """One metric group's systems x columns: point values, bootstrap replicates and 95% intervals."""

    models: list[str]
    columns: list[str]
    lower: dict[str, bool]
    """Column -> whether lower is better in it."""
    point: np.ndarray
    reps: np.ndarray
    """Replicates x systems x columns (``nan`` where a system has no cell)."""
    cis: dict[tuple[int, int], tuple[float | None, float | None]] = field(default_factory=dict)


def metric_group(
    summary: Summary,
    data: SuiteData,
    index: StatIndex,
    group: MetricGroup,
    multi: set[str],
    num_bootstrap: int,
    seed: int,
    medians: dict[str, str] | None = None,
    cache: OutputCache | None = None,
) -> None:
    """Add ``group``'s cells, leaderboard (win rates) and table to ``summary`` (nothing when no run measures
    it); its sub-runs' replicates are taken from ``cache`` when an earlier summarize drew them."""
    medians = medians or {}
    members = _members(summary, data, index, group, multi)
    if not members:
        return
    grid = _estimate(summary, data, group, members, num_bootstrap, seed, medians, cache)
    summary.cells.extend(_cell_rows(group, members, grid))
    lower = [grid.lower[c] for c in grid.columns]
    result = bootstrap_win_rates(grid.models, grid.point, grid.reps if num_bootstrap > 0 else grid.reps[:0], lower)
    summary.leaderboards[group.name] = result
    rows, roles = _leaderboard_rows(summary, data, group, members, grid, result)
    summary.tables.append(
        Table(
            id=f"group_{group.name}",
            title=f"{group.name.capitalize()}: mean win rate and model × scenario",
            description=group.description,
            columns=_leaderboard_header(summary, grid),
            rows=tuple(rows),
            row_roles=tuple(roles),
        )
    )


def _members(summary: Summary, data: SuiteData, index: StatIndex, group: MetricGroup, multi: set[str]) -> Members:
    """Each cell's sub-runs: the ranked runs with a stat of the group's metric on an eval split."""
    members: Members = defaultdict(list)
    for run in data.runs:
        if not run.rankable:  # every request failed: nothing was measured
            continue
        metric = group.metric_for(run.scenario, run.main_metric)
        if metric is None:
            continue
        found = eval_split(index, run.run_id, metric, group.perturbation)
        if found is None:
            continue
        split, stat_row = found
        members[(summary.system_of_run[run.run_id], column_of(run, multi))].append((run, metric, split, stat_row))
    return members


def _estimate(
    summary: Summary,
    data: SuiteData,
    group: MetricGroup,
    members: Members,
    num_bootstrap: int,
    seed: int,
    medians: dict[str, str],
    cache: OutputCache | None = None,
) -> _Grid:
    """Every cell's value, bootstrap replicates and interval, from the per-instance values of its sub-runs."""
    models = [m for m in summary.models if any(key[0] == m for key in members)]
    lower: dict[str, bool] = {}
    for (_, col), items in members.items():
        hib = items[0][3].higher_is_better
        lower[col] = group.lower_is_better if group.lower_is_better is not None else (hib is False)
    used_cols = [c for c in summary.columns if any((m, c) in members for m in models)]
    grid = _Grid(
        models=models,
        columns=used_cols,
        lower=lower,
        point=np.full((len(models), len(used_cols)), np.nan),
        reps=np.full((num_bootstrap, len(models), len(used_cols)), np.nan),
    )
    metric_names = sorted({it[1] for items in members.values() for it in items})
    metric_names = sorted({*metric_names, *(medians[m] for m in metric_names if m in medians)})
    sub_runs = [(it[0].run_id, it[1], it[2]) for items in members.values() for it in items]
    known = GroupReplicates(cache, group.name, group.perturbation, seed, num_bootstrap)
    pooled = {it[0].run_id for items in members.values() for it in items if it[1] in medians}
    to_read = known.known(data.reader, sub_runs, pooled)
    per_run = per_instance_arrays(data.instance_values(sorted(to_read), metric_names), group.perturbation)
    known.draw(data.reader, [s for s in sub_runs if s[0] in to_read], per_run)
    spread: list[tuple[int, int]] = []  # the cells whose interval is their replicates' percentiles
    for i, model in enumerate(models):
        for j, col in enumerate(used_cols):
            items = members.get((model, col), [])
            if not items:
                continue
            value, replicates, ci = _cell_estimate(
                items, known.replicates, per_run, medians, group.name, num_bootstrap, seed
            )
            grid.point[i, j] = value
            if replicates is not None:
                grid.reps[:, i, j] = replicates
            if ci is _FROM_REPLICATES:
                spread.append((i, j))
            elif ci is not None:
                grid.cis[(i, j)] = ci
    if spread:  # every such cell's percentiles at once: the same values as cell by cell, to the bit
        rows, cols = zip(*spread, strict=True)
        low, high = np.percentile(grid.reps[:, list(rows), list(cols)], [2.5, 97.5], axis=0).tolist()
        for cell, lo, hi in zip(spread, low, high, strict=True):
            grid.cis[cell] = (lo, hi)
    return grid


_FROM_REPLICATES = (None, None)
"""A cell's interval to be taken from its replicates' 2.5th and 97.5th percentiles (by :func:`_estimate`)."""


def _cell_estimate(
    items: list[Member],
    sub_reps_of: Replicates,
    per_run: PerRun,
    medians: dict[str, str],
    group: str,
    num_bootstrap: int,
    seed: int,
) -> tuple[float, np.ndarray | None, tuple[float | None, float | None] | None]:
    """One cell: the mean of its sub-runs' means (for a median metric, the median of their pooled
    values), its bootstrap replicates (``None`` without replicates) and its 95% interval (``None``: none;
    :data:`_FROM_REPLICATES`: the replicates' percentiles, taken for every cell at once).

    Each sub-run's per-instance values are resampled (``sub_reps_of``); a sub-run without them repeats
    its mean. A cell of one sub-run without per-instance values keeps the interval the runner computed.
    """
    point = float(np.mean([it[3].mean for it in items]))
    sub_reps = []
    for run, metric, split, stat in items:
        _, reps = sub_reps_of[(run.run_id, metric, split)]
        sub_reps.append(reps if reps is not None else np.full(num_bootstrap, stat.mean))
    replicates: np.ndarray | None = None
    ci: tuple[float | None, float | None] | None = None
    if num_bootstrap > 0:
        replicates = sub_reps[0] if len(sub_reps) == 1 else np.mean(np.stack(sub_reps), axis=0)
        if any(sub_reps_of[(r.run_id, m, s)][0] for r, m, s, _ in items):
            ci = _FROM_REPLICATES
    if ci is None and len(items) == 1:
        ci = (items[0][3].ci_low, items[0][3].ci_high)
    pooled = _pooled_median_values(items, medians, per_run)
    if pooled is not None:  # a median metric: the median of the pooled values, CI of the median
        rng = np.random.default_rng(stable_seed(seed, group, "median", *(it[0].run_id for it in items)))
        point = float(np.median(pooled))
        median_reps = np.median(pooled[rng.integers(0, len(pooled), size=(num_bootstrap, len(pooled)))], axis=1)
        if num_bootstrap > 0:
            replicates = median_reps
            ci = (float(np.percentile(median_reps, 2.5)), float(np.percentile(median_reps, 97.5)))
    return point, replicates, ci


def _cell_rows(group: MetricGroup, members: Members, grid: _Grid) -> list[dict[str, Any]]:
    """The summary's cell rows of the group, system by system and column by column."""
    rows = []
    for i, model in enumerate(grid.models):
        for j, col in enumerate(grid.columns):
            items = members.get((model, col), [])
            if not items:
                continue
            lo, hi = grid.cis.get((i, j), (None, None))
            rows.append(
                {
                    "group": group.name,
                    "model": model,
                    "column": col,
                    "value": grid.point[i, j],
                    "ci_low": lo,
                    "ci_high": hi,
                    "lower_is_better": grid.lower[col],
                    "metric": ",".join(sorted({it[1] for it in items})),
                    "sub_runs": len(items),
                    "perturbation": group.perturbation,
                }
            )
    return rows


def _leaderboard_header(summary: Summary, grid: _Grid) -> tuple[Column, ...]:
    """Rank, system, mean win rate and rank range, then each column (and the error rate when requests failed)."""
    header = [
        Column("Rank", numeric=True, digits=0),
        Column("Model"),
        Column("Mean win rate", lower_is_better=False),
        Column("Rank range"),
    ]
    header += [Column(c, lower_is_better=grid.lower[c]) for c in grid.columns]
    if summary.has_errors:
        header.append(error_rate_column())
    return tuple(header)


def _leaderboard_rows(
    summary: Summary, data: SuiteData, group: MetricGroup, members: Members, grid: _Grid, result: WinRateResult
) -> tuple[list[tuple[Cell, ...]], list[str]]:
    """The systems in rank order, then the baseline rows, not ranked; and each row's role."""
    rows = _ranked_rows(summary, grid, result)
    roles = [""] * len(rows)
    for kind, baseline_cells in _baseline_rows(summary, data, group, members, grid.columns).items():
        rows.append(
            (
                Cell(None),
                Cell(f"{kind} (baseline)", note=BASELINE_NOTES[kind]),
                Cell(None),
                Cell("not ranked", note=BASELINE_NOTES[kind]),
                *baseline_cells,
            )
        )
        roles.append("baseline")
    return rows, roles


def _ranked_rows(summary: Summary, grid: _Grid, result: WinRateResult) -> list[tuple[Cell, ...]]:
    """One row per system in rank order; ``≈`` marks a rank range the next system's overlaps."""
    models = grid.models
    order = sorted(range(len(models)), key=lambda k: (result.rank[k], models[k]))
    rows: list[tuple[Cell, ...]] = []
    has_errors = summary.has_errors
    for pos, k in enumerate(order):
        rank_text = f"{result.rank_low[k]}–{result.rank_high[k]}"
        note = f"95% of bootstrap replicates rank this model between {rank_text}"
        if pos < len(order) - 1 and not result.separable_from_next[k]:
            rank_text += " ≈"
            note += "; not separable from the next model"
        row: list[Cell] = [
            Cell(float(result.rank[k]), note=note),
            Cell(models[k], href=f"models.html#{anchor(summary.system_model.get(models[k], models[k]))}"),
            Cell(result.win_rate[k], result.ci_low[k], result.ci_high[k]),
            Cell(rank_text, note=note),
        ]
        for j in range(len(grid.columns)):
            lo, hi = grid.cis.get((k, j), (None, None))
            row.append(Cell(float(grid.point[k, j]), lo, hi))
        if has_errors:
            row.append(error_rate_cell(summary, models[k]))
        rows.append(tuple(row))
    return rows


def _baseline_rows(
    summary: Summary,
    data: SuiteData,
    group: MetricGroup,
    members: Members,
    used_cols: list[str],
) -> dict[str, list[Cell]]:
    """kind -> one cell per column: chance and majority where the column has a finite label set."""
    if group.perturbation not in (None, "robustness", "fairness") or group.lower_is_better:
        return {}
    out: dict[str, list[Cell]] = {kind: [] for kind in BASELINE_KINDS}
    found = False
    of_column: dict[str, list[Member]] = {}
    for (_, c), its in members.items():
        of_column.setdefault(c, []).extend(its)
    for col in used_cols:
        items = of_column.get(col, [])
        values = None
        if items and all(metric in EXACT_MATCH_METRICS for _, metric, _, _ in items):
            values = column_baselines(data.reader, [it[0] for it in items], summary.baseline_scores)
        for kind in BASELINE_KINDS:
            if values is None:
                out[kind].append(Cell(None))
                continue
            value, note = values[kind]
            found = True
            out[kind].append(Cell(value, note=note))
            summary.baselines.append({"group": group.name, "kind": kind, "column": col, "value": value, "note": note})
    return out if found else {}


def _pooled_median_values(
    items: list[Member],
    medians: dict[str, str],
    per_run: PerRun,
) -> np.ndarray | None:
    """The per-instance values behind a median metric, pooled over the cell's runs (``None``: not one)."""
    arrays = []
    for run, metric, split, _ in items:
        values = per_run.get((run.run_id, medians[metric], split)) if metric in medians else None
        if values is None or len(values) == 0:
            return None
        arrays.append(values)
    return np.concatenate(arrays) if arrays else None
