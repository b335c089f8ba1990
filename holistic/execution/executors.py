"""Executors: where runs execute. ``local`` runs them one after another in this process;
``ray`` dispatches each run as a Ray task.

Both call the same :func:`execute_run_safely`, so results are identical. With Ray, each
task opens its own request cache connection and model clients and writes its own run
folder; the output (and cache) folder must be on a filesystem every worker sees. The
driver alone writes ``suite.json``.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path

from holistic.core.errors import HolisticError
from holistic.core.types import RunSpec
from holistic.execution.context import ExecutionContext
from holistic.execution.options import EXECUTORS, RunOptions
from holistic.execution.pipeline import execute_run
from holistic.execution.progress import NullProgress, Progress
from holistic.execution.reports import FAILED, RunReport
from holistic.results.store import SuiteStore


class ExecutorError(HolisticError):
    """The chosen executor cannot be used."""

    exit_code = 2


def failed_report(run: RunSpec, error: str) -> RunReport:
    return RunReport(
        run_id=run.run_id, name=run.name, scenario=run.scenario.name, model=run.model,
        method=run.adapter.method, status=FAILED, error=error,
    )


def execute_run_safely(
    run: RunSpec, *, store: SuiteStore, ctx: ExecutionContext, progress: Progress, position: tuple[int, int]
) -> RunReport:
    """Execute one run; a failure of this run is reported, not raised (the suite goes on).

    Interrupts (``KeyboardInterrupt``) propagate."""
    try:
        return execute_run(run, store=store, ctx=ctx, progress=progress, position=position)
    except HolisticError as exc:
        progress.end_run("failed", str(exc))
        return failed_report(run, str(exc))
    except Exception as exc:
        progress.end_run("failed", f"{type(exc).__name__}: {exc}")
        progress.message(traceback.format_exc().rstrip())
        return failed_report(run, f"{type(exc).__name__}: {exc}")


Runner = Callable[[Sequence[RunSpec], SuiteStore, RunOptions, Progress, int], Iterator[RunReport]]


def check_executor(name: str) -> None:
    """Fail before anything runs if the executor is unknown or unavailable."""
    if name not in EXECUTORS:
        raise ExecutorError(f"unknown executor {name!r}; choose one of {', '.join(EXECUTORS)}")
    if name == "ray":
        try:
            import ray  # noqa: F401
        except ImportError:
            raise ExecutorError(
                "--executor ray needs Ray, which is not installed; pip install 'holistic[ray]' "
                "(or ray>=2.9), or use --executor local"
            ) from None


def run_local(
    runs: Sequence[RunSpec], store: SuiteStore, options: RunOptions, progress: Progress, total: int
) -> Iterator[RunReport]:
    ctx = ExecutionContext.open(options)
    try:
        for i, run in enumerate(runs):
            position = (total - len(runs) + i + 1, total)
            yield execute_run_safely(run, store=store, ctx=ctx, progress=progress, position=position)
    finally:
        ctx.close()


def _ray_task(run: RunSpec, suite: str, options: RunOptions) -> RunReport:
    """Body of one Ray task: its own cache connection, clients and store handle."""
    ctx = ExecutionContext.open(options)
    try:
        store = SuiteStore(options.output_dir, suite)
        return execute_run_safely(run, store=store, ctx=ctx, progress=NullProgress(), position=(1, 1))
    finally:
        ctx.close()


def _absolute(options: RunOptions) -> RunOptions:
    """Options with every path made absolute (Ray workers may start in another folder)."""

    def fix(path: Path | None) -> Path | None:
        return None if path is None else path.expanduser().resolve()

    return replace(
        options,
        output_dir=options.output_dir.expanduser().resolve(),
        cache_dir=fix(options.cache_dir) if options.cache_dir is not None else options.cache_path().parent.resolve(),
        data_root=fix(options.data_root),
        data_cache_dir=fix(options.data_cache_dir),
        models_file=fix(options.models_file),
    )


def run_ray(
    runs: Sequence[RunSpec], store: SuiteStore, options: RunOptions, progress: Progress, total: int
) -> Iterator[RunReport]:
    import ray

    if not ray.is_initialized():
        ray.init(address=os.environ.get("RAY_ADDRESS"), ignore_reinit_error=True)
    remote = ray.remote(_ray_task)
    worker_options = _absolute(options)
    pending = {remote.remote(run, store.suite, worker_options): run for run in runs}
    done_count = total - len(runs)
    try:
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            run = pending.pop(ready[0])
            try:
                report: RunReport = ray.get(ready[0])
            except Exception as exc:  # the task itself died (worker crash, lost node)
                report = failed_report(run, f"Ray task failed: {type(exc).__name__}: {exc}")
            done_count += 1
            progress.message(
                f"[{done_count}/{total}] {report.run_id}: {report.status}" + (f" ({report.error})" if report.error else "")
            )
            yield report
    finally:
        for ref in pending:
            ray.cancel(ref)


EXECUTOR_FUNCTIONS: dict[str, Runner] = {"local": run_local, "ray": run_ray}
