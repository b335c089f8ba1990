"""``--executor ray``: every run is one Ray task; results equal the local executor's.

How the pieces fit, and why:

- **Connecting.** ``--address`` (or ``$RAY_ADDRESS``) joins an existing cluster; without
  one, a local cluster is started for this process. Before ``ray.init`` the address is
  probed with a plain TCP connection (a few seconds at most), because Ray itself keeps
  retrying an unreachable address for minutes: a wrong address is exit 2 at once, naming it.
- **One task per run, with declared resources.** A run on a local model (``embedded``,
  ``huggingface``, ``llama_cpp``, ``simple``) asks for one CPU, and one GPU when its
  deployment's ``device`` names CUDA; a run on an API model asks for no CPU (it waits on
  the network). A run on a torch model uses as many threads as the local executor would
  (results depend on the thread count in the last bits; see :func:`match_local_threads`).
  API deployments are bounded cluster-wide: a deployment's
  ``max_concurrency`` (models file) is its budget of requests in flight across the whole
  cluster, so the driver keeps at most ``budget // threads-per-task`` of its runs in flight,
  and each task uses at most ``budget`` threads. Without ``max_concurrency`` the only bound
  is ``-j`` per task.
- **The request cache lives with the driver.** SQLite must not be shared over a network
  filesystem (its locks are not reliable there, and WAL needs shared memory on one host),
  so workers never open the cache file. A cache actor pinned to the driver's node owns it;
  tasks look up and store answers through the actor, one call per request batch. Every
  batch a task finishes is stored at once, so a task retried after its worker died answers
  everything done before from the cache: no request is computed twice.
- **Results** go to the output folder, which must be a path every worker sees (a shared
  filesystem; on one machine, any folder). Each task writes its own run folder, file by
  file atomically, manifest last, exactly as the local executor does; the driver alone
  writes ``suite.json``. A retried task rewrites a half-written run folder from scratch.
- **Fault tolerance.** A task whose worker dies (killed, out of memory, node lost) is
  retried by Ray up to :data:`MAX_TASK_RETRIES` times; a run error inside the task is not
  retried (it is reported, as locally).
- **Progress.** The driver prints runs done / running / waiting / failed with an ETA, and
  each worker's throughput (requests per second, from the runs it finished).
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from holistic.core.errors import HolisticError
from holistic.core.plugins import load_plugins
from holistic.core.types import ModelDeployment, RequestResult, RunSpec
from holistic.execution.context import ExecutionContext
from holistic.execution.options import RunOptions
from holistic.execution.progress import NullProgress, Progress
from holistic.execution.reports import FAILED, RunReport
from holistic.execution.safe_run import execute_run_safely, failed_report
from holistic.models.cache import RequestCache
from holistic.models.registry import ModelRegistry, needs_torch, runs_in_process
from holistic.results.store import SuiteStore

MAX_TASK_RETRIES = 3
"""Times Ray re-runs a task whose worker died before it finished."""

CONNECT_TIMEOUT_S = 5.0
"""How long the reachability probe of ``--address`` waits."""

STATUS_INTERVAL_S = 10.0
"""Seconds between two progress lines while nothing finishes."""

DEFAULT_RAY_PORT = 6379


class RayConnectionError(HolisticError):
    """The Ray cluster at the given address cannot be reached."""

    exit_code = 2


# ---------------------------------------------------------------------------
# Connecting
# ---------------------------------------------------------------------------


def _host_port(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of an address to probe; ``None`` for ``auto``/``local``."""
    if address in ("auto", "local"):
        return None
    parsed = urlsplit(address if "://" in address else f"ray://{address}")
    if not parsed.hostname:
        raise RayConnectionError(f"--address {address!r}: expected HOST:PORT (or ray://HOST:PORT)")
    try:
        port = parsed.port
    except ValueError:
        raise RayConnectionError(f"--address {address!r}: the port is not a number") from None
    return parsed.hostname, port or (10001 if address.startswith("ray://") else DEFAULT_RAY_PORT)


def probe_address(address: str, timeout_s: float = CONNECT_TIMEOUT_S) -> None:
    """Raise :class:`RayConnectionError` unless something listens at ``address``."""
    target = _host_port(address)
    if target is None:
        return
    try:
        with socket.create_connection(target, timeout=timeout_s):
            pass
    except OSError as exc:
        raise RayConnectionError(
            f"cannot reach the Ray cluster at --address {address}: {exc.strerror or exc} "
            f"(is 'ray start --head' running there, and is {target[0]}:{target[1]} reachable from here?)"
        ) from None


def connect(address: str | None) -> None:
    """Join the cluster at ``address`` (or ``$RAY_ADDRESS``), or start a local one."""
    import ray

    if ray.is_initialized():
        return
    address = address or os.environ.get("RAY_ADDRESS") or None
    if address:
        probe_address(address)
    try:
        ray.init(address=address, ignore_reinit_error=True, log_to_driver=False, include_dashboard=False)
    except (ConnectionError, TimeoutError, RuntimeError) as exc:
        where = f"at --address {address}" if address else "locally"
        raise RayConnectionError(f"cannot start or join a Ray cluster {where}: {exc}") from None


