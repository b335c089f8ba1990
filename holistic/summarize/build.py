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
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from holistic.core.hashing import stable_seed
from holistic.results import SuiteReader
from holistic.summarize.baselines import (
    BASELINE_KINDS,
    BASELINE_NOTES,
    EXACT_MATCH_METRICS,
    BaselineScores,
    column_baselines,
)
from holistic.summarize.judges import JudgeReport, judge_report
from holistic.summarize.load import RunInfo, SuiteData, load_suite, per_instance_values
from holistic.summarize.ratings import ratings_tables
from holistic.summarize.schema import MetricGroup, SummarySchema, load_schema
from holistic.summarize.systems import system_names
from holistic.summarize.tables import Cell, Column, Table
from holistic.summarize.targeted import targeted_tables
from holistic.summarize.winrate import WinRateResult, bootstrap_win_rates

EVAL_SPLIT_PREFERENCE = ("test", "valid")


@dataclass(frozen=True)
class StatRow:
    mean: float
    ci_low: float | None
    ci_high: float | None
    count: int
    higher_is_better: bool | None
    category: str | None


@dataclass
class Summary:
    suite: str
    tables: list[Table] = field(default_factory=list)
    leaderboards: dict[str, WinRateResult] = field(default_factory=dict)
    cells: list[dict[str, Any]] = field(default_factory=list)
    runs: list[RunInfo] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    """The systems compared (leaderboard rows): model names, with the adaptation
    settings that tell them apart in brackets when a model runs under several."""
    system_model: dict[str, str] = field(default_factory=dict)
    """System -> its model deployment's name."""
    system_of_run: dict[str, str] = field(default_factory=dict)
    """Run id -> system."""
    baselines: list[dict[str, Any]] = field(default_factory=list)
    """Reference cells: group, kind (chance | majority), column, value, note."""
    baseline_scores: dict[str, BaselineScores | None] = field(default_factory=dict, repr=False)
    """Run id -> its chance and majority scores, read once for every leaderboard."""
    coverage: dict[str, dict[str, str]] = field(default_factory=dict)
    column_runs: dict[str, list[str]] = field(default_factory=dict)
    judges: JudgeReport = field(default_factory=JudgeReport)
    """Judge agreement (with each other and with human ratings) and the judges flagged below the threshold."""
    """Column -> ids of the runs aggregated into it."""
    unfinished: list[dict[str, str]] = field(default_factory=list)
    """Runs of the suite (``suite.json``) that are not complete: ``run_id``, ``name``, ``status``
    (``pending``: never finished, e.g. helm-run was killed; ``partial``: some requests failed;
    ``failed``). The summary then describes part of the suite, and says so everywhere."""

    @property
    def has_errors(self) -> bool:
        """Whether some run of the suite has failed requests (tables then carry an error-rate column)."""
        return any(r.failed_requests for r in self.runs)

    @property
    def unranked(self) -> list[RunInfo]:
        """Runs whose every request failed: shown, never ranked."""
        return [r for r in self.runs if not r.rankable]

    def error_rate(self, model: str, column: str | None = None) -> float:
        """Failed share of the requests of ``model``'s runs (in ``column``, when given)."""
        ids = set(self.column_runs.get(column, [])) if column is not None else None
        runs = [r for r in self.runs if r.model == model and (ids is None or r.run_id in ids)]
        total = sum(r.requests for r in runs)
        return sum(r.failed_requests for r in runs) / total if total else 0.0

    def column_scenarios(self, column: str) -> set[str]:
        ids = set(self.column_runs.get(column, []))
        return {r.scenario for r in self.runs if r.run_id in ids}


def error_rate_column() -> Column:
    return Column("Error rate", lower_is_better=True, description="share of requests that failed")


def error_rate_cell(summary: Summary, model: str, column: str | None = None) -> Cell:
    rate = summary.error_rate(model, column)
    return Cell(
        rate, note="failed requests: the scores leave those instances out or count them as wrong" if rate else ""
    )


def base_column(run: RunInfo) -> str:
    """The run's first group (``msmarco_regular``, a user's ``capitals``), else its scenario."""
    return run.groups[0] if run.groups else run.scenario


def column_of(run: RunInfo, multi_method: set[str]) -> str:
    column = base_column(run)
    if column in multi_method:
        return f"{column} ({run.method})"
    return column


