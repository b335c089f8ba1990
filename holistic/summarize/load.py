"""Read a suite's completed runs from the Parquet store (documented schema only)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from holistic.core.errors import StoreError

COMPLETE_MARKER = "_COMPLETE"


@dataclass(frozen=True)
class RunInfo:
    """What the summary needs to know about one completed run."""

    run_id: str
    name: str
    scenario: str
    scenario_args: dict[str, Any]
    model: str
    method: str
    groups: tuple[str, ...]
    main_metric: str | None
    spec: dict[str, Any]


@dataclass
class SuiteData:
    suite: str
    suite_dir: Path
    suite_meta: dict[str, Any]
    runs: list[RunInfo]
    stats: pa.Table
    """Every run's stats.parquet, concatenated."""


def completed_run_dirs(suite_dir: Path) -> list[Path]:
    runs_dir = suite_dir / "runs"
    if not runs_dir.is_dir():
        return []
    return sorted(p for p in runs_dir.iterdir() if (p / COMPLETE_MARKER).exists())


def _run_info(run_dir: Path) -> RunInfo:
    spec = json.loads((run_dir / "run_spec.json").read_text(encoding="utf-8"))
    # run_spec.json holds RunSpec.canonical() plus run facts written by the runner.
    scenario = spec.get("scenario", {})
    adapter = spec.get("adapter", {})
    return RunInfo(
        run_id=spec.get("run_id", run_dir.name),
        name=spec.get("name", run_dir.name),
        scenario=scenario.get("name", "?"),
        scenario_args=dict(scenario.get("args", {})),
        model=spec.get("model", "?"),
        method=adapter.get("method", "generation"),
        groups=tuple(spec.get("groups", []) or []),
        main_metric=spec.get("main_metric") or (spec.get("scenario_info") or {}).get("main_metric"),
        spec=spec,
    )


def load_suite(suite_dir: Path) -> SuiteData:
    """Load run facts and all stats of the suite's completed runs."""
    meta_path = suite_dir / "suite.json"
    if not meta_path.exists():
        raise StoreError(f"{suite_dir}: not a suite directory (no suite.json); run helm-run first")
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    run_dirs = completed_run_dirs(suite_dir)
    runs = [_run_info(d) for d in run_dirs]
    files = [str(d / "stats.parquet") for d in run_dirs if (d / "stats.parquet").exists()]
    stats = ds.dataset(files, format="parquet").to_table() if files else pa.table({})
    return SuiteData(suite=meta.get("suite", suite_dir.name), suite_dir=suite_dir, suite_meta=meta, runs=runs, stats=stats)


def per_instance_values(suite_dir: Path, run_ids: list[str], metrics: list[str]) -> pa.Table:
    """Per-instance rows of the given runs and metrics (only the columns the bootstrap needs)."""
    files = [
        str(suite_dir / "runs" / rid / "per_instance_stats.parquet")
        for rid in run_ids
        if (suite_dir / "runs" / rid / "per_instance_stats.parquet").exists()
    ]
    if not files or not metrics:
        return pa.table({})
    dataset = ds.dataset(files, format="parquet")
    names = set(dataset.schema.names)
    cols = [c for c in ("run_id", "instance_id", "trial", "metric", "split", "perturbation", "value") if c in names]
    flt = pc.field("metric").isin(metrics)
    return dataset.to_table(columns=cols, filter=flt)


def eval_references(run_dir: Path) -> dict[str, list[list[tuple[str, bool]]]]:
    """Split -> each evaluated original instance's references as ``(output, correct)``
    pairs, in instance-id order (perturbed variants and in-context examples left out)."""
    path = run_dir / "instances.parquet"
    if not path.exists():
        return {}
    table = ds.dataset(str(path), format="parquet").to_table(
        columns=["instance_id", "role", "split", "perturbation", "references"]
    )
    rows = sorted(
        (r for r in table.to_pylist() if r["role"] == "eval" and not r["perturbation"]),
        key=lambda r: r["instance_id"],
    )
    out: dict[str, list[list[tuple[str, bool]]]] = {}
    for r in rows:
        refs = [(str(ref["output"]), "correct" in (ref["tags"] or [])) for ref in r["references"] or []]
        out.setdefault(r["split"] or "test", []).append(refs)
    return out
