"""One imported run of another harness, as read, and its writing into a holistic suite.

A reader (:mod:`holistic.importing.lm_eval`, :mod:`holistic.importing.inspect_logs`,
:mod:`holistic.importing.eee`) fills an :class:`ImportedRun`: instance, request and
per-instance rows in holistic's schema (join columns aside) and what the tool itself reported.
:func:`write_runs` writes the runs through the results store as ``helm-import`` writes HELM's:
the stats recomputed from the per-instance values (count, sum, sum of squares, min, max, mean,
standard deviation, and the bootstrap interval a native run gets), ``run_spec.json`` with
``imported_from``, every check before the suite is touched, a run marked complete only once all
its files are written, and ``partial`` when the tool recorded failed samples.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import shutil
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from holistic.core.errors import HolisticError, StoreError
from holistic.core.hashing import canonical_json, sha256_hex, short_hash, stable_seed
from holistic.core.types import MetricName
from holistic.importing.safe import ImportFileError
from holistic.results.layout import ARTIFACTS_FILE, RUN_SPEC_FILE
from holistic.results.schemas import (
    INSTANCES_TABLE,
    PER_INSTANCE_STATS_TABLE,
    REQUESTS_TABLE,
    STATS_TABLE,
    table_from_rows,
)
from holistic.results.store import SuiteStore

METRIC_NAMES = {
    "acc": "exact_match",
    "acc_norm": "exact_match_per_char",
    "acc_bytes": "exact_match_per_byte",
    "exact_match": "exact_match",
}
"""lm-evaluation-harness metric -> holistic's metric that scores the same way (others keep their names)."""


@dataclass
class ImportedRun:
    """One task of another harness, read and checked, not yet written."""

    tool: str
    """``lm-evaluation-harness``, ``inspect_ai`` or ``every-eval-ever``."""
    name: str
    """The task's name in that tool."""
    source: Path
    """The file the run was read from (named in errors and recorded)."""
    model: str
    method: str
    main_metric: str
    instances: list[dict[str, Any]] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    per_instance: list[dict[str, Any]] = field(default_factory=list)
    reported: dict[str, Any] = field(default_factory=dict)
    """What the tool itself reported for the task (its aggregate values), kept as read."""
    origin: dict[str, Any] = field(default_factory=dict)
    """Tool version, model arguments, task configuration...: recorded under ``imported_from``."""
    failed: list[str] = field(default_factory=list)
    """Why samples failed in the tool (the run is then ``partial``)."""
    higher_is_better: dict[str, bool] = field(default_factory=dict)

    @property
    def scenario(self) -> str:
        return f"{self.tool}:{self.name}"

    @property
    def run_id(self) -> str:
        slug = "".join(ch if ch.isalnum() or ch in "_-." else "_" for ch in f"{self.tool}_{self.name}_{self.model}")
        key = {"tool": self.tool, "task": self.name, "model": self.model, "origin": self.origin}
        return f"{slug[:80]}-{short_hash(canonical_json(key))}"


@dataclass(frozen=True)
class WriteOptions:
    output_dir: Path
    suite: str
    force: bool = False
    seed: int = 0


def check_run(run: ImportedRun) -> None:
    """Duplicate instance ids and per-instance values that are not finite stop the import."""
    seen: set[tuple[Any, ...]] = set()
    for row in run.instances:
        key = (row["instance_id"], row["split"], row.get("perturbation"))
        if key in seen:
            raise ImportFileError(run.source, f"instance id {row['instance_id']!r} appears twice", where=run.name)
        seen.add(key)
    values: set[tuple[Any, ...]] = set()
    for row in run.per_instance:
        key_ = (row["instance_id"], row["trial"], row["metric"], row["split"], row.get("perturbation"))
        if key_ in values:
            raise ImportFileError(
                run.source, f"metric {row['metric']!r} given twice for instance {row['instance_id']!r}", where=run.name
            )
        values.add(key_)
        if not math.isfinite(row["value"]):
            raise ImportFileError(run.source, f"metric {row['metric']!r} is {row['value']}", where=run.name)
    if not run.instances:
        raise ImportFileError(run.source, "no samples to import", where=run.name)


@dataclass(frozen=True)
class _Interval:
    low: float
    high: float
    num_trials: int
    trial_stddev: float | None


