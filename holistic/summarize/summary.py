"""The summary of a suite as a record, and what its builders share: the columns runs fall
into, the index of the runs' statistics and the error-rate cells.

:mod:`holistic.summarize.build` fills a :class:`Summary`;
:mod:`holistic.summarize.leaderboard` adds one metric group's cells and leaderboard to it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from holistic.summarize.baselines import BaselineScores
from holistic.summarize.judges import JudgeReport
from holistic.summarize.load import EVAL_SPLIT_PREFERENCE, RunInfo
from holistic.summarize.tables import Cell, Column, Table
from holistic.summarize.winrate import WinRateResult


@dataclass(frozen=True)
class StatRow:
    mean: float
    ci_low: float | None
    ci_high: float | None
    count: int
    higher_is_better: bool | None
    category: str | None


StatIndex = dict[tuple[str, str, str, str | None], StatRow]
"""(run_id, metric, split, perturbation) -> the stat, for rows without a sub-split."""


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
    name_of_run: dict[str, str] = field(default_factory=dict)
    """Run id -> the run's name as people read it (:func:`holistic.core.naming.display_names`)."""
    baselines: list[dict[str, Any]] = field(default_factory=list)
    """Reference cells: group, kind (chance | majority), column, value, note."""
    baseline_scores: dict[str, BaselineScores | None] = field(default_factory=dict, repr=False)
    """Run id -> its chance and majority scores, read once for every leaderboard."""
    coverage: dict[str, dict[str, str]] = field(default_factory=dict)
    column_runs: dict[str, list[str]] = field(default_factory=dict)
    """Column -> ids of the runs aggregated into it."""
    trial_means: dict[str, list[list[float]]] = field(default_factory=dict, repr=False)
    """Run id -> ``[[trial, mean], ...]`` of its main metric's original values, for the runs whose
    per-instance values the leaderboards read (the site's trial-spread plots read the others' files)."""
    judges: JudgeReport = field(default_factory=JudgeReport)
    """Judge agreement (with each other and with human ratings) and the judges flagged below the threshold."""
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

    def column_scenarios(self) -> dict[str, set[str]]:
        """Column -> the scenarios of its runs (one walk over the runs for every column)."""
        scenario_of = {r.run_id: r.scenario for r in self.runs}
        return {column: {scenario_of[i] for i in ids if i in scenario_of} for column, ids in self.column_runs.items()}


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


def stat_index(stats: pa.Table) -> StatIndex:
    """(run_id, metric, split, perturbation) -> stat, for rows without a sub-split."""
    if stats.num_rows == 0:
        return {}
    data: dict[str, list[Any]] = stats.to_pydict()
    n = stats.num_rows

    def get(col: str) -> list[Any]:
        return data.get(col, [None] * n)

    out: StatIndex = {}
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


def eval_split(index: StatIndex, run_id: str, metric: str, perturbation: str | None) -> tuple[str, StatRow] | None:
    for split in EVAL_SPLIT_PREFERENCE:
        row = index.get((run_id, metric, split, perturbation))
        if row is not None:
            return split, row
    return None
