"""Build a suite's summary: cells per metric group, leaderboards, per-scenario tables, coverage.

Aggregation rules:

- A *column* is a scenario (with `` (method)`` appended when one suite runs a
  scenario with several adaptation methods). Runs of one model that fall into
  the same column (MMLU's subjects, RAFT's tasks, a synthetic scenario's modes)
  are sub-runs: the cell is the mean of their means (a macro average, as HELM
  reports MMLU). Trials were already aggregated by the runner as the mean of
  trial means.
- A *row* is a system: a model under one adaptation (:mod:`holistic.summarize.systems`).
  Leaderboards of columns with a finite label set also get chance and
  majority-class reference rows (:mod:`holistic.summarize.baselines`), not ranked.
- Each cell's 95% interval comes from a seeded bootstrap over instances: each
  sub-run's per-instance values (averaged over trials) are resampled, and the
  cell is recomputed per replicate. The same replicates drive the win-rate
  bootstrap. Run-level metrics without per-instance values (ECE, NDCG) keep the
  interval the runner computed and do not vary across replicates.

Each metric group's cells, win rates and leaderboard are computed in
:mod:`holistic.summarize.leaderboard`; the :class:`Summary` record is
:mod:`holistic.summarize.summary`'s (both names are re-exported here).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from holistic.results import SuiteReader
from holistic.results.output_cache import OutputCache
from holistic.summarize.judges import judge_report
from holistic.summarize.leaderboard import metric_group
from holistic.summarize.load import EVAL_SPLIT_PREFERENCE, RunInfo, SuiteData, load_suite
from holistic.summarize.ratings import ratings_tables
from holistic.summarize.schema import SummarySchema, load_schema
from holistic.summarize.summary import (
    StatIndex,
    StatRow,
    Summary,
    base_column,
    column_of,
    error_rate_cell,
    error_rate_column,
    stat_index,
)
from holistic.summarize.systems import run_names, system_names
from holistic.summarize.tables import Cell, Column, Table, anchor
from holistic.summarize.targeted import targeted_tables

__all__ = [
    "EVAL_SPLIT_PREFERENCE",
    "StatRow",
    "Summary",
    "base_column",
    "column_of",
    "error_rate_cell",
    "error_rate_column",
    "summarize_suite",
    "unfinished_runs",
]


def unfinished_runs(meta: Mapping[str, Any], read: Iterable[RunInfo]) -> list[dict[str, str]]:
    """The runs of the suite that are not complete: those ``suite.json`` lists whose run was not read
    as complete (its status there: ``pending``, ``failed``), and those read as partial."""
    by_id = {r.run_id: r for r in read}
    entries = meta.get("runs") if isinstance(meta, Mapping) else None
    out = []
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, Mapping):
            continue
        run_id = str(entry.get("run_id") or "")
        run = by_id.get(run_id)
        if run is not None:
            status = "partial" if run.failed_requests else "complete"  # the manifest, not a status written before it
        else:
            status = str(entry.get("status") or "pending")
        if status != "complete":
            out.append({"run_id": run_id, "name": str(entry.get("name") or ""), "status": status})
    return out


def summarize_suite(
    suite_dir: Path | SuiteReader,
    *,
    schema: SummarySchema | None = None,
    num_bootstrap: int = 200,
    seed: int = 0,
    judge_threshold: float | None = None,
    cache: OutputCache | None = None,
) -> Summary:
    """Aggregate every completed run of the suite at ``suite_dir``; judges whose agreement is
    below ``judge_threshold`` are flagged. ``cache``: the suite's output cache, where each run's
    bootstrap replicates are kept (:mod:`holistic.summarize.replicates`)."""
    schema = schema or load_schema()
    data = load_suite(suite_dir, cache)
    index = stat_index(data.stats)
    methods: dict[str, set[str]] = defaultdict(set)
    for run in data.runs:
        methods[base_column(run)].add(run.method)
    multi = {s for s, m in methods.items() if len(m) > 1}
    columns = sorted({column_of(r, multi) for r in data.runs})
    systems = system_names(data.runs)
    models = sorted(set(systems.values()))
    summary = Summary(
        suite=data.suite,
        runs=data.runs,
        columns=columns,
        models=models,
        system_of_run=systems,
        name_of_run=run_names(data.runs),
        system_model={systems[r.run_id]: r.model for r in data.runs},
    )
    for run in data.runs:
        summary.column_runs.setdefault(column_of(run, multi), []).append(run.run_id)
    summary.unfinished = unfinished_runs(data.reader.meta, data.runs)

    for group in schema.metric_groups:
        metric_group(summary, data, index, group, multi, num_bootstrap, seed, dict(schema.medians), cache)
    summary.trial_means = data.trial_means
    data.forget_values()
    summary.tables.extend(_run_group_tables(summary, schema))
    summary.tables.extend(_scenario_tables(summary, data, index, multi))
    summary.tables.extend(targeted_tables(data, lambda run: column_of(run, multi)))
    summary.tables.extend(ratings_tables(data.reader, data.runs, lambda run: column_of(run, multi)))
    summary.judges = judge_report(data.reader, data.runs, lambda run: column_of(run, multi), threshold=judge_threshold)
    summary.tables.extend(summary.judges.tables)
    summary.coverage = _coverage(data, multi)
    summary.tables.append(_coverage_table(summary))
    return summary


def _run_group_tables(summary: Summary, schema: SummarySchema) -> Iterable[Table]:
    """Per run group: model x scenario with each metric group's value (for the group pages)."""
    has_errors = summary.has_errors  # a walk over every run: once, not per table and model
    scenarios_of = summary.column_scenarios()
    for rg in schema.run_groups:
        cols = [
            c
            for c in summary.columns
            if "*" in rg.scenarios or c.split(" (")[0] in rg.scenarios or scenarios_of.get(c, set()) & set(rg.scenarios)
        ]
        if not cols:
            continue
        for group_name in summary.leaderboards:
            cells = {
                (c["model"], c["column"]): c for c in summary.cells if c["group"] == group_name and c["column"] in cols
            }
            if not cells:
                continue
            present = [c for c in cols if any((m, c) in cells for m in summary.models)]
            header = [Column("Model")] + [
                Column(c, lower_is_better=next(v["lower_is_better"] for k, v in cells.items() if k[1] == c))
                for c in present
            ]
            if has_errors:
                header.append(error_rate_column())
            rows: list[tuple[Cell, ...]] = []
            for m in summary.models:
                row: list[Cell] = [Cell(m)]
                for c in present:
                    cell = cells.get((m, c))
                    row.append(Cell(cell["value"], cell["ci_low"], cell["ci_high"]) if cell else Cell(None))
                if has_errors:
                    row.append(error_rate_cell(summary, m))
                rows.append(tuple(row))
            yield Table(
                id=f"rungroup_{anchor(rg.name)}_{group_name}",
                title=f"{rg.name}: {group_name}",
                description=rg.description,
                columns=tuple(header),
                rows=tuple(rows),
            )


