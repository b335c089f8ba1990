"""The other commands as calls: :func:`import_helm` and :func:`import_results` (``helm-import``) and :func:`check_models`
(``python -m holistic.cli.check``)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from holistic.helm.imports.importer import RunImport
    from holistic.importing.runs import ImportedRun
    from holistic.models.check import AgreementTable


def import_helm(
    source: str | os.PathLike[str],
    suite: str,
    *,
    output_dir: str | os.PathLike[str] = "output",
    force: bool = False,
    keep_unknown_stats: bool = False,
    models: Mapping[str, str] | None = None,
    helm_version: str | None = None,
    on_run: Callable[[RunImport], None] | None = None,
) -> list[RunImport]:
    """Import HELM's raw results as an ordinary holistic suite (``helm-import``), which
    :func:`~holistic.api.summarize`, :func:`~holistic.api.load` and :func:`~holistic.api.diff` read like a
    native one.

    Every check that needs no writing runs first; a run is marked complete only once all its files are
    written, and a run that fails midway is removed.

    Args:
        source: A HELM ``benchmark_output/runs/<suite>`` folder, or one run folder.
        suite: The name of the holistic suite to write.
        output_dir: Where suites live; the suite is ``<output_dir>/<suite>``.
        force: Import into an existing suite: runs of the same HELM run spec are replaced, the others kept.
        keep_unknown_stats: Import stat names holistic does not know under HELM's names (otherwise such a
            name stops the import).
        models: HELM's model (or deployment) name -> holistic's model name, so that :func:`~holistic.api.diff`
            lines the runs up with holistic's runs of that model.
        helm_version: The HELM version that wrote the runs, recorded with them.
        on_run: Called with each run's report as soon as it is imported.

    Returns:
        One report per imported run: its run id, instances, requests, stats and what was kept raw.
    """
    from holistic.core.errors import StoreError
    from holistic.helm.imports.importer import ImportOptions
    from holistic.helm.imports.importer import import_helm as import_runs
    from holistic.results.layout import check_suite_name

    check_suite_name(suite, where="--suite")
    out = Path(output_dir)
    if out.exists() and not out.is_dir():
        raise StoreError(f"--output-dir {out}: not a folder")
    options = ImportOptions(
        output_dir=out,
        suite=suite,
        force=force,
        keep_unknown_stats=keep_unknown_stats,
        model_map=dict(models or {}),
        helm_version=helm_version,
    )
    return import_runs(Path(source), options, on_run=on_run)


def import_results(
    source: str | os.PathLike[str],
    suite: str,
    *,
    fmt: str | None = None,
    output_dir: str | os.PathLike[str] = "output",
    force: bool = False,
    models: Mapping[str, str] | None = None,
    on_run: Callable[[ImportedRun], None] | None = None,
) -> list[ImportedRun]:
    """Import another harness's results (``helm-import --from lm-eval | inspect | every-eval-ever``) as
    an ordinary holistic suite: every task a run, every document or sample an instance, the stats
    recomputed from the per-instance values. ``fmt`` None: detected from ``source`` when only one
    format fits (``helm`` then goes to :func:`import_helm`). ``models``: the tool's model name ->
    holistic's. Returns the runs as read and written."""
    from holistic.core.errors import StoreError
    from holistic.importing import WriteOptions, detect_format
    from holistic.importing import import_results as import_other
    from holistic.results.layout import check_suite_name

    check_suite_name(suite, where="--suite")
    out = Path(output_dir)
    if out.exists() and not out.is_dir():
        raise StoreError(f"--output-dir {out}: not a folder")
    fmt = fmt or detect_format(Path(source))
    return import_other(
        Path(source), fmt, WriteOptions(output_dir=out, suite=suite, force=force), models=models, on_run=on_run
    )


@dataclass(frozen=True)
class ModelCheck:
    """What :func:`check_models` returns."""

    table: AgreementTable
    """The scores of each case on each deployment, and the cases flagged (``.format()`` prints it)."""
    scoring: tuple[tuple[str, Mapping[str, Any]], ...]
    """Per deployment that checks its own scoring first (an OpenAI-compatible server's echo alignment):
    its name and the probe's verdict (``status``, ``detail``)."""

    @property
    def ok(self) -> bool:
        """Every deployment agrees within the tolerance."""
        return self.table.ok


def check_models(
    models: Sequence[str], *, models_file: str | os.PathLike[str] | None = None, tolerance: float = 0.1
) -> ModelCheck:
    """Score a few fixed continuations on every named deployment and flag those that disagree, e.g. a
    server against the same weights run locally (``python -m holistic.cli.check``).

    Args:
        models: Deployment names of the registry (or of ``models_file``), at least two.
        models_file: A YAML file of your deployments, as for ``helm-run --models-file``.
        tolerance: Nats two log-likelihoods may differ by.

    Returns:
        The agreement table and the scoring probes' verdicts.
    """
    from holistic.core.errors import ModelError
    from holistic.models.check import compare_loglikelihoods
    from holistic.models.echo_alignment import scoring_check
    from holistic.models.registry import ModelRegistry, create_client

    if len(models) < 2:
        raise ModelError("name at least two deployments to compare")
    registry = ModelRegistry(None if models_file is None else Path(models_file))
    clients = [create_client(registry.get(name)) for name in models]
    scoring: list[tuple[str, Mapping[str, Any]]] = []
    try:
        for client in clients:
            client.begin_run()
            facts = scoring_check(client)
            if facts is not None:
                scoring.append((client.deployment.name, facts))
        table = compare_loglikelihoods(clients, tolerance=tolerance)
    finally:
        for client in clients:
            client.close()
    return ModelCheck(table=table, scoring=tuple(scoring))