def _interval(values: list[tuple[str, int, float]], seed: int) -> _Interval:
    """A native run's interval of a stat: each instance's values averaged over its trials, a percentile
    bootstrap of the mean over instances sorted by id, seeded by the sorted ids (so an imported run and a
    native run of the same instances get the same resamples)."""
    from holistic.metrics.stats import bootstrap_ci

    per_instance: dict[str, list[float]] = defaultdict(list)
    per_trial: dict[int, list[float]] = defaultdict(list)
    for instance, trial, value in values:
        per_instance[instance].append(value)
        per_trial[trial].append(value)
    ids = sorted(per_instance)
    means = [math.fsum(per_instance[i]) / len(per_instance[i]) for i in ids]
    low, high = bootstrap_ci(means, seed=stable_seed(seed, "bootstrap", sha256_hex("\n".join(ids))))
    trial_means = [math.fsum(v) / len(v) for v in per_trial.values()]
    spread = None
    if len(trial_means) > 1:
        center = math.fsum(trial_means) / len(trial_means)
        spread = math.sqrt(math.fsum((m - center) ** 2 for m in trial_means) / len(trial_means))
    return _Interval(low, high, len(trial_means), spread)


def stat_rows(run: ImportedRun, seed: int) -> list[dict[str, Any]]:
    """The run's stats, from its per-instance values, as a native run's are computed."""
    from holistic.metrics.registry import all_infos

    infos = all_infos()
    groups: dict[MetricName, list[tuple[str, int, float]]] = defaultdict(list)
    for row in run.per_instance:
        name = MetricName(row["metric"], row["split"], row.get("sub_split"), row.get("perturbation"))
        groups[name].append((row["instance_id"], row["trial"], row["value"]))
    rows = []
    for name, triples in sorted(groups.items(), key=lambda kv: (kv[0].name, kv[0].split)):
        vals = [v for _, _, v in triples]
        count, total = len(vals), math.fsum(vals)
        mean = total / count
        info = infos.get(name.name)
        interval = _interval(triples, seed)
        rows.append(
            {
                "metric": name.name,
                "split": name.split,
                "sub_split": name.sub_split,
                "perturbation": name.perturbation,
                "count": count,
                "sum": total,
                "sum_sq": math.fsum(v * v for v in vals),
                "min": min(vals),
                "max": max(vals),
                "mean": mean,
                "stddev": math.sqrt(max(math.fsum((v - mean) ** 2 for v in vals) / count, 0.0)),
                "ci_low": min(interval.low, mean),
                "ci_high": max(interval.high, mean),
                "num_trials": interval.num_trials,
                "trial_stddev": interval.trial_stddev,
                "higher_is_better": info.higher_is_better if info else run.higher_is_better.get(name.name),
                "category": info.category if info else None,
                "raw": None,
            }
        )
    return rows


def _join(store: SuiteStore, run: ImportedRun) -> dict[str, Any]:
    return {
        "suite": store.suite,
        "run_id": run.run_id,
        "run_name": run.name,
        "scenario": run.scenario,
        "scenario_args": canonical_json({}),
        "model": run.model,
        "method": run.method,
    }


def _write_run(store: SuiteStore, run: ImportedRun, seed: int) -> dict[str, Any]:
    join = _join(store, run)
    writer = store.begin_run(run.run_id)
    try:
        for table, rows in (
            (INSTANCES_TABLE, run.instances),
            (REQUESTS_TABLE, run.requests),
            (PER_INSTANCE_STATS_TABLE, run.per_instance),
            (STATS_TABLE, stat_rows(run, seed)),
        ):
            writer.write_table(table, table_from_rows(table, [{**join, **r} for r in rows]))
        failed = sum(not r["success"] for r in run.requests)
        writer.write_json(RUN_SPEC_FILE, _run_spec(store.suite, run))
        writer.write_json(
            ARTIFACTS_FILE,
            {
                "execution": {
                    "instances": len(run.instances),
                    "requests": len(run.requests),
                    "failed_requests": failed,
                    "error_rate": failed / len(run.requests) if run.requests else 0.0,
                },
                "import": {"tool": run.tool, "failed_samples": run.failed[:100], "reported": run.reported},
            },
        )
        writer.complete(requests=len(run.requests), failed_requests=failed)
    except BaseException:
        with contextlib.suppress(OSError):
            shutil.rmtree(writer.folder)  # type: ignore[arg-type]
        raise
    return {
        "run_id": run.run_id,
        "name": run.name,
        "scenario": run.scenario,
        "model": run.model,
        "method": run.method,
        "status": "partial" if run.failed or failed else "complete",
        "error": "; ".join(run.failed[:3]) or None,
        "requests": len(run.requests),
        "failed_requests": failed,
        "error_rate": failed / len(run.requests) if run.requests else 0.0,
        "imported_from": run.tool,
    }


