"""``run_suite``: execute a compiled suite into the results store.

Order of events (each step can fail with a clear error before the next):

1. Validate the options (executor available) and the store: an existing suite written
   with another ``schema_version`` or an unwritable output folder stops here, before
   any model is loaded or called.
2. Open the request cache (kept open to the end).
2b. Take the suite lock (one writer per suite; wait for the holder or, with
   ``--no-wait``, stop with exit 2).
3. Skip runs whose manifest verifies as complete (a damaged or partial run is
   redone, from the cache); record every run in ``suite.json``.
4. Execute the rest with the chosen executor; each finished run updates ``suite.json``.
   A failing run is recorded as failed and the suite goes on.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

from holistic.core.errors import StoreError
from holistic.core.naming import RunFacts, cut, display_names
from holistic.core.types import RunSpec
from holistic.execution.executors import EXECUTOR_FUNCTIONS, ExecutorError, check_executor
from holistic.execution.options import RunOptions
from holistic.execution.progress import NamedProgress, NullProgress, Progress
from holistic.execution.reports import SKIPPED, Budget, Headline, RunReport, SuiteReport
from holistic.execution.selection import override_max_eval_instances, unique_runs
from holistic.models.cache import RequestCache
from holistic.models.endpoints import check_endpoints
from holistic.models.keys import check_keys
from holistic.models.pricing import spending_limit
from holistic.models.registry import ModelRegistry, runs_in_process
from holistic.results.fs import UriPath
from holistic.results.lock import suite_lock
from holistic.results.schemas import STATS_TABLE
from holistic.results.store import SuiteStore
from holistic.spec.compiler import CompiledSuite


def prepare_runs(compiled: CompiledSuite, options: RunOptions) -> list[RunSpec]:
    """The runs to execute: the suite's, with option overrides applied, duplicates removed."""
    return unique_runs(override_max_eval_instances(compiled.runs, options.max_eval_instances, options.eval_instances))


def check_code_sandbox(runs: Sequence[RunSpec]) -> None:
    """Raise :class:`~holistic.metrics.sandbox.SandboxUnavailable` (exit 2) when a run would
    execute the model's code and this host cannot make the sandbox; names the runs and what is missing."""
    from holistic.core.code_execution import EXECUTES_CODE_TAG
    from holistic.scenarios.registry import scenario_info

    infos = [(r, scenario_info(r.scenario.name)) for r in runs]
    if not any(EXECUTES_CODE_TAG in info.tags for _, info in infos):
        return  # no run executes code: the sandbox's modules are not even imported
    from holistic.metrics.code import requires_sandbox
    from holistic.metrics.sandbox import SandboxUnavailable, sandbox_problem

    code_runs = [r for r, info in infos if requires_sandbox(info, r.metrics)]
    problem = sandbox_problem() if code_runs else None
    if problem is not None:
        names = ", ".join(r.name for r in code_runs[:3]) + (
            f" and {len(code_runs) - 3} more" if len(code_runs) > 3 else ""
        )
        raise SandboxUnavailable(
            f"{names}: scored by running the model's code in the OS sandbox, which this host cannot provide: "
            f"{problem}. Model-written code is never run outside it; install the missing piece, or leave these "
            "runs out (--scenarios)"
        )


def check_metric_extras(runs: Sequence[RunSpec], registry: ModelRegistry) -> None:
    """Raise :class:`~holistic.core.extras.MissingExtraError` (exit 2) when a metric a run would
    measure needs an extra that is not installed (bertscore: ``metrics``); names the extra,
    the run and the pip command. Nothing is chosen twice: runs that differ only in their
    scenario's arguments measure the same metrics."""
    from holistic.core.extras import EXTRAS, missing_modules, require_extra
    from holistic.execution.pipeline import with_headline
    from holistic.metrics.registry import select_metrics
    from holistic.perturbations.registry import PERTURBATIONS
    from holistic.scenarios.registry import scenario_info

    if not any(missing_modules(name) for name in EXTRAS):
        return  # everything is installed: nothing to choose
    seen: set[object] = set()
    for run in runs:
        key = (run.scenario.name, run.model, run.adapter, run.metrics, tuple(p.name for p in run.perturbations))
        if key in seen:
            continue
        seen.add(key)
        kinds = {PERTURBATIONS.get(p.name).category for p in run.perturbations}
        info = with_headline(scenario_info(run.scenario.name), run.adapter).perturbed_by(kinds)
        for metric in select_metrics(run.metrics, info, run.adapter, registry.get(run.model)).metrics:
            require_extra(type(metric).needs_extra, f"the metric {metric.name} ({run.name})")


def check_runnable(runs: Sequence[RunSpec], registry: ModelRegistry) -> None:
    """What stops ``runs`` before anything is written or any model is called (``--plan`` reports
    it as "Not runnable yet"): every API key they need; the OS sandbox for runs scored by executing
    the model's code (refused now, never run unsandboxed); the extra of a model-based metric
    (named now, not after the models have answered)."""
    check_keys(registry.get(name) for name in sorted({r.model for r in runs}))
    check_code_sandbox(runs)
    check_metric_extras(runs, registry)


