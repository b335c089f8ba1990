"""Executors: where runs execute. ``local`` runs them one after another in this process;
``ray`` dispatches each run as a Ray task (:mod:`holistic.execution.ray_executor`).

Both call the same :func:`~holistic.execution.safe_run.execute_run_safely`, so results are identical.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence

from holistic.core.errors import HolisticError
from holistic.core.extras import missing_extra
from holistic.core.types import RunSpec
from holistic.execution.context import ExecutionContext
from holistic.execution.options import EXECUTORS, RunOptions
from holistic.execution.progress import Progress
from holistic.execution.reports import RunReport
from holistic.execution.safe_run import execute_run_safely
from holistic.results.store import SuiteStore


class ExecutorError(HolisticError):
    """The chosen executor cannot be used."""

    exit_code = 2


Runner = Callable[[Sequence[RunSpec], SuiteStore, RunOptions, Progress, int], Iterator[RunReport]]


def check_executor(name: str, address: str | None = None) -> None:
    """Fail before anything runs if the executor is unknown or unavailable."""
    if name not in EXECUTORS:
        raise ExecutorError(f"unknown executor {name!r}; choose one of {', '.join(EXECUTORS)}")
    if address and name != "ray":
        raise ExecutorError(f"--address {address} names a Ray cluster; it needs --executor ray")
    if name == "ray":
        problem = missing_extra("ray", "--executor ray")
        if problem is not None:
            raise ExecutorError(f"{problem} (or use --executor local)")
        from holistic.execution.ray_executor import probe_address

        probe_address(address or os.environ.get("RAY_ADDRESS") or "auto")  # before anything is written


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


def run_ray(
    runs: Sequence[RunSpec], store: SuiteStore, options: RunOptions, progress: Progress, total: int
) -> Iterator[RunReport]:
    """One Ray task per run (see :mod:`holistic.execution.ray_executor`)."""
    from holistic.execution.ray_executor import run_ray as dispatch

    yield from dispatch(runs, store, options, progress, total)


EXECUTOR_FUNCTIONS: dict[str, Runner] = {"local": run_local, "ray": run_ray}