def _opt(value: Any) -> float | None:
    if value is None:
        return None
    f = float(value)
    return None if math.isnan(f) else f


def _stat_index(stats: pa.Table) -> dict[tuple[str, str, str, str | None], StatRow]:
    """(run_id, metric, split, perturbation) -> stat, for rows without a sub-split."""
    if stats.num_rows == 0:
        return {}
    data: dict[str, list[Any]] = stats.to_pydict()
    n = stats.num_rows

    def get(col: str) -> list[Any]:
        return data.get(col, [None] * n)

    out: dict[tuple[str, str, str, str | None], StatRow] = {}
    for run_id, metric, split, sub, pert, mean, lo, hi, count, hib, cat in zip(
        get("run_id"),
        get("metric"),
        get("split"),
        get("sub_split"),
        get("perturbation"),
        get("mean"),
        get("ci_low"),
        get("ci_high"),
        get("count"),
        get("higher_is_better"),
        get("category"),
        strict=True,
    ):
        if sub not in (None, "") or mean is None:
            continue
        out[(run_id, metric, split or "test", pert or None)] = StatRow(
            mean=float(mean),
            ci_low=_opt(lo),
            ci_high=_opt(hi),
            count=int(count or 0),
            higher_is_better=hib,
            category=cat,
        )
    return out


def _eval_split(
    index: dict[tuple[str, str, str, str | None], StatRow], run_id: str, metric: str, perturbation: str | None
) -> tuple[str, StatRow] | None:
    for split in EVAL_SPLIT_PREFERENCE:
        row = index.get((run_id, metric, split, perturbation))
        if row is not None:
            return split, row
    return None


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
) -> Summary:
    """Aggregate every completed run of the suite at ``suite_dir``; judges whose agreement is
    below ``judge_threshold`` are flagged."""
    schema = schema or load_schema()
    data = load_suite(suite_dir)
    index = _stat_index(data.stats)
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
        system_model={systems[r.run_id]: r.model for r in data.runs},
    )
    for run in data.runs:
        summary.column_runs.setdefault(column_of(run, multi), []).append(run.run_id)
    summary.unfinished = unfinished_runs(data.reader.meta, data.runs)

    for group in schema.metric_groups:
        _metric_group(summary, data, index, group, multi, num_bootstrap, seed, dict(schema.medians))
    summary.tables.extend(_run_group_tables(summary, schema))
    summary.tables.extend(_scenario_tables(summary, data, index, multi))
    summary.tables.extend(targeted_tables(data, lambda run: column_of(run, multi)))
    summary.tables.extend(ratings_tables(data.reader, data.runs, lambda run: column_of(run, multi)))
    summary.judges = judge_report(data.reader, data.runs, lambda run: column_of(run, multi), threshold=judge_threshold)
    summary.tables.extend(summary.judges.tables)
    summary.coverage = _coverage(data, multi)
    summary.tables.append(_coverage_table(summary))
    return summary


