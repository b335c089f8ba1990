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
from typing import Any

from holistic.adaptation import count_requests
from holistic.core.interfaces import METRIC_CATEGORIES
from holistic.core.naming import RunFacts, cut, display_names, format_value
from holistic.core.specs import ProtocolName
from holistic.core.types import ModelDeployment, RunSpec
from holistic.execution.costs import OutputLengths
from holistic.execution.forecast import CostForecast, cost_lines, forecast_run, total
from holistic.execution.prompt_sizes import PromptCount, plan_prompt_tokens
from holistic.execution.rates import Estimate, Rates, estimate, format_seconds
from holistic.metrics.registry import select_metrics
from holistic.models.registry import ModelRegistry, runs_in_process
from holistic.scenarios.base import PlanFacts
from holistic.spec.catalog import Catalog
from holistic.spec.compiler import CompiledSuite
from holistic.spec.conformance import Conformance, conformance
from holistic.spec.coverage import CoverageCell, RunCoverage, coverage_table, run_coverage
from holistic.spec.estimates import RunSize, estimate_run, plan_facts


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
    protocol: ProtocolName
    """``helm`` (reproduces HELM's protocol) or ``holistic`` (holistic's own options allowed)."""
    perturbations: int
    """Number of perturbations (each adds one variant per eval instance)."""
    size: RunSize
    estimate: Estimate | None = None
    """The run's time from the model's measured rate on this machine (``None``: not estimated)."""
    conformance: Conformance | None = None
    """Whether the run's HELM conformance is proven, only claimed, or not claimed (and why)."""
    judges: tuple[str, ...] = ()
    """Labels of the run's judges (each grades every generation once)."""
    title: str = ""
    """The run's name as people read it, as the site and helm-run's scores name it
    (:func:`holistic.core.naming.display_names`; empty: named by its run id)."""
    cost: CostForecast | None = None
    """What the run would cost in US dollars, online and in batch mode (:mod:`holistic.execution.forecast`)."""


@dataclass(frozen=True)
class MissingData:
    """A scenario whose files are neither in the data mirror nor in the cache."""

    scenario: str
    hosts: tuple[str, ...]
    """Where the first run would download them from (empty: they cannot be downloaded)."""
    hint: str
    """Where to get them by hand (the scenario's own words)."""
    run_ids: tuple[str, ...]


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
    missing_data: tuple[MissingData, ...] = ()
    """Scenarios whose data is not on this machine, with the runs that need it."""

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
    def total_seconds(self) -> float | None:
        """The estimated time of the runs that have an estimate (``None``: none has)."""
        known = [r.estimate.seconds for r in self.rows if r.estimate is not None and r.estimate.seconds is not None]
        return sum(known) if known else None

    @property
    def cost(self) -> CostForecast:
        """The suite's cost forecast: the sum of its runs'."""
        return total([r.cost for r in self.rows])

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
    rates: Rates | None = None,
    concurrency: int = 1,
    output_lengths: OutputLengths | None = None,
) -> Plan:
    """Size every run and build the coverage table (no data or model is loaded).

    ``model_registry`` defaults to the built-ins plus ``compiled.models_file``;
    ``max_eval_instances_override`` caps every run's eval instances (as ``helm-run
    --max-eval-instances`` does). A scenario's :class:`~holistic.scenarios.base.PlanFacts`
    may add notes, e.g. on which of its files ``data_root`` (else ``$HOLISTIC_DATA_ROOT``)
    lacks (BLiMP, BBQ; only file names are checked). ``rates`` (this
    machine's measured speeds, :mod:`holistic.execution.rates`) gives each run a time
    estimate; ``concurrency`` is ``-j`` for API models. ``output_lengths`` (completions recorded on this
    machine) gives the cost forecast its expected output lengths.
    """
    catalog = Catalog(compiled.models_file, model_registry)
    notes = list(compiled.warnings)

    rows: list[PlanRow] = []
    verdicts: list[RunCoverage] = []
    coverage_of: dict[tuple[Any, ...], RunCoverage] = {}
    built_requests = 0
    for run in compiled.runs:
        cls = catalog.scenario_class(run.scenario.name)
        info = catalog.scenario_info(run.scenario.name)
        deployment = catalog.model(run.model)
        cap = max_eval_instances_override if max_eval_instances_override is not None else run.adapter.max_eval_instances
        facts = plan_facts(cls, run.scenario.args_dict, data_root, cap)
        size = estimate_run(
            facts,
            info,
            run.adapter,
            deployment,
            len(run.perturbations),
            count_requests=count_requests,
            max_eval_instances_override=max_eval_instances_override,
        )
        built = None
        if built_requests < PLAN_BUILD_REQUESTS:  # past it, a typical prompt: a huge plan still prints promptly
            built = _prompt_tokens(run, facts, deployment, max_eval_instances_override, data_root)
            built_requests += size.requests or 0
        if built is not None:
            source = "sampled" if built.sampled else "exact" if built.exact else "prompts"
            size = replace(size, prompt_tokens=built.tokens, prompt_tokens_source=source)
        verdict = conformance(run)
        cost = forecast_run(
            run,
            deployment,
            requests=size.requests,
            prompt_tokens=size.prompt_tokens,
            reference_tokens=built.reference_tokens if built is not None else None,
            judge_deployment=catalog.model,
            recorded=output_lengths,
        )
        rows.append(_plan_row(run, deployment, size, verdict, rates, concurrency, cost))
        for deviation in verdict.deviations:
            warning = f"warning: protocol 'helm' with a named deviation: {deviation}"
            if warning not in notes:
                notes.append(warning)
        notes.extend(n for n in facts.notes if n not in notes)  # a scenario's own words on its runs and data
        # a run's coverage depends on these alone: runs that differ only in scenario args share it
        key = (run.scenario.name, run.model, run.adapter, run.metrics, tuple(p.name for p in run.perturbations))
        if key not in coverage_of:
            coverage_of[key] = run_coverage(
                run,
                info,
                deployment,
                metric_category=catalog.metric_category,
                perturbation_category=catalog.perturbation_category,
                select_metrics=select_metrics,
            )
        verdicts.append(coverage_of[key])
    titles = display_names([RunFacts.of_run(run) for run in compiled.runs])
    return Plan(
        suite=compiled.suite,
        description=compiled.description,
        spec_path=str(compiled.spec_path),
        spec_sha256=compiled.spec_sha256,
        rows=tuple(replace(row, title=titles[row.run_id]) for row in rows),
        coverage=tuple(coverage_table(verdicts)),
        notes=tuple(notes),
        missing_data=_missing_data(compiled.runs, data_root),
    )


