"""The summary schema: metric groups and run groups (built-in YAML, overridable)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from holistic.core.errors import SpecError
from holistic.core.located_yaml import load_source
from holistic.core.yaml_limits import MAX_FILE_BYTES

BUILTIN_SCHEMA = Path(__file__).with_name("schema.yaml")


@dataclass(frozen=True)
class MetricGroup:
    """One leaderboard: which metric to read per scenario, and its direction."""

    name: str
    description: str
    metric: str
    """A metric name, or ``main`` for each scenario's main metric."""
    perturbation: str | None = None
    """``None`` for unperturbed values; ``robustness`` / ``fairness`` for worst case."""
    lower_is_better: bool | None = None
    """Overrides the direction recorded in the stats (``None``: use the stats)."""
    per_scenario: tuple[tuple[str, str], ...] = ()
    """Scenario-specific metric names (scenario -> metric) that override ``metric``."""

    def metric_for(self, scenario: str, main_metric: str | None) -> str | None:
        for name, metric in self.per_scenario:
            if name == scenario:
                return metric
        if self.metric == "main":
            return main_metric
        return self.metric


@dataclass(frozen=True)
class RunGroup:
    """A named set of scenarios shown together (e.g. the core scenarios)."""

    name: str
    description: str
    scenarios: tuple[str, ...]
    """Scenario names; ``*`` means every scenario of the suite."""


@dataclass(frozen=True)
class SummarySchema:
    metric_groups: tuple[MetricGroup, ...]
    run_groups: tuple[RunGroup, ...]
    medians: tuple[tuple[str, str], ...] = ()
    """Median metrics (run-level median -> the per-instance metric it is the median of):
    their leaderboard cell is the median of the per-instance values pooled over the
    cell's runs, with a bootstrap CI of that median."""


def _entries(data: dict[str, Any], key: str, shown: str) -> list[dict[str, Any]]:
    items = data.get(key) or []
    if not isinstance(items, list):
        raise SpecError(f"'{key}' must be a list of mappings", file=shown, path=key)
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise SpecError(f"each entry of '{key}' must be a mapping", file=shown, path=f"{key}[{i}]")
    return items


def load_schema(path: Path | None = None, *, max_bytes: int = MAX_FILE_BYTES) -> SummarySchema:
    """The built-in schema, or the user's file (same format) when given.

    The user's file is read like a run spec: a regular file of at most ``max_bytes``, YAML with
    bounded aliases and nesting; anything else is a :class:`SpecError` naming the file."""
    if path is None:
        data: Any = yaml.safe_load(BUILTIN_SCHEMA.read_text(encoding="utf-8")) or {}
        shown = str(BUILTIN_SCHEMA)
    else:
        shown = str(path)
        data = load_source(path, shown, limit=max_bytes).data or {}
    if not isinstance(data, dict):
        raise SpecError(
            f"a summary schema is a YAML mapping (metric_groups, run_groups, medians), not {type(data).__name__}",
            file=shown,
        )
    source = Path(shown)
    groups = []
    for i, g in enumerate(_entries(data, "metric_groups", shown)):
        if "name" not in g or "metric" not in g:
            raise SpecError("a metric group needs 'name' and 'metric'", file=str(source), path=f"metric_groups[{i}]")
        groups.append(
            MetricGroup(
                name=g["name"],
                description=g.get("description", ""),
                metric=g["metric"],
                perturbation=g.get("perturbation"),
                lower_is_better=g.get("lower_is_better"),
                per_scenario=tuple(sorted((g.get("per_scenario") or {}).items())),
            )
        )
    run_groups = []
    for i, r in enumerate(_entries(data, "run_groups", shown)):
        if "name" not in r:
            raise SpecError("a run group needs 'name'", file=str(source), path=f"run_groups[{i}]")
        run_groups.append(
            RunGroup(name=r["name"], description=r.get("description", ""), scenarios=tuple(r.get("scenarios", ["*"])))
        )
    medians = data.get("medians") or {}
    if not isinstance(medians, dict) or not all(isinstance(v, str) for v in medians.values()):
        raise SpecError("'medians' maps a median metric to its per-instance metric", file=str(source), path="medians")
    return SummarySchema(
        metric_groups=tuple(groups), run_groups=tuple(run_groups), medians=tuple(sorted(medians.items()))
    )