def _metric_group(
    summary: Summary,
    data: SuiteData,
    index: dict[tuple[str, str, str, str | None], StatRow],
    group: MetricGroup,
    multi: set[str],
    num_bootstrap: int,
    seed: int,
    medians: dict[str, str] | None = None,
) -> None:
    columns = summary.columns
    medians = medians or {}
    # (model, column) -> list of (run, metric, split, stat)
    members: dict[tuple[str, str], list[tuple[RunInfo, str, str, StatRow]]] = defaultdict(list)
    for run in data.runs:
        if not run.rankable:  # every request failed: nothing was measured
            continue
        metric = group.metric_for(run.scenario, run.main_metric)
        if metric is None:
            continue
        found = _eval_split(index, run.run_id, metric, group.perturbation)
        if found is None:
            continue
        split, stat_row = found
        members[(summary.system_of_run[run.run_id], column_of(run, multi))].append((run, metric, split, stat_row))
    if not members:
        return
    models = [m for m in summary.models if any(key[0] == m for key in members)]
    lower: dict[str, bool] = {}
    for (_, col), items in members.items():
        hib = items[0][3].higher_is_better
        lower[col] = group.lower_is_better if group.lower_is_better is not None else (hib is False)

    used_cols = [c for c in columns if any((m, c) in members for m in models)]
    point = np.full((len(models), len(used_cols)), np.nan)
    reps = np.full((num_bootstrap, len(models), len(used_cols)), np.nan)
    cis: dict[tuple[int, int], tuple[float | None, float | None]] = {}

    run_ids = sorted({it[0].run_id for items in members.values() for it in items})
    metric_names = sorted({it[1] for items in members.values() for it in items})
    metric_names = sorted({*metric_names, *(medians[m] for m in metric_names if m in medians)})
    pis = per_instance_values(data.reader, run_ids, metric_names)
    per_run = _per_instance_arrays(pis, group.perturbation)

    for i, model in enumerate(models):
        for j, col in enumerate(used_cols):
            items = members.get((model, col), [])
            if not items:
                continue
            means = [it[3].mean for it in items]
            point[i, j] = float(np.mean(means))
            sub_reps = []
            for run, metric, split, stat in items:
                values = per_run.get((run.run_id, metric, split))
                if values is not None and len(values) > 0 and num_bootstrap > 0:
                    rng = np.random.default_rng(stable_seed(seed, group.name, run.run_id, metric))
                    idx = rng.integers(0, len(values), size=(num_bootstrap, len(values)))
                    sub_reps.append(values[idx].mean(axis=1))
                else:
                    sub_reps.append(np.full(num_bootstrap, stat.mean))
            if num_bootstrap > 0:
                cell_reps = np.mean(np.stack(sub_reps), axis=0)
                reps[:, i, j] = cell_reps
                has_pi = any(per_run.get((r.run_id, m, s)) is not None for r, m, s, _ in items)
                if has_pi:
                    cis[(i, j)] = (float(np.percentile(cell_reps, 2.5)), float(np.percentile(cell_reps, 97.5)))
            if (i, j) not in cis and len(items) == 1:
                cis[(i, j)] = (items[0][3].ci_low, items[0][3].ci_high)
            pooled = _pooled_median_values(items, medians, per_run)
            if pooled is not None:  # a median metric: the median of the pooled values, CI of the median
                rng = np.random.default_rng(stable_seed(seed, group.name, "median", *(it[0].run_id for it in items)))
                point[i, j] = float(np.median(pooled))
                median_reps = np.median(pooled[rng.integers(0, len(pooled), size=(num_bootstrap, len(pooled)))], axis=1)
                if num_bootstrap > 0:
                    reps[:, i, j] = median_reps
                    cis[(i, j)] = (float(np.percentile(median_reps, 2.5)), float(np.percentile(median_reps, 97.5)))
            lo, hi = cis.get((i, j), (None, None))
            summary.cells.append(
                {
                    "group": group.name,
                    "model": model,
                    "column": col,
                    "value": point[i, j],
                    "ci_low": lo,
                    "ci_high": hi,
                    "lower_is_better": lower[col],
                    "metric": ",".join(sorted({it[1] for it in items})),
                    "sub_runs": len(items),
                    "perturbation": group.perturbation,
                }
            )

    lib = [lower[c] for c in used_cols]
    result = bootstrap_win_rates(models, point, reps if num_bootstrap > 0 else reps[:0], lib)
    summary.leaderboards[group.name] = result

    order = sorted(range(len(models)), key=lambda k: (result.rank[k], models[k]))
    rows: list[tuple[Cell, ...]] = []
    for pos, k in enumerate(order):
        rank_text = f"{result.rank_low[k]}–{result.rank_high[k]}"
        note = f"95% of bootstrap replicates rank this model between {rank_text}"
        if pos < len(order) - 1 and not result.separable_from_next[k]:
            rank_text += " ≈"
            note += "; not separable from the next model"
        row: list[Cell] = [
            Cell(float(result.rank[k]), note=note),
            Cell(models[k], href=f"models.html#{_anchor(summary.system_model.get(models[k], models[k]))}"),
            Cell(result.win_rate[k], result.ci_low[k], result.ci_high[k]),
            Cell(rank_text, note=note),
        ]
        for j in range(len(used_cols)):
            lo, hi = cis.get((k, j), (None, None))
            row.append(Cell(float(point[k, j]), lo, hi))
        if summary.has_errors:
            row.append(error_rate_cell(summary, models[k]))
        rows.append(tuple(row))
    roles = [""] * len(rows)
    for kind, baseline_cells in _baseline_rows(summary, data, group, members, used_cols).items():
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
    header = [
        Column("Rank", numeric=True, digits=0),
        Column("Model"),
        Column("Mean win rate", lower_is_better=False),
        Column("Rank range"),
    ]
    header += [Column(c, lower_is_better=lower[c]) for c in used_cols]
    if summary.has_errors:
        header.append(error_rate_column())
    summary.tables.append(
        Table(
            id=f"group_{group.name}",
            title=f"{group.name.capitalize()}: mean win rate and model × scenario",
            description=group.description,
            columns=tuple(header),
            rows=tuple(rows),
            row_roles=tuple(roles),
        )
    )


