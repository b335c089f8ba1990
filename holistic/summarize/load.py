"""Read a suite's runs for the summary, through :class:`holistic.results.SuiteReader` only."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from holistic.results import RunReader, SuiteReader, references_from_rows
from holistic.results.fs import Location
from holistic.results.schemas import INSTANCES_TABLE, PER_INSTANCE_STATS_TABLE

if TYPE_CHECKING:
    from holistic.results.output_cache import OutputCache
    from holistic.summarize.trials import TrialMeans

EVAL_SPLIT_PREFERENCE = ("test", "valid")
"""The splits a summary reads a run's scores from, the first present one."""


@dataclass(frozen=True)
class RunInfo:
    """What the summary needs to know about one run (complete, or partial with failed requests)."""

    run_id: str
    name: str
    scenario: str
    scenario_args: dict[str, Any]
    model: str
    method: str
    groups: tuple[str, ...]
    main_metric: str | None
    spec: dict[str, Any]
    error_rate: float = 0.0
    """Share of the run's requests that failed (0 for a complete run)."""
    failed_requests: int = 0
    requests: int = 0

    @property
    def rankable(self) -> bool:
        """A run whose every request failed measured nothing: it is never ranked."""
        return not (self.requests and self.failed_requests >= self.requests)


@dataclass
class SuiteData:
    suite: str
    suite_dir: Location
    suite_meta: dict[str, Any]
    runs: list[RunInfo]
    stats: pa.Table
    """Every run's stats.parquet, concatenated (the columns the summary reads:
    :data:`holistic.summarize.stats_rows.STATS_COLUMNS`)."""
    reader: SuiteReader
    _values: dict[tuple[tuple[str, ...], tuple[str, ...]], pa.Table] = field(default_factory=dict, repr=False)
    trial_means: dict[str, TrialMeans] = field(default_factory=dict)
    """Run id -> its main metric's per-trial means, for the runs whose per-instance values of their
    main metric were read (:func:`holistic.summarize.trials.trial_means_from`)."""

    def instance_values(self, run_ids: list[str], metrics: list[str]) -> pa.Table:
        """:func:`per_instance_values` of these runs and metrics; the last one read is kept, since
        metric groups of the same metrics (originals and perturbations) read the same rows. Each
        run's trial means are taken from the first values read of its main metric."""
        key = (tuple(run_ids), tuple(metrics))
        if key not in self._values:
            from holistic.summarize.trials import trial_means_from  # pyarrow.compute: a suite's summary only

            self._values.clear()  # one table at a time: a suite's per-instance values are large
            table = per_instance_values(self.reader, run_ids, metrics)
            self._values[key] = table
            mains = {r.run_id: r.main_metric for r in self.runs}
            for run_id, means in trial_means_from(table, run_ids, metrics, mains).items():
                self.trial_means.setdefault(run_id, means)
        return self._values[key]

    def forget_values(self) -> None:
        """Let go of the per-instance values kept."""
        self._values.clear()


def main_metric_of(spec: dict[str, Any]) -> str | None:
    """The run's main metric, as its ``run_spec.json`` names it."""
    info = spec.get("scenario_info")
    found = spec.get("main_metric") or (info.get("main_metric") if isinstance(info, dict) else None)
    return found if isinstance(found, str) else None


def _run_info(run: RunReader) -> RunInfo:
    spec = run.spec
    # run_spec.json holds RunSpec.canonical() plus run facts written by the runner.
    scenario = spec.get("scenario", {})
    adapter = spec.get("adapter", {})
    return RunInfo(
        run_id=spec.get("run_id", run.run_id),
        name=spec.get("name", run.run_id),
        scenario=scenario.get("name", "?"),
        scenario_args=dict(scenario.get("args", {})),
        model=spec.get("model", "?"),
        method=adapter.get("method", "generation"),
        groups=tuple(spec.get("groups", []) or []),
        main_metric=main_metric_of(spec),
        spec=spec,
        error_rate=run.error_rate,
        failed_requests=run.manifest.failed_requests,
        requests=run.manifest.requests,
    )


def load_suite(suite_dir: Location | SuiteReader, cache: OutputCache | None = None) -> SuiteData:
    """Load run facts and all stats of the suite's runs (every manifest verified first; ``cache``:
    the suite's output cache, where the stats rows of the last summarize are kept)."""
    from holistic.summarize.stats_rows import stats_table

    reader = suite_dir if isinstance(suite_dir, SuiteReader) else SuiteReader(suite_dir)
    runs = [_run_info(r) for r in reader.runs]
    stats = stats_table(reader, cache)
    return SuiteData(
        suite=reader.suite, suite_dir=reader.suite_dir, suite_meta=reader.meta, runs=runs, stats=stats, reader=reader
    )


def per_instance_values(reader: SuiteReader, run_ids: list[str], metrics: list[str]) -> pa.Table:
    """Per-instance rows of the given runs and metrics (only the columns the bootstrap needs; the strings
    as dictionaries)."""
    if not run_ids or not metrics:
        return pa.table({})
    cols = ["run_id", "instance_id", "trial", "metric", "split", "perturbation", "value"]
    strings = ["run_id", "instance_id", "metric", "split", "perturbation"]  # few distinct values each: no string copied
    return reader.dataset_table(PER_INSTANCE_STATS_TABLE, run_ids, columns=cols, metrics=metrics, dictionary=strings)


def eval_references(run_dir: Location | RunReader) -> dict[str, list[list[tuple[str, bool]]]]:
    """Split -> each evaluated original instance's references as ``(output, correct)``
    pairs, in instance-id order (perturbed variants and in-context examples left out)."""
    run = RunReader.at(run_dir)
    if not run.has_table(INSTANCES_TABLE):
        return {}
    table = run.table(INSTANCES_TABLE, ["instance_id", "role", "split", "perturbation", "references"])
    rows = sorted(
        (r for r in table.to_pylist() if r["role"] == "eval" and not r["perturbation"]),
        key=lambda r: r["instance_id"],
    )
    out: dict[str, list[list[tuple[str, bool]]]] = {}
    for r in rows:
        refs = [(ref.output, ref.is_correct) for ref in references_from_rows(r["references"])]
        out.setdefault(r["split"] or "test", []).append(refs)
    return out