def _scenario_tables(
    summary: Summary,
    data: SuiteData,
    index: StatIndex,
    multi: set[str],
) -> Iterable[Table]:
    """Per scenario column: model x every metric (sub-runs macro-averaged)."""
    by_id = {r.run_id: r for r in data.runs}
    has_errors = summary.has_errors  # a walk over every run: once, not per column and model
    per_column: dict[str, dict[tuple[str, str | None], list[tuple[str, StatRow]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for (run_id, metric, split, pert), stat_row in index.items():
        run = by_id.get(run_id)
        if run is None or split not in EVAL_SPLIT_PREFERENCE:
            continue
        per_column[column_of(run, multi)][(metric, pert)].append((summary.system_of_run[run.run_id], stat_row))
    for col in summary.columns:
        keys = per_column[col]
        metric_keys = sorted(keys, key=lambda k: (k[0], k[1] or ""))
        header = [Column("Model")]
        for metric, pert in metric_keys:
            hib = keys[(metric, pert)][0][1].higher_is_better
            label = metric if pert is None else f"{metric} ({pert})"
            header.append(Column(label, lower_is_better=None if hib is None else not hib, numeric=True))
        if has_errors:
            header.append(error_rate_column())
        rows: list[tuple[Cell, ...]] = []
        for m in summary.models:
            row: list[Cell] = [Cell(m)]
            for key in metric_keys:
                vals = [r for model, r in keys[key] if model == m]
                if not vals:
                    row.append(Cell(None))
                elif len(vals) == 1:
                    row.append(Cell(vals[0].mean, vals[0].ci_low, vals[0].ci_high, note=f"n={vals[0].count}"))
                else:
                    row.append(Cell(float(np.mean([v.mean for v in vals])), note=f"mean of {len(vals)} sub-runs"))
            if has_errors:
                row.append(error_rate_cell(summary, m, col))
            rows.append(tuple(row))
        yield Table(
            id=f"scenario_{anchor(col)}",
            title=f"{col}: every metric",
            columns=tuple(header),
            rows=tuple(rows),
        )


def _coverage(data: SuiteData, multi: set[str]) -> dict[str, dict[str, str]]:
    """scenario column -> category -> ``measured`` or the reason it is not."""
    from holistic.core.interfaces import METRIC_CATEGORIES

    out: dict[str, dict[str, str]] = {}
    for run in data.runs:
        col = column_of(run, multi)
        cov = out.setdefault(col, {})
        recorded = run.spec.get("coverage") or {}
        not_applicable = run.spec.get("metrics_not_applicable") or {}
        requested = set(run.spec.get("metrics") or [])
        for cat in METRIC_CATEGORIES:
            value = recorded.get(cat)
            if value is None:
                if cat in not_applicable:
                    value = str(not_applicable[cat])
                elif cat in requested:
                    value = "measured"
            if value == "measured" or cov.get(cat) == "measured":
                cov[cat] = "measured"
            elif value:
                cov.setdefault(cat, str(value))
            else:
                cov.setdefault(cat, "not requested")
    return out


def _coverage_table(summary: Summary) -> Table:
    from holistic.core.interfaces import METRIC_CATEGORIES

    header = [Column("Scenario")] + [Column(c) for c in METRIC_CATEGORIES]
    rows: list[tuple[Cell, ...]] = []
    for col in summary.columns:
        cov = summary.coverage.get(col, {})
        row: list[Cell] = [Cell(col)]
        for cat in METRIC_CATEGORIES:
            v = cov.get(cat, "not requested")
            row.append(Cell("measured" if v == "measured" else "n/a", note="" if v == "measured" else v))
        rows.append(tuple(row))
    return Table(id="coverage", title="Coverage: scenario × metric category", columns=tuple(header), rows=tuple(rows))