def _baseline_rows(
    summary: Summary,
    data: SuiteData,
    group: MetricGroup,
    members: dict[tuple[str, str], list[tuple[RunInfo, str, str, StatRow]]],
    used_cols: list[str],
) -> dict[str, list[Cell]]:
    """kind -> one cell per column: chance and majority where the column has a finite label set."""
    if group.perturbation not in (None, "robustness", "fairness") or group.lower_is_better:
        return {}
    out: dict[str, list[Cell]] = {kind: [] for kind in BASELINE_KINDS}
    found = False
    for col in used_cols:
        items = [it for (_, c), its in members.items() if c == col for it in its]
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
    items: list[tuple[RunInfo, str, str, StatRow]],
    medians: dict[str, str],
    per_run: dict[tuple[str, str, str], np.ndarray],
) -> np.ndarray | None:
    """The per-instance values behind a median metric, pooled over the cell's runs (``None``: not one)."""
    arrays = []
    for run, metric, split, _ in items:
        values = per_run.get((run.run_id, medians[metric], split)) if metric in medians else None
        if values is None or len(values) == 0:
            return None
        arrays.append(values)
    return np.concatenate(arrays) if arrays else None


def _per_instance_arrays(pis: pa.Table, perturbation: str | None) -> dict[tuple[str, str, str], np.ndarray]:
    """(run_id, metric, split) -> per-instance values averaged over trials, ordered by instance id."""
    if pis.num_rows == 0:
        return {}
    d = pis.to_pydict()
    n = pis.num_rows
    perts = d.get("perturbation", [None] * n)
    splits = d.get("split", ["test"] * n)
    acc: dict[tuple[str, str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for run_id, inst, metric, split, pert, value in zip(
        d["run_id"], d["instance_id"], d["metric"], splits, perts, d["value"], strict=True
    ):
        if (pert or None) != perturbation or value is None:
            continue
        acc[(run_id, metric, split or "test")][inst].append(float(value))
    return {key: np.array([float(np.mean(by_inst[k])) for k in sorted(by_inst)]) for key, by_inst in acc.items()}


def _anchor(text: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in text)


def _run_group_tables(summary: Summary, schema: SummarySchema) -> Iterable[Table]:
    """Per run group: model x scenario with each metric group's value (for the group pages)."""
    for rg in schema.run_groups:
        cols = [
            c
            for c in summary.columns
            if "*" in rg.scenarios
            or c.split(" (")[0] in rg.scenarios
            or summary.column_scenarios(c) & set(rg.scenarios)
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
            if summary.has_errors:
                header.append(error_rate_column())
            rows: list[tuple[Cell, ...]] = []
            for m in summary.models:
                row: list[Cell] = [Cell(m)]
                for c in present:
                    cell = cells.get((m, c))
                    row.append(Cell(cell["value"], cell["ci_low"], cell["ci_high"]) if cell else Cell(None))
                if summary.has_errors:
                    row.append(error_rate_cell(summary, m))
                rows.append(tuple(row))
            yield Table(
                id=f"rungroup_{_anchor(rg.name)}_{group_name}",
                title=f"{rg.name}: {group_name}",
                description=rg.description,
                columns=tuple(header),
                rows=tuple(rows),
            )


def _scenario_tables(
    summary: Summary,
    data: SuiteData,
    index: dict[tuple[str, str, str, str | None], StatRow],
    multi: set[str],
) -> Iterable[Table]:
    """Per scenario column: model x every metric (sub-runs macro-averaged)."""
    by_id = {r.run_id: r for r in data.runs}
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
        if summary.has_errors:
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
            if summary.has_errors:
                row.append(error_rate_cell(summary, m, col))
            rows.append(tuple(row))
        yield Table(
            id=f"scenario_{_anchor(col)}",
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
