"""``--plan``: what a suite would run, how big it is, and what it would measure.

:func:`make_plan` turns a :class:`~holistic.spec.compiler.CompiledSuite` into a
:class:`Plan` (one row per run, totals, the scenario x metric-category coverage
table); :func:`format_plan` prints it. Nothing here loads data or a model, and
nothing imports torch or transformers: sizes are cheap estimates (see
:mod:`holistic.spec.estimates`) and coverage comes from the registries' static
facts (see :mod:`holistic.spec.coverage`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from holistic.adaptation import count_requests
from holistic.core.interfaces import METRIC_CATEGORIES
from holistic.core.types import ModelDeployment, RunSpec
from holistic.execution.prompt_sizes import PromptCount, plan_prompt_tokens
from holistic.metrics.registry import select_metrics
from holistic.models.registry import ModelRegistry
from holistic.spec.catalog import Catalog
from holistic.spec.compiler import CompiledSuite
from holistic.spec.coverage import CoverageCell, RunCoverage, coverage_table, run_coverage
from holistic.spec.estimates import RunSize, estimate_run
from holistic.spec.naming import format_value


@dataclass(frozen=True)
class PlanRow:
    """One run of the plan."""

    run_id: str
    name: str
    scenario: str
    args: str
    """Scenario arguments as ``k=v,...``."""
    model: str
    method: str
    protocol: str
    """``helm`` (reproduces HELM's protocol) or ``holistic`` (holistic's own options allowed)."""
    perturbations: int
    """Number of perturbations (each adds one variant per eval instance)."""
    size: RunSize


@dataclass(frozen=True)
class Plan:
    """A suite's run matrix with sizes and coverage; built by :func:`make_plan`."""

    suite: str
    description: str
    spec_path: str
    spec_sha256: str
    rows: tuple[PlanRow, ...]
    coverage: tuple[CoverageCell, ...]
    categories: tuple[str, ...] = METRIC_CATEGORIES
    notes: tuple[str, ...] = ()
    """Warnings from compilation and caveats of the estimates."""

    @property
    def total_runs(self) -> int:
        return len(self.rows)

    @property
    def total_eval_instances(self) -> int:
        """Known eval instances (including perturbed variants) over all runs."""
        return sum(r.size.variants or 0 for r in self.rows)

    @property
    def total_requests(self) -> int:
        return sum(r.size.requests or 0 for r in self.rows)

    @property
    def total_prompt_tokens(self) -> int:
        return sum(r.size.prompt_tokens or 0 for r in self.rows)

    @property
    def runs_with_unknown_size(self) -> int:
        return sum(1 for r in self.rows if r.size.requests is None or r.size.eval_instances_is_bound)


PLAN_BUILD_REQUESTS = 5_000
"""Requests whose prompts a plan builds to count their tokens; later runs are estimated from a
typical prompt, so that ``--plan`` on tens of thousands of runs prints in seconds."""


def make_plan(
    compiled: CompiledSuite,
    *,
    model_registry: ModelRegistry | None = None,
    max_eval_instances_override: int | None = None,
    data_root: Path | None = None,
) -> Plan:
    """Size every run and build the coverage table (no data or model is loaded).

    ``model_registry`` defaults to the built-ins plus ``compiled.models_file``;
    ``max_eval_instances_override`` caps every run's eval instances (as ``helm-run
    --max-eval-instances`` does). Scenarios with a ``data_notes(args, data_root)``
    class method (BLiMP, BBQ) add notes on which of their files ``data_root`` (else
    ``$HOLISTIC_DATA_ROOT``) lacks; only file names are checked.
    """
    catalog = Catalog(compiled.models_file, model_registry)
    notes = list(compiled.warnings)

    rows: list[PlanRow] = []
    verdicts: list[RunCoverage] = []
    built_requests = 0
    for run in compiled.runs:
        cls = catalog.scenario_class(run.scenario.name)
        info = catalog.scenario_info(run.scenario.name)
        deployment = catalog.model(run.model)
        size = estimate_run(
            cls,
            info,
            run.scenario.args_dict,
            run.adapter,
            deployment,
            len(run.perturbations),
            count_requests=count_requests,
            max_eval_instances_override=max_eval_instances_override,
        )
        built = None
        if built_requests < PLAN_BUILD_REQUESTS:  # past it, a typical prompt: a huge plan still prints promptly
            built = _prompt_tokens(run, deployment, max_eval_instances_override, data_root)
            built_requests += size.requests or 0
        if built is not None:
            source = "sampled" if built.sampled else "exact" if built.exact else "prompts"
            size = replace(size, prompt_tokens=built.tokens, prompt_tokens_source=source)
        cap = max_eval_instances_override if max_eval_instances_override is not None else run.adapter.max_eval_instances
        note = cls.plan_note(run.scenario.args_dict, cap)  # a scenario's own words on its cells
        if note and note not in notes:
            notes.append(note)
        rows.append(
            PlanRow(
                run_id=run.run_id,
                name=run.name,
                scenario=run.scenario.name,
                args=",".join(f"{k}={format_value(v)}" for k, v in run.scenario.args),
                model=run.model,
                method=run.adapter.method,
                protocol=run.adapter.protocol,
                perturbations=len(run.perturbations),
                size=size,
            )
        )
        notes.extend(n for n in cls.data_notes(run.scenario.args_dict, data_root) if n not in notes)
        verdicts.append(
            run_coverage(
                run,
                info,
                deployment,
                metric_category=catalog.metric_category,
                perturbation_category=catalog.perturbation_category,
                select_metrics=select_metrics,
            )
        )
    return Plan(
        suite=compiled.suite,
        description=compiled.description,
        spec_path=str(compiled.spec_path),
        spec_sha256=compiled.spec_sha256,
        rows=tuple(rows),
        coverage=tuple(coverage_table(verdicts)),
        notes=tuple(notes),
    )