# ---------------------------------------------------------------------------
# The cache, owned by an actor on the driver's node
# ---------------------------------------------------------------------------


class CacheServer:
    """Body of the cache actor: the one process that opens the SQLite file."""

    def __init__(self, path: str) -> None:
        self.cache = RequestCache(Path(path))
        self.stored = 0

    def get_many(self, keys: list[str]) -> dict[str, RequestResult]:
        return self.cache.get_many(keys)

    def put_many(self, items: list[tuple[str, RequestResult, str, str]]) -> int:
        stored = self.cache.put_many(items)
        self.stored += stored
        return stored

    def close(self) -> None:
        self.cache.close()


class RemoteCache:
    """What a task uses in place of :class:`RequestCache`: every call goes to the actor."""

    def __init__(self, actor: Any) -> None:
        self.actor = actor

    def get_many(self, keys: Sequence[str]) -> dict[str, RequestResult]:
        import ray

        result: dict[str, RequestResult] = ray.get(self.actor.get_many.remote(list(keys)))
        return result

    def put_many(self, items: Any) -> int:
        import ray

        stored: int = ray.get(self.actor.put_many.remote(list(items)))
        return stored

    def close(self) -> None:
        """The actor's connection belongs to the driver; nothing to close here."""


# ---------------------------------------------------------------------------
# The task
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TaskOutcome:
    """What one task sends back: the run's report and where and how fast it ran."""

    report: RunReport
    worker: str
    seconds: float


_WORKER_CONTEXTS: dict[tuple[Any, ...], ExecutionContext] = {}
"""Per worker process: the execution context (and so the loaded models) of earlier tasks
with the same options, so a worker that runs several runs of one model loads it once."""


def _worker_context(options: RunOptions, cache: Any) -> ExecutionContext:
    key = (options.models_file, options.concurrency, options.batch_size)
    ctx = _WORKER_CONTEXTS.get(key)
    if ctx is None:
        ctx = ExecutionContext.open(options, cache)
        _WORKER_CONTEXTS[key] = ctx
    ctx.cache = cache
    return ctx


def match_local_threads(threads: int | None) -> None:
    """Give torch the thread count a local execution on this node would have.

    Ray starts workers with ``OMP_NUM_THREADS`` set to the task's CPUs (1), and a matrix
    product summed by one thread differs from one summed by two in the last bits: the
    log-probabilities would differ from the local executor's at about 1e-6. ``threads`` is
    the driver's own ``OMP_NUM_THREADS`` (``None``: unset, so torch's default, the physical
    cores)."""
    import psutil
    import torch

    torch.set_num_threads(threads or psutil.cpu_count(logical=False) or os.cpu_count() or 1)


def ray_task(
    run: RunSpec, suite: str, options: RunOptions, cache_actor: Any | None, local_threads: int | None = None
) -> TaskOutcome:
    """Body of one Ray task: execute one run into the shared output folder."""
    import ray

    start = time.perf_counter()
    load_plugins(options.plugins)  # the worker process registers the driver's --plugins too
    cache = RemoteCache(cache_actor) if cache_actor is not None else None
    ctx = _worker_context(options, cache)
    if needs_torch(ctx.deployment(run.model).provider):
        match_local_threads(local_threads)
    store = SuiteStore(options.output_dir, suite)
    report = execute_run_safely(run, store=store, ctx=ctx, progress=NullProgress(), position=(1, 1))
    node = ray.get_runtime_context().get_node_id()[:8]
    return TaskOutcome(report=report, worker=f"node {node} pid {os.getpid()}", seconds=time.perf_counter() - start)


# ---------------------------------------------------------------------------
# The driver
# ---------------------------------------------------------------------------


def absolute_options(options: RunOptions) -> RunOptions:
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
        plugins=tuple(
            str(Path(p).expanduser().resolve()) if Path(p).expanduser().exists() else p for p in options.plugins
        ),
    )


@dataclass(frozen=True)
class TaskShape:
    """Resources one run's task declares, and the budget group it counts against."""

    num_cpus: float
    num_gpus: float
    threads: int
    """``-j`` inside the task (API providers), capped by the deployment's budget."""
    group: str | None
    """Deployment name whose cluster-wide budget the task counts against (API models)."""
    slots: int
    """How many tasks of ``group`` may be in flight at once."""