def _plan_row(
    run: RunSpec,
    deployment: ModelDeployment,
    size: RunSize,
    verdict: Conformance,
    rates: Rates | None,
    concurrency: int,
    cost: CostForecast | None = None,
) -> PlanRow:
    """One run's row: its size, its time estimate (when ``rates`` are known) and its conformance."""
    return PlanRow(
        run_id=run.run_id,
        name=run.name,
        scenario=run.scenario.name,
        args=",".join(f"{k}={format_value(v)}" for k, v in run.scenario.args),
        model=run.model,
        method=run.adapter.method,
        protocol=run.adapter.protocol,
        perturbations=len(run.perturbations),
        size=size,
        estimate=estimate(
            rates,
            run.model,
            run.adapter,
            requests=size.requests,
            prompt_tokens=size.prompt_tokens,
            max_tokens=min(run.adapter.max_tokens, deployment.max_output_tokens),
            in_process=runs_in_process(deployment.provider),
            concurrency=concurrency,
        )
        if rates is not None
        else None,
        conformance=verdict,
        judges=tuple(j.label for j in run.judges),
        cost=cost,
    )


def _missing_data(runs: tuple[RunSpec, ...] | list[RunSpec], data_root: Path | None) -> tuple[MissingData, ...]:
    """Every scenario (with its runs) whose declared files are not on this machine.

    Only file names are checked, in the data mirror and the cache, as a run would look
    first; nothing is read or downloaded."""
    from holistic.core.interfaces import ScenarioContext
    from holistic.scenarios.loading.sources import data_origin, obtainable
    from holistic.scenarios.registry import create_scenario

    ctx = ScenarioContext(data_root=data_root, offline=True)
    found: dict[str, MissingData] = {}
    for run in runs:
        try:
            needs = create_scenario(run.scenario).data_needs()
        except (TypeError, ValueError, NotImplementedError):  # the run itself reports bad arguments;
            continue  # a scenario that reads the user's own copies declares no downloadable needs
        if needs is None or data_origin(needs, ctx) is not None:
            continue
        key = needs.scenario
        before = found.get(key)
        ids = (*before.run_ids, run.run_id) if before is not None else (run.run_id,)
        found[key] = MissingData(key, obtainable(needs), needs.hint or "", ids)
    return tuple(found.values())


def _prompt_tokens(
    run: RunSpec, facts: PlanFacts, deployment: ModelDeployment, cap: int | None, data_root: Path | None
) -> PromptCount | None:
    """Prompt tokens of a run counted on its prompts (see :mod:`holistic.execution.prompt_sizes`);
    ``None`` when they are neither cheap to make nor their data here."""
    if not facts.builds_prompts and not facts.samples_prompts:
        return None
    if cap is not None:
        run = replace(run, adapter=run.adapter.replace(max_eval_instances=cap))
    return plan_prompt_tokens(run, deployment, data_root=data_root, whole=facts.builds_prompts)


# ---------------------------------------------------------------------------
# Text rendering
# ---------------------------------------------------------------------------


