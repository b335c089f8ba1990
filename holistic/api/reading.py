"""Reading and comparing suites: :func:`load` (a suite's tables) and :func:`diff` (``helm-diff``)."""

from __future__ import annotations

import json
import os
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from holistic.api.summarizing import open_suite

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pandas as pd
    import pyarrow as pa

    from holistic.diff.compare import DiffReport
    from holistic.results.fs import Location
    from holistic.results.reader import SuiteReader

TABLES = ("stats", "per_instance_stats", "requests", "instances", "annotations")
"""The per-run tables :meth:`SuiteTables.table` reads (see ``schemas/`` and the results schema docs)."""


class SuiteTables:
    """A suite's results as Arrow tables, each the union of its complete runs' Parquet files
    (every row carries its ``run_id``). Each table is read on first use; ``.to_pandas()`` on any
    of them gives a DataFrame."""

    def __init__(self, reader: SuiteReader) -> None:
        self.reader = reader
        """The verified reader underneath (runs, manifests, per-run tables)."""

    @property
    def suite(self) -> str:
        """The suite's name."""
        return self.reader.suite

    @property
    def suite_dir(self) -> Location:
        """The suite's folder (a path or a URI)."""
        return self.reader.suite_dir

    @property
    def run_ids(self) -> tuple[str, ...]:
        """The ids of the complete runs (a damaged run stops the reading, naming it)."""
        return tuple(r.run_id for r in self.reader.runs)

    def table(
        self, name: str, *, columns: Sequence[str] | None = None, metrics: Sequence[str] | None = None
    ) -> pa.Table:
        """One of :data:`TABLES` over every complete run.

        Args:
            name: ``stats``, ``per_instance_stats``, ``requests``, ``instances`` or ``annotations``.
            columns: Only these columns (default: all).
            metrics: Only rows of these metrics (tables with a ``metric`` column).
        """
        if name not in TABLES:
            from holistic.core.errors import StoreError

            raise StoreError(f"no table {name!r} in a suite; the tables are: {', '.join(TABLES)}")
        return self.reader.dataset_table(name, columns=columns, metrics=metrics)

    @cached_property
    def stats(self) -> pa.Table:
        """Aggregated metric values: one row per run, metric, split, sub-split and perturbation, with the
        mean, its bootstrap interval and the count."""
        return self.table("stats")

    @cached_property
    def per_instance_stats(self) -> pa.Table:
        """Metric values per instance and trial."""
        return self.table("per_instance_stats")

    @cached_property
    def requests(self) -> pa.Table:
        """Every request: prompt, completion, tokens, log-probabilities, latency, errors."""
        return self.table("requests")

    @cached_property
    def instances(self) -> pa.Table:
        """The evaluated instances and the in-context examples used."""
        return self.table("instances")

    @cached_property
    def annotations(self) -> pa.Table:
        """Judges' verdicts (empty when no run names judges)."""
        return self.table("annotations")

    @cached_property
    def run_specs(self) -> pa.Table:
        """One row per complete run: ``run_id``, ``name``, ``scenario``, ``scenario_args`` (JSON), ``model``,
        ``method``, ``main_metric`` and the whole ``run_spec.json`` as ``spec`` (JSON)."""
        import pyarrow as pa

        rows = [_spec_row(run.run_id, run.spec) for run in self.reader.runs]
        return pa.Table.from_pylist(rows, schema=_spec_schema())

    @cached_property
    def runs(self) -> pa.Table:
        """Every run ``suite.json`` lists, complete or not: ``run_id``, ``name``, ``scenario``, ``model``,
        ``method``, ``status``, ``error`` and request counts."""
        import pyarrow as pa

        return pa.Table.from_pylist([dict(r) for r in self.reader.meta.get("runs", [])])

    def to_pandas(self, name: str) -> pd.DataFrame:
        """``name`` (one of :data:`TABLES`, ``run_specs`` or ``runs``) as a pandas DataFrame."""
        table = getattr(self, name) if name in (*TABLES, "run_specs", "runs") else self.table(name)
        return table.to_pandas()

    def __repr__(self) -> str:
        return f"SuiteTables({self.suite!r}, {len(self.reader.runs)} runs at {self.suite_dir})"


def _spec_row(run_id: str, spec: dict[str, Any]) -> dict[str, Any]:
    scenario = spec.get("scenario", {})
    return {
        "run_id": run_id,
        "name": spec.get("name"),
        "scenario": scenario.get("name"),
        "scenario_args": json.dumps(scenario.get("args", {}), sort_keys=True),
        "model": spec.get("model"),
        "method": spec.get("adapter", {}).get("method"),
        "main_metric": spec.get("main_metric"),
        "spec": json.dumps(spec, sort_keys=True),
    }


def _spec_schema() -> pa.Schema:
    import pyarrow as pa

    names = ("run_id", "name", "scenario", "scenario_args", "model", "method", "main_metric", "spec")
    return pa.schema([(n, pa.string()) for n in names])


def load(suite: str | os.PathLike[str] | Location, *, output_dir: str | os.PathLike[str] | None = None) -> SuiteTables:
    """A suite's results as Arrow tables (``.to_pandas()`` for DataFrames).

    Opening checks the suite's schema version; reading a table first verifies every run's manifest,
    so a damaged run raises an error naming the run and the file instead of changing the numbers.

    Args:
        suite: The suite's folder (a path, a URI, or :attr:`RunResult.suite_dir <holistic.api.RunResult.suite_dir>`);
            with ``output_dir``, the suite's name under it.
        output_dir: The folder (or URI) the suite named ``suite`` is in.

    Returns:
        The suite's tables: ``stats``, ``per_instance_stats``, ``requests``, ``instances``,
        ``annotations``, ``run_specs`` and ``runs``.

    Example:
        >>> tables = holistic.load("output/quickstart")  # doctest: +SKIP
        >>> tables.stats.to_pandas().query("metric == 'exact_match'")  # doctest: +SKIP
    """
    return SuiteTables(open_suite(suite, output_dir))


def diff(
    old: str | os.PathLike[str],
    new: str | os.PathLike[str],
    *,
    suite: str | None = None,
    old_suite: str | None = None,
    new_suite: str | None = None,
    num_bootstrap: int = 1000,
    seed: int = 0,
) -> DiffReport:
    """Compare two releases of a suite run by run (``helm-diff``).

    Runs are aligned by scenario, model and adaptation, instances by id; runs whose prompt, in-context
    examples, decoding, model revision or results schema changed are flagged as not comparable.

    Args:
        old: The old suite's folder (or, with ``suite``/``old_suite``, the output folder it is in).
        new: The new suite's folder (or, with ``suite``/``new_suite``, the output folder it is in).
        suite: The suite's name inside both ``old`` and ``new``.
        old_suite: The suite's name inside ``old`` (overrides ``suite``).
        new_suite: The suite's name inside ``new`` (overrides ``suite``).
        num_bootstrap: Paired bootstrap replicates of each delta's 95% interval.
        seed: Seed of the bootstrap.

    Returns:
        The comparison: per aligned run and metric the old and new values, the delta and its interval,
        the flips, and the runs added and removed (``.to_json()`` for plain data; the
        :mod:`holistic.diff.report` functions format it as a table, CSV or Parquet).
    """
    from holistic.diff.align import read_side, resolve_suite_dir
    from holistic.diff.compare import diff_suites

    old_dir = resolve_suite_dir(Path(old), old_suite or suite)
    new_dir = resolve_suite_dir(Path(new), new_suite or suite)
    return diff_suites(read_side(old_dir), read_side(new_dir), seed=seed, num_bootstrap=num_bootstrap)