def _run_spec(suite: str, run: ImportedRun) -> dict[str, Any]:
    return {
        "name": run.name,
        "suite": suite,
        "run_id": run.run_id,
        "scenario": {"name": run.scenario, "args": {}},
        "adapter": {"method": run.method},
        "model": run.model,
        "metrics": sorted({r["metric"] for r in run.per_instance}),
        "perturbations": [],
        "groups": [run.scenario],
        "main_metric": run.main_metric,
        "model_identity": None,
        "imported_from": {
            "tool": run.tool,
            "task": run.name,
            "file": run.source.name,
            "real_logprobs": any(r["has_logprobs"] for r in run.requests),
            **run.origin,
        },
    }


def write_runs(
    runs: list[ImportedRun], options: WriteOptions, *, label: str, on_run: Callable[[ImportedRun], None] | None = None
) -> list[ImportedRun]:
    """Write ``runs`` (each checked first) into ``options.suite``."""
    from holistic.results.lock import suite_lock

    for run in runs:
        check_run(run)
    ids: dict[str, ImportedRun] = {}
    for run in runs:
        if run.run_id in ids:
            raise ImportFileError(
                run.source, f"task {run.name!r} of model {run.model!r} also in {ids[run.run_id].source}"
            )
        ids[run.run_id] = run
    store = SuiteStore(options.output_dir, options.suite)
    if store.read_suite_json() is not None and not options.force:
        raise StoreError(
            f"{store.suite_file}: suite {options.suite!r} already exists; pass --force to import into it "
            "(runs of the same task and model are replaced, the others kept) or choose another --suite"
        )
    digest = hashlib.sha256(canonical_json(sorted(ids)).encode())
    with suite_lock(store.suite_dir, wait=False):
        store.open(spec_path=label, spec_sha256=digest.hexdigest())
        for run in runs:
            try:
                entry = _write_run(store, run, options.seed)
            except HolisticError as exc:
                store.record_runs([_failed(run, str(exc))])
                raise
            store.record_runs([entry])
            if on_run is not None:
                on_run(run)
    return runs


def _failed(run: ImportedRun, error: str) -> dict[str, Any]:
    return {
        "run_id": run.run_id,
        "name": run.name,
        "scenario": run.scenario,
        "model": run.model,
        "method": run.method,
        "status": "failed",
        "error": error,
        "requests": 0,
        "failed_requests": 0,
        "error_rate": 0.0,
        "imported_from": run.tool,
    }


def request_defaults(**row: Any) -> dict[str, Any]:
    """A requests row with holistic's defaults for what another harness does not record."""
    base: dict[str, Any] = {
        "sub_split": None,
        "perturbation": None,
        "trial": 0,
        "reference_index": None,
        "role": "main",
        "messages": None,
        "continuation": "",
        "max_tokens": 0,
        "temperature": 0.0,
        "stop": [],
        "num_completions": 1,
        "top_k_logprobs": 0,
        "trial_tag": "",
        "train_ids": [],
        "num_train_instances": 0,
        "prompt_truncated": False,
        "output_mapping": None,
        "success": True,
        "error": None,
        "error_kind": None,
        "completion": "",
        "logprob": 0.0,
        "tokens": [],
        "completions": [],
        "post_processed": None,
        "parse_error": None,
        "prompt_logprobs": None,
        "has_logprobs": False,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "latency_s": 0.0,
        "cached": False,
        "attempts": 1,
        "cost_usd": 0.0,
        "engine": "",
        "cache_key": "",
        "raw": None,
    }
    base.update(row)
    return base


def instance_row(
    instance_id: str, text: str, references: list[tuple[str, bool]], metadata: Mapping[str, Any], raw: Any = None
) -> dict[str, Any]:
    return {
        "instance_id": instance_id,
        "role": "eval",
        "split": "test",
        "sub_split": None,
        "perturbation": None,
        "perturbation_args": None,
        "robustness": False,
        "fairness": False,
        "input": text,
        "references": [
            {"output": out, "tags": ["correct"] if ok else [], "relevance": None, "first_stage_rank": None}
            for out, ok in references
        ],
        "continuation": None,
        "metadata": canonical_json(dict(metadata)),
        "raw": None if raw is None else canonical_json(raw),
    }


def per_instance_row(instance_id: str, metric: str, value: float, *, trial: int = 0) -> dict[str, Any]:
    return {
        "instance_id": instance_id,
        "trial": trial,
        "metric": metric,
        "split": "test",
        "sub_split": None,
        "perturbation": None,
        "value": value,
        "details": None,
        "raw": None,
    }