def run_suite(
    compiled: CompiledSuite,
    options: RunOptions,
    *,
    runs: Sequence[RunSpec] | None = None,
    progress: Progress | None = None,
) -> SuiteReport:
    """Execute ``runs`` (default: every run of ``compiled``, after :func:`prepare_runs`)."""
    progress = progress or NullProgress()
    check_executor(options.executor, options.ray_address)
    if options.max_cost_usd is not None and options.executor != "local":
        raise ExecutorError(
            f"--max-cost is tracked in this process: it needs --executor local, not {options.executor!r}"
        )
    selected = unique_runs(runs) if runs is not None else prepare_runs(compiled, options)
    # Every API key the runs need, before anything is written or any model is called.
    registry = ModelRegistry(options.models_file)
    check_runnable(selected, registry)

    store = SuiteStore(options.output_dir, compiled.suite)
    if options.executor == "ray" and isinstance(store.output_dir, UriPath) and store.output_dir.protocol == "memory":
        raise StoreError(
            f"--output-dir {store.output_dir}: memory:// lives inside one process, so Ray workers cannot share it; "
            f"give a path or a shared URI (s3://, gs://, file:// on a shared disk)"
        )
    # A server that is not there fails the suite now, naming its URL, not after every retry.
    served = {
        name
        for name in {r.model for r in selected}
        if registry.get(name).args.get("base_url") and not runs_in_process(registry.get(name).provider)
    }
    if served:  # (only runs still to do need their server)
        check_endpoints(
            registry.get(n)
            for n in sorted({r.model for r in selected if r.model in served and not store.is_complete(r.run_id)})
        )
    store.check_compatible()
    store.check_writable()
    names = {k: cut(v) for k, v in display_names([RunFacts.of_run(r) for r in selected]).items()}
    with suite_lock(store.suite_dir, wait=options.wait_for_lock):
        return _run_locked(compiled, options, selected, store, NamedProgress(progress, names))


def _run_locked(
    compiled: CompiledSuite, options: RunOptions, selected: Sequence[RunSpec], store: SuiteStore, progress: Progress
) -> SuiteReport:
    store.open(spec_path=str(compiled.spec_path), spec_sha256=compiled.spec_sha256, description=compiled.description)
    # Opened now to fail on a bad cache path before the first run, and kept open to the end: a new
    # cache's write-ahead log is then made and checkpointed (synced to disk) once, not a second time
    # when the execution opens the cache again.
    with RequestCache(options.cache_path()) if options.use_cache else contextlib.nullcontext():
        return _run_open(compiled, options, selected, store, progress)


def _run_open(
    compiled: CompiledSuite, options: RunOptions, selected: Sequence[RunSpec], store: SuiteStore, progress: Progress
) -> SuiteReport:
    reports: list[RunReport] = []
    todo: list[RunSpec] = []
    for run in selected:
        why = store.check_complete(run.run_id)
        if why is not None and why.startswith("damaged"):
            progress.message(f"run {run.run_id}: {why}; redoing it (answers come from the request cache)")
        if why is None:
            headline, cost = _stored_facts(store, run.run_id)
            reports.append(
                RunReport.of(run, SKIPPED, folder=store.run_dir(run.run_id), headline=headline, cost_usd=cost)
            )
        else:
            todo.append(run)
    pending = [
        {
            "run_id": r.run_id,
            "name": r.name,
            "scenario": r.scenario.name,
            "model": r.model,
            "method": r.adapter.method,
            "status": "pending",
            "error": None,
        }
        for r in todo
    ]
    store.record_runs([r.suite_entry() for r in reports] + pending)
    if reports:
        progress.message(f"{len(reports)} of {len(selected)} runs already complete in {store.suite_dir}; skipping them")

    execute = EXECUTOR_FUNCTIONS[options.executor]
    with spending_limit(options.max_cost_usd) as spending:
        try:
            for report in execute(todo, store, options, progress, len(selected)):
                reports.append(report)
                store.record_runs([report.suite_entry()])
        finally:
            progress.close()
    budget = None
    if options.max_cost_usd is not None and spending is not None:
        budget = Budget(spending.limit_usd, spending.spent_usd, spending.refused)
    order = {r.run_id: i for i, r in enumerate(selected)}
    reports.sort(key=lambda r: order[r.run_id])
    suite_json = store.read_suite_json() or {}
    store.write_suite_json({**suite_json, "cost_usd": sum(r.cost_usd for r in reports)})
    return SuiteReport(
        suite=compiled.suite,
        suite_dir=store.suite_dir,
        cache_path=options.cache_path() if options.use_cache else None,
        runs=tuple(reports),
        budget=budget,
    )


def _stored_facts(store: SuiteStore, run_id: str) -> tuple[Headline | None, float]:
    """The headline of a run completed earlier, read back from its ``stats.parquet``, and its cost
    (``artifacts.json``)."""
    from holistic.core.errors import HolisticError
    from holistic.results.reader import RunReader

    try:
        run = RunReader.at(store.run_dir(run_id))
    except (HolisticError, OSError, ValueError, KeyError):  # an old or unreadable run: no facts, never a failure
        return None, 0.0
    headline = None
    try:
        columns = ["metric", "split", "sub_split", "perturbation", "mean", "ci_low", "ci_high", "count"]
        headline = Headline.pick(run.table(STATS_TABLE, columns).to_pylist(), run.spec.get("main_metric"))
    except (HolisticError, OSError, ValueError, KeyError):
        pass
    try:
        cost = run.artifacts.get("execution", {}).get("cost_usd", 0.0)
    except (HolisticError, OSError, ValueError, AttributeError):
        cost = 0.0
    return headline, float(cost) if isinstance(cost, (int, float)) and cost >= 0 else 0.0
