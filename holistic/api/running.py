"""Planning, fetching for and running a spec: :func:`plan`, :func:`fetch` and :func:`run` (``helm-run``).

Each call compiles the spec, applies the selection (``models``, ``scenarios``) and the
instance overrides (``max_eval_instances`` or ``limit``), then plans, fetches or executes
exactly as ``helm-run`` does with the same options: the same run ids, the same suite.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from holistic.core.template_limits import TemplateLimits
from holistic.execution.options import RunOptions
from holistic.scenarios.loading.data_limits import DataLimits
from holistic.spec.expand import DEFAULT_MAX_RUNS

if TYPE_CHECKING:
    from holistic.core.types import ModelDeployment, RunSpec
    from holistic.execution.plan import Plan
    from holistic.execution.progress import Progress
    from holistic.execution.rates import Rates
    from holistic.execution.reports import Headline, SuiteReport
    from holistic.models.registry import ModelRegistry
    from holistic.results.fs import Location
    from holistic.scenarios.fetching import FetchReport
    from holistic.spec.compiler import CompiledSuite

Messages = Callable[[str], None]
"""Where a call sends a line meant for the user (a warning of the spec, calibration progress)."""

_log = logging.getLogger("holistic")


@dataclass(frozen=True)
class SpecLimits:
    """What a spec may make holistic spend (``helm-run``'s ``limits`` options); past one, the call raises
    :class:`~holistic.core.errors.LimitError` naming it."""

    max_runs: int = DEFAULT_MAX_RUNS
    """Runs one spec may make, counted before expanding (``--max-runs``)."""

    template: TemplateLimits = field(default_factory=TemplateLimits)
    """Characters, loop steps and nesting of one render of a user template
    (``--max-template-chars``, ``--max-template-steps``, ``--max-template-depth``)."""

    data: DataLimits = field(default_factory=DataLimits)
    """What reading and shaping one data file may spend: decompression ratio, size, field size, pattern time
    (``--max-data-*``, ``--max-pattern-seconds``)."""


@dataclass(frozen=True)
class Selection:
    """Which runs of a spec, with which overrides (``helm-run``'s ``--suite``, ``--models``,
    ``--scenarios``, ``--max-eval-instances`` and ``--limit``)."""

    suite: str | None = None
    """The suite name, replacing the spec's ``suite:``."""
    models: tuple[str, ...] = ()
    """Glob patterns of the models to keep (none: all)."""
    scenarios: tuple[str, ...] = ()
    """Glob patterns of the scenarios to keep (none: all)."""
    max_eval_instances: int | None = None
    """A seeded sample of at most this many instances per run."""
    limit: int | None = None
    """The first this many instances of each run."""


@dataclass(frozen=True)
class Prepared:
    """A compiled spec and its selected runs, with the options they run under."""

    compiled: CompiledSuite
    """The compiled spec (its ``suite`` replaced by the ``suite`` argument, if given)."""
    runs: tuple[RunSpec, ...]
    """The selected runs, overrides applied, duplicates removed, in the spec's order."""
    options: RunOptions
    """The options, with ``max_eval_instances`` and ``limit`` applied."""


@dataclass(frozen=True, kw_only=True)
class PlanResult(Prepared):
    """What :func:`plan` returns: the plan as data, and the text ``helm-run --plan`` prints."""

    plan: Plan
    """One row per run (scenario, model, method, sizes, time estimate, HELM conformance), totals and the
    scenario x metric-category coverage."""
    not_runnable: str | None = None
    """Why running these runs would stop before the first one (a missing API key, no code sandbox);
    ``None`` when they could run now."""

    @property
    def text(self) -> str:
        """The plan as ``helm-run --plan`` prints it."""
        from holistic.execution.plan import format_plan

        return format_plan(self.plan)


@dataclass(frozen=True)
class RunOutcome:
    """One run of a :class:`RunResult`."""

    run_id: str
    """The stable run id (its results folder under ``runs/``)."""
    name: str
    """The run's full name (scenario, every argument, method, model)."""
    title: str
    """The run's display name, as the site shows it: the scenario with its distinguishing arguments and the
    system (the model, and the adaptation settings that differ between the runs), e.g.
    ``arithmetic (digits=1) · embedded/smollm2-135m-instruct [prompt_format=plain]``."""
    status: str
    """``complete`` (written now), ``skipped`` (complete from before), ``partial`` (some requests failed)
    or ``failed``."""
    headline: Headline | None
    """The main metric on the evaluation split with its 95% interval (``None``: failed or nothing to score)."""
    folder: Location | None
    """The run's results folder."""
    error: str | None = None
    """Why the run failed."""

    @property
    def score(self) -> float | None:
        """The headline metric's mean, or ``None``."""
        return None if self.headline is None else self.headline.mean


@dataclass(frozen=True)
class RunResult:
    """What :func:`run` returns: where the suite is, and how each run went."""

    suite: str
    """The suite's name."""
    suite_dir: Location
    """The suite's folder (a path, or a URI for a URI ``output_dir``): give it to :func:`~holistic.api.summarize`,
    :func:`~holistic.api.load` or :func:`~holistic.api.diff`."""
    runs: tuple[RunOutcome, ...]
    """The selected runs, in the spec's order."""
    report: SuiteReport
    """The full execution report (request counts, cache hits, warnings)."""

    @property
    def complete(self) -> bool:
        """Every selected run is complete (none failed, none has failed requests)."""
        return self.report.ok

    @property
    def exit_code(self) -> int:
        """``helm-run``'s exit code for this outcome: 0 complete, 1 a run failed, 3 some requests failed."""
        return self.report.exit_code

    def summary(self) -> str:
        """The closing lines ``helm-run`` prints: counts, failures, warnings, scores, where results are."""
        return self.report.summary()


@dataclass(frozen=True, kw_only=True)
class FetchResult(Prepared):
    """What :func:`fetch` returns: one report per scenario whose data was fetched."""

    reports: tuple[FetchReport, ...]
    """Per scenario: the files and where each came from (the mirror, the cache, the network)."""


def _warn(message: str) -> None:
    warnings.warn(message, UserWarning, stacklevel=4)


def prepare(
    spec: str | os.PathLike[str],
    selection: Selection,
    options: RunOptions,
    limits: SpecLimits,
    on_warning: Messages | None = None,
) -> Prepared:
    """Compile ``spec`` and select its runs as ``helm-run`` does, before it plans, fetches or runs.

    The spec's warnings go to ``on_warning`` (default: :func:`warnings.warn`)."""
    from holistic.core.plugins import load_plugins
    from holistic.core.template_limits import configure
    from holistic.execution.runner import prepare_runs
    from holistic.execution.selection import SelectionError, select_runs
    from holistic.results.layout import check_suite_name
    from holistic.scenarios.loading.data_limits import configure_data_limits
    from holistic.spec import compile_spec

    if selection.limit is not None and selection.max_eval_instances is not None:
        raise SelectionError("give --limit (the first N) or --max-eval-instances (a seeded sample of N), not both")
    if selection.limit is not None:
        options = dataclasses.replace(options, max_eval_instances=selection.limit, eval_instances="first")
    elif selection.max_eval_instances is not None:
        options = dataclasses.replace(options, max_eval_instances=selection.max_eval_instances)
    configure(limits.template)
    configure_data_limits(limits.data)
    load_plugins(options.plugins)
    compiled = compile_spec(Path(spec), models_file=options.models_file, max_runs=limits.max_runs)
    if selection.suite is not None:
        compiled = dataclasses.replace(compiled, suite=check_suite_name(selection.suite, where="--suite"))
    runs = select_runs(
        prepare_runs(compiled, options), models=list(selection.models), scenarios=list(selection.scenarios)
    )
    for warning in compiled.warnings:
        (on_warning or _warn)(warning)
    return Prepared(compiled=compiled, runs=tuple(runs), options=options)


def run_options(options: RunOptions | None, output_dir: str | os.PathLike[str] | None) -> RunOptions:
    """``options`` (default :class:`RunOptions`) with ``output_dir`` set when given (a folder or a URI)."""
    options = options or RunOptions()
    if output_dir is None:
        return options
    from holistic.results.fs import location

    return dataclasses.replace(options, output_dir=location(os.fspath(output_dir), where="output_dir"))


def plan(
    spec: str | os.PathLike[str],
    *,
    models: Sequence[str] = (),
    scenarios: Sequence[str] = (),
    max_eval_instances: int | None = None,
    limit: int | None = None,
    suite: str | None = None,
    calibrate: bool = False,
    options: RunOptions | None = None,
    limits: SpecLimits | None = None,
    on_warning: Messages | None = None,
    on_message: Messages | None = None,
) -> PlanResult:
    """What running ``spec`` would do, without running or writing anything (``helm-run SPEC --plan``).

    Args:
        spec: The run spec YAML file.
        models: Only runs whose model matches one of these glob patterns (e.g. ``"simple/*"``).
        scenarios: Only runs whose scenario matches one of these glob patterns.
        max_eval_instances: Evaluate a seeded sample of at most this many instances per run
            (changes the run ids).
        limit: Evaluate the first this many instances of each run, in the data's order
            (not with ``max_eval_instances``).
        suite: The suite name, replacing the spec's ``suite:``.
        calibrate: First time a short fixed workload on every local model this machine has no speed
            for, so that the plan can estimate times (the speeds are stored beside the request cache).
        options: The rest of ``helm-run``'s options (models file, data root, concurrency, cache...).
        limits: What the spec may make holistic spend.
        on_warning: Receives the spec's warnings (default: :func:`warnings.warn`).
        on_message: Receives calibration progress, a line at a time (default: the ``holistic`` logger).

    Returns:
        The plan as data (:attr:`PlanResult.plan`), its text (:attr:`PlanResult.text`), the runs and
        why they could not run yet, if so.

    Raises:
        holistic.core.errors.HolisticError: A bad spec, option or pattern (the message names it).
    """
    from holistic.core.errors import ModelError
    from holistic.core.extras import MissingExtraError
    from holistic.core.long_lived import long_lived
    from holistic.execution.runner import check_runnable
    from holistic.metrics.sandbox import SandboxUnavailable
    from holistic.models.registry import ModelRegistry

    selection = Selection(suite, tuple(models), tuple(scenarios), max_eval_instances, limit)
    with long_lived():  # the spec compiled, its scenarios' and metrics' modules imported
        prepared = prepare(spec, selection, run_options(options, None), limits or SpecLimits(), on_warning)
    runs, options = prepared.runs, prepared.options
    registry = ModelRegistry(options.models_file)
    made = _make_plan(prepared, registry, calibrate=calibrate, on_message=on_message)
    not_runnable = None
    try:
        check_runnable(runs, registry)
    except (
        ModelError,
        SandboxUnavailable,
        MissingExtraError,
    ) as exc:  # the plan is still worth seeing; running would stop here
        not_runnable = str(exc)
    return PlanResult(prepared.compiled, prepared.runs, prepared.options, plan=made, not_runnable=not_runnable)


def _make_plan(
    prepared: Prepared, registry: ModelRegistry, *, calibrate: bool = False, on_message: Messages | None = None
) -> Plan:
    """The plan of ``prepared``'s runs, with this machine's speeds and recorded completion lengths."""
    from holistic.execution.costs import OUTPUT_LENGTHS_FILE, OutputLengths
    from holistic.execution.plan import make_plan
    from holistic.execution.rates import RATES_FILE, Rates

    options = prepared.options
    rates = Rates(options.cache_path().parent / RATES_FILE)
    if calibrate:
        _calibrate(prepared.runs, registry, rates, on_message or _log.info)
    return make_plan(
        dataclasses.replace(prepared.compiled, runs=prepared.runs),
        model_registry=registry,
        data_root=options.data_root,
        rates=rates,
        concurrency=options.concurrency,
        output_lengths=OutputLengths(options.cache_path().parent / OUTPUT_LENGTHS_FILE),
    )


def check_budget(prepared: Prepared) -> None:
    """Refuse, before anything is sent, a suite whose forecast upper bound is above ``--max-cost``
    (:class:`~holistic.core.errors.LimitError`, exit 2, with the figures); also one with a model
    that has no price or a run whose size is unknown, since no budget can hold for them."""
    from holistic.core.errors import LimitError
    from holistic.models.pricing import format_usd
    from holistic.models.registry import ModelRegistry

    limit = prepared.options.max_cost_usd
    if limit is None:
        return
    registry = ModelRegistry(prepared.options.models_file)
    plan = _make_plan(prepared, registry)
    cost = plan.cost
    if cost.unpriced:
        raise LimitError(
            f"--max-cost {format_usd(limit)}: {', '.join(cost.unpriced)} ha{'s' if len(cost.unpriced) == 1 else 've'} "
            "no price in the models file, so no budget can hold; give it a price: {input_per_million, "
            "output_per_million} (helm-run SPEC --plan shows the forecast)"
        )
    unsized = [row.run_id for row in plan.rows if row.cost is not None and row.cost.unsized]
    if unsized:
        raise LimitError(
            f"--max-cost {format_usd(limit)}: the size of {len(unsized)} run(s) is unknown ({', '.join(unsized[:3])}), "
            "so their cost cannot be bounded; cap them with --max-eval-instances or --limit"
        )
    upper = _budget_upper(prepared, plan, registry)
    if upper > limit:
        raise LimitError(
            f"--max-cost {format_usd(limit)}: refused before sending anything: the suite's forecast is up to "
            f"{format_usd(upper)} as its deployments will send it (online: expected {format_usd(cost.online_expected)}, "
            f"up to {format_usd(cost.online_upper)}; in batch mode {format_usd(cost.batch_expected)} expected, up to "
            f"{format_usd(cost.batch_upper)}). Raise --max-cost, "
            "or run fewer instances (--max-eval-instances, --limit); helm-run SPEC --plan shows it per run"
        )


def _budget_upper(prepared: Prepared, plan: Plan, registry: ModelRegistry) -> float:
    """The suite's forecast upper bound with each deployment at the price it will be sent at (batch or online)."""
    from holistic.execution.forecast import budget_upper
    from holistic.models.batch_spec import wants_batch

    def by_batch(d: ModelDeployment) -> bool:
        return wants_batch(d.provider, d.args, prepared.options.batch)

    runs = {r.run_id: r for r in prepared.runs}
    upper = 0.0
    for row in plan.rows:
        run = runs.get(row.run_id)
        if row.cost is None or run is None:
            continue
        judges = [registry.get(j.model) for j in run.judges]
        upper += budget_upper(row.cost, registry.get(run.model), judges, by_batch)
    return upper


def _calibrate(runs: Sequence[RunSpec], registry: ModelRegistry, rates: Rates, say: Messages) -> None:
    """Time the fixed workload on each local model without a measured speed. API models are measured
    by their own runs only (a calibration would cost money)."""
    from holistic.execution.rates import calibrate, work_kind
    from holistic.models.registry import create_client, runs_in_process

    wanted: dict[str, set[str]] = {}
    for run in runs:
        kind = work_kind(run.adapter)
        if rates.get(run.model, kind) is None:
            wanted.setdefault(run.model, set()).add(kind)
    for name, kinds in sorted(wanted.items()):
        deployment = registry.get(name)
        if not runs_in_process(deployment.provider):
            say(f"{name} is an API model: measured by its first run, not calibrated")
            continue
        say(f"calibrating {name} ({', '.join(sorted(kinds))})...")
        client = create_client(deployment)
        try:
            speeds = calibrate(client, rates, sorted(kinds))
        finally:
            client.close()
        for kind, speed in speeds.items():
            say(f"{name} {kind}: {speed:,.0f} tokens/s")


def fetch(
    spec: str | os.PathLike[str],
    *,
    models: Sequence[str] = (),
    scenarios: Sequence[str] = (),
    max_eval_instances: int | None = None,
    limit: int | None = None,
    options: RunOptions | None = None,
    limits: SpecLimits | None = None,
    on_warning: Messages | None = None,
) -> FetchResult:
    """Fetch the data files the spec's runs read into the data root, and stop (``helm-run SPEC --fetch-only``).

    Args:
        spec: The run spec YAML file.
        models: Only runs whose model matches one of these glob patterns.
        scenarios: Only runs whose scenario matches one of these glob patterns.
        max_eval_instances: As for :func:`run`.
        limit: As for :func:`run`.
        options: ``helm-run``'s options; ``options.data_root`` is where the files go.
        limits: What the spec may make holistic spend.
        on_warning: Receives the spec's warnings (default: :func:`warnings.warn`).

    Returns:
        One report per scenario that reads data files (none when no run reads any).
    """
    from holistic.core.interfaces import ScenarioContext
    from holistic.scenarios import fetching

    selection = Selection(None, tuple(models), tuple(scenarios), max_eval_instances, limit)
    prepared = prepare(spec, selection, run_options(options, None), limits or SpecLimits(), on_warning)
    reports = fetching.fetch_for_runs(list(prepared.runs), ScenarioContext(data_root=prepared.options.data_root))
    return FetchResult(prepared.compiled, prepared.runs, prepared.options, reports=tuple(reports))


def run(
    spec: str | os.PathLike[str],
    *,
    output_dir: str | os.PathLike[str] | None = None,
    models: Sequence[str] = (),
    scenarios: Sequence[str] = (),
    max_eval_instances: int | None = None,
    limit: int | None = None,
    suite: str | None = None,
    options: RunOptions | None = None,
    limits: SpecLimits | None = None,
    progress: Progress | bool = False,
    on_warning: Messages | None = None,
) -> RunResult:
    """Run ``spec`` into a suite of Parquet results, as ``helm-run SPEC`` does.

    Runs already complete in the suite are skipped; everything else resumes through the request
    cache. A run that fails is recorded as failed and the others go on: check
    :attr:`RunResult.complete`.

    Args:
        spec: The run spec YAML file.
        output_dir: Where suites are written: a folder or an fsspec URI (default: ``options.output_dir``,
            ``./output``); the suite is ``<output_dir>/<suite>``.
        models: Only runs whose model matches one of these glob patterns (e.g. ``"simple/*"``).
        scenarios: Only runs whose scenario matches one of these glob patterns.
        max_eval_instances: Evaluate a seeded sample of at most this many instances per run
            (changes the run ids, so a trial never passes for the full run).
        limit: Evaluate the first this many instances of each run, in the data's order
            (not with ``max_eval_instances``).
        suite: The suite name, replacing the spec's ``suite:``.
        options: The rest of ``helm-run``'s options (cache, concurrency, batch size, data root,
            models file, executor, plugins...).
        limits: What the spec may make holistic spend.
        progress: ``True`` shows progress on stderr; or a
            :class:`~holistic.execution.progress.Progress` of your own.
        on_warning: Receives the spec's warnings (default: :func:`warnings.warn`).

    Returns:
        The suite's name and folder, and per run its id, display name, status and headline score.

    Raises:
        holistic.core.errors.HolisticError: A bad spec or option, a missing API key or an unusable output
            folder, before anything is written.
    """
    from holistic.core.long_lived import long_lived
    from holistic.execution.progress import NullProgress, make_progress
    from holistic.execution.runner import run_suite

    selection = Selection(suite, tuple(models), tuple(scenarios), max_eval_instances, limit)
    with long_lived():  # the spec compiled, its scenarios' and metrics' modules imported: kept to the end
        prepared = prepare(spec, selection, run_options(options, output_dir), limits or SpecLimits(), on_warning)
    check_budget(prepared)
    if isinstance(progress, bool):
        progress = make_progress() if progress else NullProgress()
    report = run_suite(prepared.compiled, prepared.options, runs=prepared.runs, progress=progress)
    return RunResult(
        suite=report.suite, suite_dir=report.suite_dir, runs=_outcomes(prepared.runs, report), report=report
    )


def _outcomes(runs: Sequence[RunSpec], report: SuiteReport) -> tuple[RunOutcome, ...]:
    """The reports of ``runs`` with their display names, as the site, ``--plan`` and the closing
    scores name them (:func:`holistic.core.naming.display_names`)."""
    from holistic.core.naming import RunFacts, display_names

    names = display_names([RunFacts.of_run(r) for r in runs])
    return tuple(
        RunOutcome(
            run_id=r.run_id,
            name=r.name,
            title=names.get(r.run_id, r.name),
            status=r.status,
            headline=r.headline,
            folder=r.folder,
            error=r.error,
        )
        for r in report.runs
    )
