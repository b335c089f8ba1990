"""--executor ray on a real local Ray cluster: results equal the local executor's, a killed
worker loses nothing and repeats nothing, an unreachable --address is a quick clear error."""

from __future__ import annotations

import glob
import math
import os
import re
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from holistic.cli.run import main
from tests.cli.helm_run_helpers import REPO, call_count, cli_env, run_dirs, write_slow_models, write_spec

ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install 'holistic[ray]')")
psutil = pytest.importorskip("psutil")

pytestmark = pytest.mark.slow

TIMING = re.compile(r"runtime|per_second|latency")
"""Metrics and columns that measure time (they differ between any two executions)."""

RETRIEVAL = re.compile(r"runtime|per_second|latency|^cached$|^num_cached_requests$")
"""...and those that say where an answer came from (a retried task finds earlier answers cached)."""


@pytest.fixture(scope="module")
def call_log(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The simple model's call log, set before Ray starts so every worker inherits it."""
    log = tmp_path_factory.mktemp("ray-calls") / "calls.log"
    old = os.environ.get("HOLISTIC_SIMPLE_CALL_LOG")
    os.environ["HOLISTIC_SIMPLE_CALL_LOG"] = str(log)
    yield log
    if old is None:
        os.environ.pop("HOLISTIC_SIMPLE_CALL_LOG", None)
    else:
        os.environ["HOLISTIC_SIMPLE_CALL_LOG"] = old


@pytest.fixture(scope="module")
def cluster(call_log: Path) -> Iterator[None]:
    """A real two-CPU Ray cluster on this machine, for the whole module."""
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


def _table(path: Path, ignore: re.Pattern[str]) -> pa.Table:
    """A results table without the columns and metrics ``ignore`` matches, in a canonical row order."""
    table = pq.read_table(path)
    keep = [c for c in table.column_names if not ignore.search(c)]
    table = table.select(keep)
    if "metric" in keep:
        mask = [not ignore.search(m) for m in table.column("metric").to_pylist()]
        table = table.filter(pa.array(mask))
    return table.sort_by([(c, "ascending") for c in keep if pa.types.is_string(table.schema.field(c).type)])


def assert_same_results(a_suite: Path, b_suite: Path, ignore: re.Pattern[str] = TIMING) -> None:
    a_runs, b_runs = run_dirs(a_suite), run_dirs(b_suite)
    assert [p.name for p in a_runs] == [p.name for p in b_runs] and a_runs
    for a, b in zip(a_runs, b_runs, strict=True):
        names = sorted(Path(p).name for p in glob.glob(str(a / "*.parquet")))
        assert names == sorted(Path(p).name for p in glob.glob(str(b / "*.parquet")))
        for name in names:
            left, right = _table(a / name, ignore), _table(b / name, ignore)
            assert left.column_names == right.column_names, (a.name, name)
            for column in left.column_names:
                assert _same(left.column(column).to_pylist(), right.column(column).to_pylist()), (a.name, name, column)


def _same(a: object, b: object) -> bool:
    """Equal, bit for bit (NaN equals NaN): each run starts its engine afresh (``begin_run``),
    so nothing a worker served before can change a run's numbers."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


def test_quickstart_on_ray_equals_local(cluster: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The shipped quickstart suite, on the simple and the embedded model."""
    text = (REPO / "runspecs" / "quickstart.yaml").read_text(encoding="utf-8")
    text = re.sub(r"(?m)^models:.*$", "models: [simple/echo, embedded/smollm2-135m-instruct]", text)
    text = text.replace("path: data/", f"path: {REPO / 'runspecs' / 'data'}/")
    spec = tmp_path / "quickstart.yaml"
    spec.write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    common = [str(spec), "--max-eval-instances", "4", "--quiet"]
    assert main([*common, "--executor", "ray", "--output-dir", "ray-out", "--cache-dir", "ray-cache"]) == 0
    assert main([*common, "--output-dir", "local-out", "--cache-dir", "local-cache"]) == 0
    suites = [p.name for p in (tmp_path / "ray-out").iterdir() if p.is_dir() and p.name != "cache"]
    assert suites == ["quickstart"]
    models = {
        pq.read_table(p).column("model")[0].as_py()
        for p in glob.glob(str(tmp_path / "ray-out/quickstart/runs/*/stats.parquet"))
    }
    assert models == {"simple/echo", "embedded/smollm2-135m-instruct"}
    assert_same_results(tmp_path / "ray-out" / "quickstart", tmp_path / "local-out" / "quickstart")


def _task_workers() -> list[Any]:
    """Ray worker processes busy with a run (Ray titles them after the task function)."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = " ".join(proc.info.get("cmdline") or ())
        if cmdline.startswith("ray::ray_task"):
            found.append(proc)
    return found


def test_killed_worker_is_retried_without_repeating_requests(
    cluster: None, call_log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    spec = write_spec(tmp_path, models=("simple/slow",), max_eval=12)
    models = write_slow_models(tmp_path, 0.1)
    call_log.write_text("", encoding="utf-8")
    args = [str(spec), "--models-file", str(models), "--batch-size", "1", "--quiet"]
    outcome: dict[str, int] = {}
    runner = threading.Thread(
        target=lambda: outcome.setdefault("code", main([*args, "--executor", "ray", "--output-dir", "ray-out"]))
    )
    runner.start()
    deadline = time.monotonic() + 240
    while call_count(call_log) < 4 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert call_count(call_log) >= 4, "the runs never started"
    time.sleep(0.05)  # half a request's delay: the kill lands while a request is being computed
    victims = _task_workers()
    assert victims, "no Ray worker was running a run"
    victims[0].send_signal(signal.SIGKILL)
    runner.join(timeout=300)
    assert not runner.is_alive() and outcome["code"] == 0

    import sqlite3

    with sqlite3.connect(tmp_path / "ray-out" / "cache" / "requests.sqlite") as db:
        cached = db.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    assert call_count(call_log) == cached  # every request computed exactly once

    assert main([*args, "--output-dir", "local-out", "--no-cache"]) == 0
    assert_same_results(tmp_path / "ray-out" / "tiny", tmp_path / "local-out" / "tiny", RETRIEVAL)


def test_unreachable_address_is_exit_2_naming_it(tmp_path: Path) -> None:
    import socket
    import subprocess
    import sys

    with socket.socket() as holder:  # a loopback port bound but not listening: nothing answers there
        holder.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{holder.getsockname()[1]}"
        spec = write_spec(tmp_path)
        start = time.monotonic()
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "holistic.cli.run",
                str(spec),
                "--output-dir",
                str(tmp_path / "out"),
                "--executor",
                "ray",
                "--address",
                address,
            ],
            capture_output=True,
            text=True,
            env=cli_env(tmp_path / "calls.log"),
            timeout=120,
        )
        elapsed = time.monotonic() - start
    assert proc.returncode == 2, proc.stderr
    assert elapsed < 30
    assert address in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "out" / "tiny" / "runs").exists()


def test_ray_writes_to_a_file_uri_as_the_local_executor_writes_to_a_path(
    cluster: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    spec = write_spec(tmp_path, digits=(1,), max_eval=4)
    common = [str(spec), "--quiet", "--no-cache"]
    assert main([*common, "--executor", "ray", "--output-dir", (tmp_path / "ray-uri").as_uri()]) == 0
    assert main([*common, "--output-dir", "local-out"]) == 0
    assert_same_results(tmp_path / "ray-uri" / "tiny", tmp_path / "local-out" / "tiny")
