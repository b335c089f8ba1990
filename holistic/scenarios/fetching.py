"""Filling a data mirror for a whole suite (``helm-run --fetch-only``).

Suite-level code: it creates each run's scenario through the registry, asks it for its
:class:`~holistic.scenarios.loading.sources.DataNeeds` and resolves them, so it sits above the
registry and the data module (which know nothing of each other's callers).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioContext
from holistic.scenarios.base import BaseScenario
from holistic.scenarios.loading.sources import DataNeeds, ResolvedData, resolve
from holistic.scenarios.registry import create_scenario


@dataclass(frozen=True)
class FetchReport:
    """What ``fetch_for_runs`` did for one scenario folder."""

    scenario: str
    files: tuple[str, ...]
    origins: tuple[str, ...]
    """Per file: ``mirror`` (already there), ``cache`` or ``download`` (then copied to the mirror)."""


def scenario_needs(scenario: BaseScenario) -> DataNeeds | None:
    """The scenario's :class:`DataNeeds`, or ``None`` for scenarios that need no files."""
    return scenario.data_needs()


def fetch_for_runs(runs: Iterable[Any], ctx: ScenarioContext) -> list[FetchReport]:
    """Make every file the runs' scenarios read available (used by ``helm-run --fetch-only``).

    ``runs`` are :class:`~holistic.core.types.RunSpec` objects. Files are resolved as
    usual; when ``ctx.data_root`` is set, files found in the cache or downloaded are
    copied into it, so the mirror alone serves later offline runs. Raises
    :class:`DataSourceError` listing every scenario whose data could not be had.
    """
    reports: list[FetchReport] = []
    errors: list[str] = []
    seen: set[DataNeeds] = set()
    for run in runs:
        needs = scenario_needs(create_scenario(run.scenario))
        if needs is None or needs in seen:
            continue
        seen.add(needs)
        try:
            resolved = resolve(needs, ctx)
        except DataSourceError as exc:
            errors.append(str(exc))
            continue
        if ctx.data_root is not None:
            _copy_into_mirror(resolved, Path(ctx.data_root) / needs.scenario)
        reports.append(
            FetchReport(needs.scenario, tuple(resolved.paths), tuple(resolved.origins[p] for p in resolved.paths))
        )
    if errors:
        raise DataSourceError("\n".join(errors))
    return reports


def _copy_into_mirror(resolved: ResolvedData, mirror: Path) -> None:
    for rel, path in resolved.paths.items():
        if resolved.origins[rel] == "mirror":
            continue
        target = mirror / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.is_dir():
            shutil.copytree(path, target, dirs_exist_ok=True)
        else:
            shutil.copyfile(path, target)
