"""Fault injection: kill helm-run (SIGKILL) at random points, again and again; the
final results equal an uninterrupted run's, and no answer the cache already held is
asked of the model again (only a batch in flight at the moment of a kill is lost)."""

from __future__ import annotations

import random
import signal
import time
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq

from holistic.results import SuiteReader
from tests.cli.helm_run_helpers import call_count, helm_run_process, run_dirs, write_slow_models, write_spec

BATCH = 2
KILLS = 5
TIMING = {"latency_s", "cached", "attempts", "cost_usd"}


def _results(suite_dir: Path) -> dict[str, object]:
    """Every table of every run, timing columns and efficiency statistics left out, rows sorted."""
    reader = SuiteReader(suite_dir)
    out: dict[str, object] = {}
    for run in reader.runs:
        stats = run.table("stats").to_pylist()
        timing_metrics = {s["metric"] for s in stats if s["category"] == "efficiency"}
        for name in ("instances", "requests", "per_instance_stats", "stats"):
            rows = pq.read_table(run.table_path(name)).to_pylist()
            rows = [
                {k: v for k, v in r.items() if k not in TIMING} for r in rows if r.get("metric") not in timing_metrics
            ]
            out[f"{run.run_id}/{name}"] = sorted(repr(sorted(r.items())) for r in rows)
    return out


def test_killed_again_and_again_the_suite_ends_as_if_never_interrupted(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, models=("simple/slow",), digits=(1, 2), num_test=20, max_eval=10)
    models = write_slow_models(tmp_path, delay_s=0.01)
    reference_log, log = tmp_path / "ref.log", tmp_path / "calls.log"

    ref = helm_run_process(
        [str(spec), "--output-dir", str(tmp_path / "ref"), "--models-file", str(models)], reference_log, tmp_path
    )
    _, err = ref.communicate(timeout=300)
    assert ref.returncode == 0, err

    args = [str(spec), "--output-dir", str(tmp_path / "out"), "--models-file", str(models), "--batch-size", str(BATCH)]
    rng = random.Random(16)
    kills = 0
    for _ in range(KILLS):
        proc = helm_run_process(args, log, tmp_path)
        target = call_count(log) + rng.randint(1, 8)
        while call_count(log) < target and proc.poll() is None:
            time.sleep(0.005)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.communicate(timeout=60)
    assert kills >= 2
    final = helm_run_process(args, log, tmp_path)
    _, err = final.communicate(timeout=300)
    assert final.returncode == 0, err

    assert all((d / "_COMPLETE").exists() for d in run_dirs(tmp_path / "out" / "tiny"))
    assert _results(tmp_path / "out" / "tiny") == _results(tmp_path / "ref" / "tiny")
    asked = Counter(line.split("\t")[2] for line in log.read_text().splitlines())
    reference = Counter(line.split("\t")[2] for line in reference_log.read_text().splitlines())
    assert set(asked) == set(reference)
    repeated = sum(n - 1 for n in asked.values())
    assert repeated <= kills * BATCH  # at most the batch in flight when each kill landed
