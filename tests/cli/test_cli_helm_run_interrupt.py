"""Interrupted helm-run (Ctrl-C, kill -9): the same command again completes the suite,
asking the model only what was not cached, and no partial file passes for a whole one."""

from __future__ import annotations

import glob
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pyarrow.dataset as ds
import pytest

from tests.cli.helm_run_helpers import (
    assert_no_parquet_looks_complete_but_is_not,
    call_count,
    helm_run_process,
    run_dirs,
    write_slow_models,
    write_spec,
)

BATCH = 4


def _wait_for_calls(proc: subprocess.Popen[str], log: Path, at_least: int, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while call_count(log) < at_least:
        if proc.poll() is not None:
            raise AssertionError(f"helm-run ended before the interrupt: {proc.communicate()}")
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError("helm-run made no progress")
        time.sleep(0.05)


def _cached_rows(cache: Path) -> int:
    conn = sqlite3.connect(cache)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM results").fetchone()[0])
    finally:
        conn.close()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["sigint", "sigkill"])
def test_interrupted_run_resumes_without_repeating_cached_requests(tmp_path: Path, sig: signal.Signals) -> None:
    spec = write_spec(tmp_path, models=("simple/slow",), digits=(1, 2), num_test=40, max_eval=30)
    models = write_slow_models(tmp_path, delay_s=0.03)
    out = tmp_path / "out"
    log = tmp_path / "calls.log"
    args = [str(spec), "--output-dir", str(out), "--models-file", str(models), "--batch-size", str(BATCH)]

    proc = helm_run_process(args, log, tmp_path)
    _wait_for_calls(proc, log, at_least=3 * BATCH)
    proc.send_signal(sig)
    _, stderr = proc.communicate(timeout=60)
    if sig == signal.SIGINT:
        assert proc.returncode == 130, stderr
        assert "interrupted" in stderr and "Traceback" not in stderr
    else:
        assert proc.returncode == -signal.SIGKILL

    suite_dir = out / "tiny"
    assert len([d for d in run_dirs(suite_dir) if (d / "_COMPLETE").exists()]) < 2
    assert_no_parquet_looks_complete_but_is_not(suite_dir)
    if sig == signal.SIGINT:  # a clean interrupt removes its temporaries
        assert not glob.glob(str(suite_dir / "runs" / "*" / ".*.tmp"))
    first_calls = call_count(log)
    cached = _cached_rows(out / "cache" / "requests.sqlite")
    assert cached >= 2 * BATCH
    assert 0 <= first_calls - cached <= BATCH  # at most the in-flight batch was lost

    again = helm_run_process(args, log, tmp_path)
    _, stderr = again.communicate(timeout=300)
    assert again.returncode == 0, stderr
    dirs = run_dirs(suite_dir)
    assert len(dirs) == 2 and all((d / "_COMPLETE").exists() for d in dirs)
    assert not glob.glob(str(suite_dir / "runs" / "*" / ".*.tmp"))
    requests = ds.dataset(glob.glob(str(suite_dir / "runs" / "*" / "requests.parquet"))).to_table()
    unique = len(set(requests.column("cache_key").to_pylist()))
    # the second run asked the model exactly what the cache did not have
    assert call_count(log) - first_calls == unique - cached
    assert sum(requests.column("cached").to_pylist()) >= cached
