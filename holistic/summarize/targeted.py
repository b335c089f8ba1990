"""The "Targeted evaluations" tables: one per component (language, reasoning, bias...).

HELM's §5 lays out each component as models x the headline numbers of its
scenarios. Which scenarios belong to which component comes from the runs
themselves (scenario tag ``targeted:<component>`` in ``run_spec.json``); which
metrics each scenario shows comes from ``targeted.yaml`` beside this module. A
cell is the mean of the model's runs in that column (sub-runs macro-averaged), on
the test split when there is one, else valid; a single run keeps its interval.

Besides, each targeted column whose scenario reports breakdowns (BLiMP paradigms
and phenomena, BBQ categories, bAbI tasks...) gets a table of its main metric per
group and model (``targeted_<column>_groups``).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from holistic.summarize.load import EVAL_SPLIT_PREFERENCE, RunInfo, SuiteData
from holistic.summarize.tables import Cell, Column, Table

CONFIG = Path(__file__).with_name("targeted.yaml")
TAG_PREFIX = "targeted:"


@dataclass(frozen=True)
class Component:
    name: str
    title: str
    description: str
    metrics: dict[str, tuple[str, ...]]
    """Scenario -> metrics shown for it."""


def load_components(path: Path = CONFIG) -> tuple[Component, ...]:
    data: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return tuple(
        Component(
            name=str(c["name"]),
            title=str(c.get("title", c["name"])),
            description=str(c.get("description", "")),
            metrics={str(k): tuple(v) for k, v in (c.get("metrics") or {}).items()},
        )
        for c in data.get("components", [])
    )


def component_of(run: RunInfo) -> str | None:
    tags = (run.spec.get("scenario_info") or {}).get("tags") or []
    return next((t[len(TAG_PREFIX) :] for t in tags if isinstance(t, str) and t.startswith(TAG_PREFIX)), None)


@dataclass(frozen=True)
class _Value:
    mean: float
    ci_low: float | None
    ci_high: float | None
    count: int
    higher_is_better: bool | None


def _opt(v: Any) -> float | None:
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def _index(data: SuiteData) -> dict[tuple[str, str, str, str | None], _Value]:
    """(run_id, metric, split, sub_split) -> value, for unperturbed rows."""
    if data.stats.num_rows == 0:
        return {}
    d: dict[str, list[Any]] = data.stats.to_pydict()
    n = data.stats.num_rows

    def col(name: str) -> list[Any]:
        return d.get(name, [None] * n)

    out = {}
    for run_id, metric, split, sub, pert, mean, lo, hi, count, hib in zip(
        col("run_id"),
        col("metric"),
        col("split"),
        col("sub_split"),
        col("perturbation"),
        col("mean"),
        col("ci_low"),
        col("ci_high"),
        col("count"),
        col("higher_is_better"),
        strict=True,
    ):
        if pert or mean is None:
            continue
        out[(run_id, metric, split or "test", sub or None)] = _Value(
            float(mean), _opt(lo), _opt(hi), int(count or 0), hib
        )
    return out


def _eval_value(
    index: dict[tuple[str, str, str, str | None], _Value], run_id: str, metric: str, sub_split: str | None
) -> _Value | None:
    for split in EVAL_SPLIT_PREFERENCE:
        value = index.get((run_id, metric, split, sub_split))
        if value is not None:
            return value
    return None


def _cell(values: list[_Value]) -> Cell:
    if not values:
        return Cell(None)
    if len(values) == 1:
        v = values[0]
        return Cell(v.mean, v.ci_low, v.ci_high, note=f"n={v.count}")
    return Cell(sum(v.mean for v in values) / len(values), note=f"mean of {len(values)} sub-runs")


def targeted_tables(data: SuiteData, column_of: Any, components: Iterable[Component] | None = None) -> list[Table]:
    """The component tables and the per-group tables of the suite's targeted runs.

    ``column_of(run)`` names a run's column (as the other summary tables do).
    """
    components = tuple(components if components is not None else load_components())
    index = _index(data)
    models = sorted({r.model for r in data.runs})
    tables: list[Table] = []
    for component in components:
        runs = [r for r in data.runs if component_of(r) == component.name]
        if not runs:
            continue
        by_column: dict[str, list[RunInfo]] = defaultdict(list)
        for run in runs:
            by_column[column_of(run)].append(run)
        header = [Column("Model")]
        cells: list[list[Cell]] = [[Cell(m)] for m in models]
        for column in sorted(by_column):
            members = by_column[column]
            metrics = component.metrics.get(members[0].scenario) or (
                (members[0].main_metric,) if members[0].main_metric else ()
            )
            for metric in metrics:
                per_model = {
                    m: [
                        v
                        for r in members
                        if r.model == m
                        for v in [_eval_value(index, r.run_id, metric, None)]
                        if v is not None
                    ]
                    for m in models
                }
                found = [v for vs in per_model.values() for v in vs]
                if not found:
                    continue
                hib = found[0].higher_is_better
                header.append(
                    Column(f"{column}: {metric}", lower_is_better=None if hib is None else not hib, numeric=True)
                )
                for i, m in enumerate(models):
                    cells[i].append(_cell(per_model[m]))
        if len(header) > 1:
            tables.append(
                Table(
                    id=f"targeted_{component.name}",
                    title=f"Targeted evaluations — {component.title}",
                    description=component.description,
                    columns=tuple(header),
                    rows=tuple(tuple(r) for r in cells),
                )
            )
        tables.extend(_group_tables(by_column, index, models))
    return tables


def _group_tables(
    by_column: dict[str, list[RunInfo]], index: dict[tuple[str, str, str, str | None], _Value], models: list[str]
) -> Iterable[Table]:
    for column in sorted(by_column):
        members = by_column[column]
        metric = members[0].main_metric
        keys = (members[0].spec.get("scenario_info") or {}).get("breakdowns") or []
        if not metric or not keys:
            continue
        ids = {r.run_id for r in members}
        groups = sorted(
            {sub for (rid, m, _, sub) in index if rid in ids and m == metric and sub and sub.split("=", 1)[0] in keys}
        )
        if not groups:
            continue
        rows = []
        hib: bool | None = None
        for group in groups:
            row = [Cell(group)]
            for m in models:
                values = [
                    v
                    for r in members
                    if r.model == m
                    for v in [_eval_value(index, r.run_id, metric, group)]
                    if v is not None
                ]
                hib = values[0].higher_is_better if values and hib is None else hib
                row.append(_cell(values))
            rows.append(tuple(row))
        yield Table(
            id=f"targeted_{_safe(column)}_groups",
            title=f"{column}: {metric} per group",
            description=f"Broken down by {', '.join(keys)}.",
            columns=(
                Column("Group"),
                *(Column(m, lower_is_better=None if hib is None else not hib, numeric=True) for m in models),
            ),
            rows=tuple(rows),
        )


def _safe(text: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in text)
