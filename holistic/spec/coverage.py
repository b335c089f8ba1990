"""The scenario x metric-category coverage table of a plan.

For each run, every metric category is one of:

- *measured* — the run asks for it (as a category, or through a metric of that
  category) and it applies;
- *not applicable* — asked, but the scenario declares it does not apply
  (``ScenarioInfo.metric_categories`` / ``not_applicable_reasons``), the metric
  selection rules it out for this model (``select_metrics``'s ``not_applicable``,
  e.g. calibration on a model without log-probabilities), or — for robustness and
  fairness — the run has no perturbation of that kind (a scenario unperturbed by
  default, ``ScenarioInfo.unperturbed_by_default``, says why);
- *not requested* — the suite does not ask for it.

A cell of the table merges the runs of one scenario: ``measured`` when every run
measures it, ``partial`` when some do, else ``n/a``; each unmeasured cell carries
its reason(s).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from holistic.core.interfaces import METRIC_CATEGORIES, ScenarioInfo
from holistic.core.types import ModelDeployment, RunSpec

MEASURED = "measured"
PARTIAL = "partial"
NOT_APPLICABLE = "n/a"

NOT_REQUESTED = "not requested in this suite"


@dataclass(frozen=True)
class RunCoverage:
    """One run's verdict per category: ``None`` = measured, else the reason it is not."""

    scenario: str
    model: str
    reasons: Mapping[str, str | None]


@dataclass(frozen=True)
class CoverageCell:
    """One cell of the coverage table."""

    scenario: str
    category: str
    status: str
    """``measured``, ``partial`` or ``n/a``."""
    reason: str = ""
    """Why it is not (fully) measured; empty when measured."""
    measured_runs: int = 0
    total_runs: int = 0


def run_coverage(
    run: RunSpec,
    info: ScenarioInfo,
    deployment: ModelDeployment,
    *,
    metric_category: Callable[[str], str | None],
    perturbation_category: Callable[[str], str | None],
    select_metrics: Callable[..., Any] | None,
) -> RunCoverage:
    """Which categories this run measures, and why the others are not."""
    kinds = {perturbation_category(p.name) for p in run.perturbations}
    info = info.perturbed_by(kinds)
    asked: list[str] = []
    for entry in run.metrics:
        category = entry if entry in METRIC_CATEGORIES else metric_category(entry)
        if category is not None and category not in asked:
            asked.append(category)

    not_applicable: dict[str, str] = {}
    if select_metrics is not None and asked:
        selection = select_metrics(asked, info, run.adapter, deployment)
        not_applicable.update(dict(selection.not_applicable))
    for category in asked:
        if category not in info.metric_categories and category not in not_applicable:
            not_applicable[category] = info.not_applicable_reasons.get(category, "does not apply to this scenario")

    reasons: dict[str, str | None] = {}
    for category in METRIC_CATEGORIES:
        if category not in asked:
            reasons[category] = NOT_REQUESTED
        elif category in not_applicable:
            reasons[category] = not_applicable[category]
        elif category in ("robustness", "fairness") and category not in kinds:
            reasons[category] = f"the run has no {category} perturbations"
        else:
            reasons[category] = None
    return RunCoverage(scenario=run.scenario.name, model=run.model, reasons=reasons)


def coverage_table(runs: Sequence[RunCoverage]) -> list[CoverageCell]:
    """Merge run verdicts into one cell per (scenario, category), scenarios in first-seen order."""
    by_scenario: dict[str, list[RunCoverage]] = {}
    for run in runs:
        by_scenario.setdefault(run.scenario, []).append(run)
    cells: list[CoverageCell] = []
    for scenario, group in by_scenario.items():
        for category in METRIC_CATEGORIES:
            measured = sum(1 for r in group if r.reasons[category] is None)
            reasons = _merged_reasons(group, category)
            if measured == len(group):
                cells.append(CoverageCell(scenario, category, MEASURED, "", measured, len(group)))
            elif measured:
                cells.append(CoverageCell(scenario, category, PARTIAL, reasons, measured, len(group)))
            else:
                cells.append(CoverageCell(scenario, category, NOT_APPLICABLE, reasons, 0, len(group)))
    return cells


def _merged_reasons(group: Sequence[RunCoverage], category: str) -> str:
    """Distinct reasons, each naming the models it applies to when not all runs share it."""
    models_by_reason: dict[str, list[str]] = {}
    for run in group:
        reason = run.reasons[category]
        if reason is not None:
            models = models_by_reason.setdefault(reason, [])
            if run.model not in models:
                models.append(run.model)
    all_models = list(dict.fromkeys(r.model for r in group))
    parts = []
    for reason, models in models_by_reason.items():
        if len(models_by_reason) == 1 and all(r.reasons[category] is not None for r in group):
            parts.append(reason)
        elif models == all_models:
            parts.append(f"{reason} (some runs)")
        elif all(model in reason for model in models):
            parts.append(reason)
        else:
            parts.append(f"{reason} (for {', '.join(models)})")
    return "; ".join(parts)