def _prompt_tokens(
    run: RunSpec, deployment: ModelDeployment, cap: int | None, data_root: Path | None
) -> PromptCount | None:
    """Prompt tokens of a run counted on its prompts (see :mod:`holistic.execution.prompt_sizes`);
    ``None`` when they are neither cheap to make nor their data here."""
    if cap is not None:
        run = replace(run, adapter=run.adapter.replace(max_eval_instances=cap))
    return plan_prompt_tokens(run, deployment, data_root=data_root)


# ---------------------------------------------------------------------------
# Text rendering
# ---------------------------------------------------------------------------


def format_plan(plan: Plan) -> str:
    """The plan as text: header, one line per run, totals, coverage table with reasons."""
    lines = [f"Suite {plan.suite}" + (f": {plan.description.strip()}" if plan.description.strip() else "")]
    lines.append(f"Spec {plan.spec_path} (sha256 {plan.spec_sha256[:12]})")
    lines.append("")
    lines.append(f"Runs ({plan.total_runs}):")
    header = ("run id", "scenario + args", "model", "method", "protocol", "instances", "requests", "~prompt tokens")
    table: list[tuple[str, ...]] = [header]
    for row in plan.rows:
        table.append(
            (
                row.run_id,
                f"{row.scenario}:{row.args}" if row.args else row.scenario,
                row.model,
                row.method,
                row.protocol,
                _instances(row),
                _count(row.size.requests),
                _count(row.size.prompt_tokens),
            )
        )
    lines.extend("  " + line for line in _columns(table, right={5, 6, 7}))
    lines.append("")
    unknown = f" ({plan.runs_with_unknown_size} run(s) not fully sized)" if plan.runs_with_unknown_size else ""
    variants = " (with perturbed variants)" if any(row.perturbations for row in plan.rows) else ""
    lines.append(
        f"Totals: {plan.total_runs} runs, {plan.total_eval_instances:,} eval instances{variants}, "
        f"{plan.total_requests:,} requests, ~{plan.total_prompt_tokens:,} prompt tokens{unknown}"
    )
    lines.append(_prompt_token_note(plan))
    lines.append("")
    lines.extend(_coverage_lines(plan))
    if plan.notes:
        lines.append("")
        lines.append("Notes:")
        lines.extend(f"  - {note}" for note in plan.notes)
    return "\n".join(lines) + "\n"


def _prompt_token_note(plan: Plan) -> str:
    """How the prompt-token column was counted, run by run."""
    sources = [row.size.prompt_tokens_source for row in plan.rows if row.size.prompt_tokens is not None]
    parts = []
    exact = sources.count("exact")
    if exact:
        parts.append(f"{exact} run(s) counted exactly: their prompts built and tokenised as the model will")
    built = sources.count("prompts")
    if built:
        parts.append(f"{built} run(s) from their prompts, tokens approximated (no local tokenizer)")
    sampled = sources.count("sampled")
    if sampled:
        parts.append(f"{sampled} run(s) from the prompts of a sample of their real instances, scaled")
    typical = sources.count("typical")
    if typical:
        parts.append(
            f"{typical} run(s) estimated from a typical prompt (data not read or not here, or past the "
            f"{PLAN_BUILD_REQUESTS:,} requests whose prompts a plan builds)"
        )
    return "  (prompt tokens: " + "; ".join(parts) + ")" if parts else "  (prompt tokens: unknown)"


def _instances(row: PlanRow) -> str:
    size = row.size
    if size.eval_instances is None:
        return "?"
    text = f"<={size.eval_instances:,}" if size.eval_instances_is_bound else f"{size.eval_instances:,}"
    if row.perturbations:
        text += f" (x{row.perturbations + 1})"
    return text


def _count(value: int | None) -> str:
    return "?" if value is None else f"{value:,}"


def _coverage_lines(plan: Plan) -> list[str]:
    lines = ["Coverage (scenario x metric category):"]
    scenarios = list(dict.fromkeys(cell.scenario for cell in plan.coverage))
    cells = {(c.scenario, c.category): c for c in plan.coverage}
    footnotes: dict[str, int] = {}
    table: list[tuple[str, ...]] = [("scenario", *plan.categories)]
    for scenario in scenarios:
        out = [scenario]
        for category in plan.categories:
            cell = cells[(scenario, category)]
            if not cell.reason:
                out.append(cell.status)
                continue
            mark = footnotes.setdefault(cell.reason, len(footnotes) + 1)
            status = f"partial {cell.measured_runs}/{cell.total_runs}" if cell.status == "partial" else cell.status
            out.append(f"{status} [{mark}]")
        table.append(tuple(out))
    lines.extend("  " + line for line in _columns(table))
    if footnotes:
        lines.append("  Why not measured:")
        lines.extend(f"  [{n}] {reason}" for reason, n in footnotes.items())
    return lines


def _columns(rows: list[tuple[str, ...]], right: set[int] | None = None) -> list[str]:
    right = right or set()
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for row in rows:
        cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))]
        out.append("  ".join(cells).rstrip())
    return out