def format_plan(plan: Plan, *, show_ids: bool = False) -> str:
    """The plan as text: header, one line per run, totals, coverage table with reasons.

    Runs are named as the site and helm-run's scores name them (cut to a terminal's width);
    ``show_ids`` adds each run's id (its folder's name) beside its name."""
    lines = [f"Suite {plan.suite}" + (f": {plan.description.strip()}" if plan.description.strip() else "")]
    lines.append(f"Spec {plan.spec_path} (sha256 {plan.spec_sha256[:12]})")
    lines.append("")
    lines.append(f"Runs ({plan.total_runs}):")
    timed = any(row.estimate is not None for row in plan.rows)
    ids = ("run id",) if show_ids else ()
    header = ("run", *ids, "method", "protocol", "instances", "requests", "~prompt tokens")
    table: list[tuple[str, ...]] = [(*header, "~time") if timed else header]
    for row in plan.rows:
        cells = (
            _name(row),
            *((row.run_id,) if show_ids else ()),
            row.method,
            row.protocol,
            _instances(row),
            _count(row.size.requests),
            _count(row.size.prompt_tokens),
        )
        table.append((*cells, format_seconds(row.estimate.seconds if row.estimate else None)) if timed else cells)
    first_number = len(ids) + 3
    lines.extend("  " + line for line in _columns(table, right=set(range(first_number, first_number + 4))))
    lines.append("")
    unknown = f" ({plan.runs_with_unknown_size} run(s) not fully sized)" if plan.runs_with_unknown_size else ""
    variants = " (with perturbed variants)" if any(row.perturbations for row in plan.rows) else ""
    lines.append(
        f"Totals: {plan.total_runs} runs, {plan.total_eval_instances:,} eval instances{variants}, "
        f"{plan.total_requests:,} requests, ~{plan.total_prompt_tokens:,} prompt tokens{unknown}"
    )
    lines.append(_prompt_token_note(plan))
    lines.extend(_time_lines(plan))
    lines.extend(cost_lines([(_name(row), row.cost) for row in plan.rows]))
    lines.extend(_missing_data_lines(plan))
    judged = [row for row in plan.rows if row.judges]
    if judged:
        labels = sorted({j for row in judged for j in row.judges})
        asks = sum((row.size.requests or 0) * len(row.judges) for row in judged)
        lines.append(
            f"Judged: {len(judged)} runs, by {', '.join(labels)}; {asks:,} judge requests (one per judge and "
            "generation, through the request cache), more when unparseable answers are asked again"
        )
    lines.append("")
    lines.extend(_conformance_lines(plan, show_ids))
    lines.append("")
    lines.extend(_coverage_lines(plan))
    if plan.notes:
        lines.append("")
        lines.append("Notes:")
        lines.extend(f"  - {note}" for note in plan.notes)
    return "\n".join(lines) + "\n"


def _time_lines(plan: Plan) -> list[str]:
    """The estimated time in total, and how each model's estimate was made."""
    if not any(row.estimate is not None for row in plan.rows):
        return []
    total = plan.total_seconds
    unknown = sum(1 for r in plan.rows if r.estimate is None or r.estimate.seconds is None)
    lines = [
        f"Estimated time: ~{format_seconds(total)}"
        + (f" ({unknown} run(s) without an estimate)" if unknown else "")
        + " on this machine"
    ]
    hows: dict[str, str] = {}
    for row in plan.rows:
        if row.estimate is not None:
            hows.setdefault(f"{row.model} ({row.method})", row.estimate.how)
    lines.extend(f"  {who}: {how}" for who, how in hows.items())
    if any(r.estimate is not None and r.estimate.seconds is None for r in plan.rows):
        lines.append("  (measure a model with: helm-run SPEC --plan --calibrate; every run also measures its model)")
    return lines


def _missing_data_lines(plan: Plan) -> list[str]:
    """Which runs have no data on this machine, and what their first run would do about it."""
    if not plan.missing_data:
        return []
    runs = sum(len(m.run_ids) for m in plan.missing_data)
    lines = [
        "",
        f"Data not on this machine: {runs} of {plan.total_runs} runs ({len(plan.missing_data)} scenario{'' if len(plan.missing_data) == 1 else 's'})",
    ]
    for missing in plan.missing_data:
        how = (
            f"downloaded from {', '.join(missing.hosts)} on the first run (fails offline)"
            if missing.hosts
            else "no download: put the files in the data mirror (--data-root)"
        )
        count = len(missing.run_ids)
        lines.append(f"  {missing.scenario} ({count} run{'' if count == 1 else 's'}): {how}")
        if not missing.hosts and missing.hint:
            lines.append(f"    get them from: {missing.hint}")
    return lines


def _name(row: PlanRow) -> str:
    return cut(row.title or row.run_id)


def _conformance_lines(plan: Plan, show_ids: bool) -> list[str]:
    """Per run: is its HELM conformance proven by a golden test, only claimed (and why), or not claimed."""
    lines = [
        "HELM conformance (proven = a golden test against HELM's own output covers the scenario and "
        "every perturbation):"
    ]
    notes: dict[str, int] = {}  # each reason once, numbered in order of first use
    for row in plan.rows:
        verdict = row.conformance
        if verdict is None:
            continue
        marks = ""
        if verdict.status == "claimed":
            marks = "".join(f" [{notes.setdefault(reason, len(notes) + 1)}]" for reason in verdict.reasons)
        lines.append(f"  {_name(row)}{f' ({row.run_id})' if show_ids else ''}: {verdict.status}{marks}")
    if notes:
        lines.append("  Why claimed:")
        lines.extend(f"  [{number}] {reason}" for reason, number in notes.items())
    return lines


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
