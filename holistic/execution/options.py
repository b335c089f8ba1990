"""Options of one execution of a suite (what ``helm-run`` flags set)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from holistic.core.specs import EvalInstances
from holistic.results.fs import Location
from holistic.results.layout import CACHE_DIR, CACHE_FILE

URI_CACHE_SUBDIR = "requests"
"""The default request cache of a suite written to a URI: ``<holistic cache root>/requests``."""

EXECUTORS = ("local", "ray")


@dataclass(frozen=True)
class RunOptions:
    """How to execute a compiled suite."""

    output_dir: Location = Path("output")
    """Results go to ``<output_dir>/<suite>/``: a local folder or a URI (:mod:`holistic.results.fs`)."""

    cache_dir: Path | None = None
    """Folder of the request cache (``requests.sqlite``), always local (SQLite is not safe on object
    stores or network filesystems); ``None`` means ``<output_dir>/cache`` for a local output folder
    (results and the answers they came from stay together, and suites written to the same output
    folder share answers), and ``$HOLISTIC_CACHE_DIR/requests`` (default
    ``~/.cache/holistic/requests``) when the output is a URI."""

    use_cache: bool = True
    """``False`` (``--no-cache``): neither read nor write the request cache."""

    concurrency: int = 1
    """Threads sending batches to API providers (local providers always use one)."""

    batch_size: int | None = None
    """Requests per ``client.process`` call; also the most work an interrupt can lose.
    ``None``: the client's own ``request_batch_size`` (large for local engines, which
    shape their forward passes themselves; 32 for API clients)."""

    max_eval_instances: int | None = None
    """Overrides every run's ``max_eval_instances`` (part of the run id, so a smaller
    trial run never passes for the full one)."""

    eval_instances: EvalInstances | None = None
    """Overrides every run's ``eval_instances`` (``first`` with ``--limit``)."""

    allow_zero_shot: bool = False
    """Run a run that asks for in-context examples but finds no training split zero-shot
    (with a warning) instead of failing it."""

    data_root: Path | None = None
    """Local data mirror handed to scenarios (``--data-root`` / ``HOLISTIC_DATA_ROOT``)."""

    data_cache_dir: Path | None = None
    """Download cache handed to scenarios (``None``: the scenario's default)."""

    offline: bool = False
    """Tell scenarios never to touch the network."""

    models_file: Path | None = None
    """Extra model deployments (``--models-file``)."""

    executor: str = "local"
    """``local`` (this process) or ``ray`` (one Ray task per run)."""

    wait_for_lock: bool = True
    """Another process writing the same suite: wait for it (``True``) or stop at once (``--no-wait``)."""
    batch: bool = False
    """``--batch``: every deployment whose provider has a batch API goes by batch (``batch: true`` in a
    models file does it for one deployment); see :mod:`holistic.models.batch_client`."""
    wait_for_batches: bool = True
    """Batch mode: wait for the batches (``True``) or submit them and leave the suite partial (``--no-wait``)."""
    ray_address: str | None = None
    """Ray cluster to join (``--address``; default ``$RAY_ADDRESS``, else a local cluster)."""
    plugins: tuple[str, ...] = ()
    """``--plugins`` items (module names, .py files, folders); Ray workers load them too."""
    max_cost_usd: float | None = None
    """``--max-cost``: refuse a suite whose forecast upper bound is above it, and send nothing new once this
    execution has spent it (:mod:`holistic.models.pricing`); ``None``: no budget."""

    def cache_path(self) -> Path:
        if self.cache_dir is not None:
            return self.cache_dir / CACHE_FILE
        if isinstance(self.output_dir, Path):
            return self.output_dir / CACHE_DIR / CACHE_FILE
        from holistic.models.weights import cache_root

        return cache_root() / URI_CACHE_SUBDIR / CACHE_FILE