def task_shape(deployment: ModelDeployment, concurrency: int) -> TaskShape:
    """Resources and budget of a run on ``deployment`` (see the module docstring)."""
    if runs_in_process(deployment.provider):
        device = str(deployment.args.get("device", "cpu"))
        return TaskShape(num_cpus=1, num_gpus=1 if device.startswith("cuda") else 0, threads=1, group=None, slots=0)
    budget = deployment.args.get("max_concurrency")
    if not isinstance(budget, int) or budget < 1:
        return TaskShape(num_cpus=0, num_gpus=0, threads=concurrency, group=None, slots=0)
    threads = min(concurrency, budget)
    return TaskShape(num_cpus=0, num_gpus=0, threads=threads, group=deployment.name, slots=max(1, budget // threads))


@dataclass
class _Tracker:
    """Counts and timings the driver prints."""

    total: int
    already_done: int
    start: float = field(default_factory=time.perf_counter)
    done: int = 0
    failed: int = 0
    worker_requests: dict[str, int] = field(default_factory=dict)
    worker_seconds: dict[str, float] = field(default_factory=dict)

    def finish(self, outcome: TaskOutcome | None, report: RunReport) -> None:
        self.done += 1
        self.failed += report.status == FAILED
        if outcome is not None:
            self.worker_requests[outcome.worker] = self.worker_requests.get(outcome.worker, 0) + report.requests
            self.worker_seconds[outcome.worker] = self.worker_seconds.get(outcome.worker, 0.0) + outcome.seconds

    def line(self, running: int, waiting: int) -> str:
        elapsed = time.perf_counter() - self.start
        left = self.total - self.already_done - self.done
        eta = ""
        if self.done and left:
            eta = f", ETA {_duration(elapsed / self.done * left)}"
        workers = "; ".join(
            f"{w}: {self.worker_requests[w] / max(self.worker_seconds[w], 1e-9):.1f} req/s"
            for w in sorted(self.worker_requests)
        )
        return (
            f"[ray] {self.already_done + self.done}/{self.total} runs done ({self.failed} failed), "
            f"{running} running, {waiting} waiting{eta}" + (f" | {workers}" if workers else "")
        )


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


def run_ray(
    runs: Sequence[RunSpec], store: SuiteStore, options: RunOptions, progress: Progress, total: int
) -> Iterator[RunReport]:
    """Dispatch ``runs`` as Ray tasks; yield each run's report as it finishes."""
    import ray

    connect(options.ray_address)
    worker_options = absolute_options(options)
    registry = ModelRegistry(worker_options.models_file)
    shapes = {run.run_id: task_shape(registry.get(run.model), options.concurrency) for run in runs}

    cache_actor: Any = None
    if options.use_cache:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        here = ray.get_runtime_context().get_node_id()
        actor_class = ray.remote(num_cpus=0, max_restarts=-1)(CacheServer)
        cache_actor = actor_class.options(
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=here, soft=False)
        ).remote(str(worker_options.cache_path()))

    task = ray.remote(max_retries=MAX_TASK_RETRIES, retry_exceptions=False)(ray_task)
    omp = os.environ.get("OMP_NUM_THREADS", "")
    local_threads = int(omp) if omp.isdigit() and int(omp) > 0 else None
    waiting = list(runs)
    in_flight: dict[Any, RunSpec] = {}
    group_load: dict[str, int] = {}
    tracker = _Tracker(total=total, already_done=total - len(runs))
    last_status = 0.0

    def dispatch() -> None:
        still: list[RunSpec] = []
        for run in waiting:
            shape = shapes[run.run_id]
            if shape.group is not None and group_load.get(shape.group, 0) >= shape.slots:
                still.append(run)
                continue
            run_options = replace(worker_options, concurrency=shape.threads)
            ref = task.options(num_cpus=shape.num_cpus, num_gpus=shape.num_gpus).remote(
                run, store.suite, run_options, cache_actor, local_threads
            )
            in_flight[ref] = run
            if shape.group is not None:
                group_load[shape.group] = group_load.get(shape.group, 0) + 1
        waiting[:] = still

    try:
        dispatch()
        progress.message(tracker.line(len(in_flight), len(waiting)))
        while in_flight:
            ready, _ = ray.wait(list(in_flight), num_returns=1, timeout=STATUS_INTERVAL_S)
            if not ready:
                progress.message(tracker.line(len(in_flight), len(waiting)))
                continue
            ref = ready[0]
            run = in_flight.pop(ref)
            group = shapes[run.run_id].group
            if group is not None:
                group_load[group] -= 1
            outcome: TaskOutcome | None = None
            try:
                outcome = ray.get(ref)
                report = outcome.report
            except Exception as exc:  # the task died more often than it may be retried
                report = failed_report(
                    run, f"Ray task failed after {MAX_TASK_RETRIES} retries: {type(exc).__name__}: {exc}"
                )
            tracker.finish(outcome, report)
            dispatch()
            now = time.perf_counter()
            progress.message(
                f"[{tracker.already_done + tracker.done}/{total}] {report.run_id}: {report.status}"
                + (f" ({report.error})" if report.error else "")
            )
            if now - last_status >= STATUS_INTERVAL_S or not in_flight:
                progress.message(tracker.line(len(in_flight), len(waiting)))
                last_status = now
            yield report
    finally:
        for ref in in_flight:
            ray.cancel(ref)
        if cache_actor is not None:
            # If the actor is gone already, nothing is lost: its rows were committed as they came.
            with contextlib.suppress(Exception):
                ray.get(cache_actor.close.remote(), timeout=30)
            ray.kill(cache_actor)
