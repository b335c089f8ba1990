"""One run executed so that its failure is a report, not an exception: what every executor
(:mod:`holistic.execution.executors`, :mod:`holistic.execution.ray_executor`) calls."""

from __future__ import annotations

import traceback

from holistic.core.errors import HolisticError, LimitError
from holistic.core.types import RunSpec
from holistic.execution.context import ExecutionContext
from holistic.execution.pipeline import execute_run
from holistic.execution.progress import Progress
from holistic.execution.reports import FAILED, RunReport
from holistic.results.store import SuiteStore


def failed_report(run: RunSpec, error: str) -> RunReport:
    return RunReport.of(run, FAILED, error=error)


def execute_run_safely(
    run: RunSpec, *, store: SuiteStore, ctx: ExecutionContext, progress: Progress, position: tuple[int, int]
) -> RunReport:
    """Execute one run; a failure of this run is reported, not raised (the suite goes on).

    Interrupts (``KeyboardInterrupt``) and resource limits (:class:`LimitError`: the same
    limit would stop every other run too) propagate."""
    try:
        return execute_run(run, store=store, ctx=ctx, progress=progress, position=position)
    except LimitError:
        raise
    except HolisticError as exc:
        progress.end_run("failed", str(exc))
        return failed_report(run, str(exc))
    except Exception as exc:
        progress.end_run("failed", f"{type(exc).__name__}: {exc}")
        progress.message(traceback.format_exc().rstrip())
        return failed_report(run, f"{type(exc).__name__}: {exc}")
