"""Behaviour is unchanged: the quickstart suite on the ``simple`` model writes the same Parquet results.

The golden (``golden/quickstart_simple.json.gz``) holds every row of every results table of every
run, value for value, except what measures time (``latency_s`` and the runtime/throughput metrics).
A column added to the results schema since then passes while it is null in every row. Regenerate
the golden only for a change meant to alter results::

    HOLISTIC_UPDATE_GOLDEN=1 python -m pytest tests/results/test_results_golden_quickstart.py
"""

from __future__ import annotations

import gzip
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from holistic.results import SuiteReader

REPO = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parent / "golden" / "quickstart_simple.json.gz"
TABLES = ("instances", "requests", "per_instance_stats", "stats")
TIMING_COLUMNS = frozenset({"latency_s"})
TIMING_METRIC_WORDS = ("runtime", "per_second")
"""Metrics that measure wall-clock time: their values differ on every run."""
STAT_VALUE_COLUMNS = ("value", "sum", "sum_sq", "min", "max", "mean", "stddev", "ci_low", "ci_high", "trial_stddev")


def _canonical(value: Any) -> Any:
    """JSON-comparable: NaN spelled out (NaN != NaN), nested rows sorted by key."""
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in sorted(value.items())}
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    if isinstance(value, bytes):
        return value.hex()
    return value


def _row(table: str, row: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in row.items() if k not in TIMING_COLUMNS}
    metric = row.get("metric")
    timing = isinstance(metric, str) and any(word in metric for word in TIMING_METRIC_WORDS)
    if table in ("stats", "per_instance_stats") and timing:
        for column in STAT_VALUE_COLUMNS:
            out.pop(column, None)
    return _canonical(out)  # type: ignore[no-any-return]


def suite_snapshot(suite_dir: Path, *, with_annotations: bool = False) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """Every results row of every run, by run id and table, timing aside."""
    reader = SuiteReader(suite_dir)
    tables = (*TABLES, "annotations") if with_annotations else TABLES
    return {
        run.run_id: {table: [_row(table, r) for r in run.table(table).to_pylist()] for table in tables}
        for run in sorted(reader.runs, key=lambda r: r.run_id)
    }


def assert_same_snapshot(snapshot: dict[str, Any], golden: dict[str, Any]) -> None:
    """Every golden row is in ``snapshot`` value for value; a column added since is null (or false) everywhere."""
    assert sorted(snapshot) == sorted(golden), "the run ids changed"
    for run_id, tables in golden.items():
        for table, rows in tables.items():
            got = snapshot[run_id][table]
            assert len(got) == len(rows), f"{run_id}/{table}: {len(got)} rows, golden has {len(rows)}"
            for i, (row, want) in enumerate(zip(got, rows, strict=True)):
                # A column added since the golden was written is no change while it is null (or
                # false) everywhere (a column for a feature this suite does not use).
                added = sorted(c for c in set(row) - set(want) if row[c] is not None and row[c] is not False)
                assert not added and set(want) <= set(row), f"{run_id}/{table} row {i}: columns changed {added}"
                for column, value in want.items():
                    assert row[column] == value, (
                        f"{run_id}/{table} row {i} column {column!r}: {row[column]!r} != {value!r}"
                    )


def _run_quickstart_on_simple(folder: Path) -> Path:
    spec = (REPO / "runspecs" / "quickstart.yaml").read_text(encoding="utf-8")
    spec = spec.replace("models: [embedded/smollm2-135m-instruct]", "models: [simple/echo]")
    assert "simple/echo" in spec, "the quickstart spec no longer names its model on one line"
    (folder / "spec.yaml").write_text(spec, encoding="utf-8")
    shutil.copytree(REPO / "runspecs" / "data", folder / "data")
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run(
        [sys.executable, "-m", "holistic.cli.run", "spec.yaml", "--output-dir", "out", "--no-cache", "--quiet"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    return folder / "out" / "quickstart"


def test_quickstart_on_simple_writes_the_golden_results(tmp_path: Path) -> None:
    snapshot = suite_snapshot(_run_quickstart_on_simple(tmp_path))
    if os.environ.get("HOLISTIC_UPDATE_GOLDEN") == "1":
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(snapshot, sort_keys=True, indent=0, ensure_ascii=False)
        GOLDEN.write_bytes(gzip.compress(text.encode("utf-8"), mtime=0))
    golden = json.loads(gzip.decompress(GOLDEN.read_bytes()).decode("utf-8"))
    assert_same_snapshot(snapshot, golden)
