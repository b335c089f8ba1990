"""Fault injection: kill helm-run (SIGKILL) at random points, again and again; the
final results equal an uninterrupted run's, and no answer the cache already held is
asked of the model again (only a batch in flight at the moment of a kill is lost).

And a hostile server on 127.0.0.1 (:mod:`tests.cli.hostile_server`): answers that cannot be
stored (a lone surrogate, a count of 10**30, NaN and Infinity log-probabilities) are failed
requests, never cached, and a rerun against a fixed server completes the suite; a trickling
body, a trickling status line and headers, an endless chunked body and a claimed 2 GiB Content-Length each fail within the
request's deadline under a 1.5 GB address-space cap; Ctrl-C and SIGTERM stop requests in
flight within seconds and leave the suite resumable."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from holistic.results import SuiteReader
from tests.cli.helm_run_helpers import (
    call_count,
    capped,
    cli_env,
    helm_run_process,
    interruptible,
    run_dirs,
    write_slow_models,
    write_spec,
)
from tests.cli.hostile_server import HostileServer

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


# -- a hostile server ---------------------------------------------------------------------------


def _hostile_env(tmp_path: Path) -> dict[str, str]:
    env = cli_env(tmp_path / "calls.log")
    env["OPENAI_API_KEY"] = "sk-test-not-a-real-key"
    return env


def _request_errors(suite_dir: Path) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for run in run_dirs(suite_dir):
        rows = pq.read_table(run / "requests.parquet", columns=["model", "success", "error"]).to_pylist()
        for row in rows:
            assert not row["success"], row
            out.setdefault(row["model"], set()).add(row["error"])
    return out


def _cached_rows(out: Path) -> int:
    conn = sqlite3.connect(out / "cache" / "requests.sqlite")
    try:
        return int(conn.execute("SELECT COUNT(*) FROM results").fetchone()[0])
    finally:
        conn.close()


def _hostile_suite(tmp_path: Path, server: HostileServer, modes: tuple[str, ...], timeout_s: float = 2.0) -> list[str]:
    models = server.models_file(tmp_path / "hostile.yaml", timeout_s=timeout_s)
    spec = write_spec(
        tmp_path, models=tuple(f"hostile/{m}" for m in modes), digits=(1,), max_eval=2, metrics=("accuracy",)
    )
    spec.write_text(spec.read_text().replace("max_train_instances: 2", "max_train_instances: 0"))
    return [str(spec), "--output-dir", str(tmp_path / "out"), "--models-file", str(models)]


def test_answers_that_cannot_be_stored_are_failed_requests_never_cached(tmp_path: Path) -> None:
    with HostileServer() as server:
        args = _hostile_suite(tmp_path, server, ("surrogate", "huge_count", "nan", "infinity"))
        first = capped("holistic.cli.run", args, tmp_path, env=_hostile_env(tmp_path))
        assert first.returncode == 3, first.stdout + first.stderr  # every run written, with failed requests
        assert "Traceback" not in first.stderr
        errors = _request_errors(tmp_path / "out" / "tiny")
        assert set(errors) == {"hostile/surrogate", "hostile/huge_count", "hostile/nan", "hostile/infinity"}
        assert all(any("cannot be used" in e for e in errs) for errs in errors.values()), errors
        assert any("not Unicode" in e for e in errors["hostile/surrogate"])
        assert any("prompt_tokens" in e for e in errors["hostile/huge_count"])
        assert any("not a finite number" in e for e in errors["hostile/nan"] | errors["hostile/infinity"])
        assert _cached_rows(tmp_path / "out") == 0  # nothing poisoned

        server.heal()
        again = capped("holistic.cli.run", args, tmp_path, env=_hostile_env(tmp_path))
        assert again.returncode == 0, again.stdout + again.stderr
        assert all((d / "_COMPLETE").exists() for d in run_dirs(tmp_path / "out" / "tiny"))


def test_trickling_endless_and_huge_answers_fail_within_the_deadline(tmp_path: Path) -> None:
    with HostileServer() as server:
        # 6 s: time enough to read 64 MiB from 127.0.0.1 on a busy machine, far less than the trickle needs
        modes = ("trickle", "trickle_headers", "endless", "huge_length")
        args = _hostile_suite(tmp_path, server, modes, timeout_s=6)
        first = capped("holistic.cli.run", args, tmp_path, env=_hostile_env(tmp_path))
        assert first.returncode == 3, first.stdout + first.stderr
        errors = _request_errors(tmp_path / "out" / "tiny")
        for run in run_dirs(tmp_path / "out" / "tiny"):  # each request gave up within its 6 s deadline
            latencies = pq.read_table(run / "requests.parquet", columns=["latency_s"]).column(0).to_pylist()
            assert max(latencies) < 6 + 3, latencies
        assert any("timed out" in e for e in errors["hostile/trickle"]), errors
        assert any("timed out" in e for e in errors["hostile/trickle_headers"]), errors
        assert any("larger than 67,108,864 bytes" in e for e in errors["hostile/endless"]), errors
        assert any("claims 2,147,483,648 bytes" in e for e in errors["hostile/huge_length"]), errors
        server.heal()
        again = capped("holistic.cli.run", args, tmp_path, env=_hostile_env(tmp_path))
        assert again.returncode == 0, again.stdout + again.stderr


def test_headers_trickling_in_hit_the_deadline_of_each_attempt_and_are_retried(tmp_path: Path) -> None:
    """A status line and headers sent one byte every half second never trip a per-read timeout:
    each attempt still ends at its ``timeout_s``, the request is retried per its policy, then
    recorded as failed and never cached."""
    with HostileServer() as server:
        models = server.models_file(tmp_path / "hostile.yaml", timeout_s=2, max_attempts=2)
        spec = write_spec(tmp_path, models=("hostile/trickle_headers",), digits=(1,), max_eval=1, metrics=("accuracy",))
        spec.write_text(spec.read_text().replace("max_train_instances: 2", "max_train_instances: 0"))
        args = [str(spec), "--output-dir", str(tmp_path / "out"), "--models-file", str(models)]
        first = capped("holistic.cli.run", args, tmp_path, env=_hostile_env(tmp_path), timeout=60)
        assert first.returncode == 3, first.stdout + first.stderr
        assert "Traceback" not in first.stderr
        (run,) = run_dirs(tmp_path / "out" / "tiny")
        (row,) = pq.read_table(
            run / "requests.parquet", columns=["success", "error", "attempts", "latency_s"]
        ).to_pylist()
        assert not row["success"] and "timed out" in row["error"], row
        assert row["attempts"] == 2 and server.requests == 2, row
        assert row["latency_s"] < 2 * 2 + 5, row  # two attempts of 2 s and a backoff, not 8,000 s of headers
        assert _cached_rows(tmp_path / "out") == 0


@pytest.mark.parametrize(
    ("sig", "mode", "jobs"),
    [
        (signal.SIGINT, "trickle", []),
        (signal.SIGTERM, "trickle", []),
        (signal.SIGINT, "silent", ["-j", "4", "--batch-size", "1"]),
    ],
    ids=["sigint", "sigterm", "sigint-j4-silent"],
)
def test_an_interrupt_stops_requests_to_a_trickling_server_within_seconds(
    tmp_path: Path, sig: signal.Signals, mode: str, jobs: list[str]
) -> None:
    """With ``-j 4`` each request is its own batch on its own thread, stuck on a server that never
    answers: the process must not wait for those threads on its way out."""
    with HostileServer() as server:
        args = _hostile_suite(tmp_path, server, ("ok", mode), timeout_s=600)
        proc = subprocess.Popen(
            [sys.executable, "-m", "holistic.cli.run", *args, *jobs],
            cwd=tmp_path,
            env=_hostile_env(tmp_path),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=interruptible,
        )
        deadline = time.monotonic() + 120
        while server.requests < 4:  # the ok run's 2 requests, then both of the trickling run's in flight
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "helm-run never reached the trickling server"
            time.sleep(0.05)
        time.sleep(1.0)
        os.kill(proc.pid, sig)
        stopped = time.monotonic()
        _, err = proc.communicate(timeout=60)
        assert time.monotonic() - stopped < 10, err  # seconds, not the 40 s of a pool joining its threads
        assert proc.returncode == 130 and "interrupted" in err and "Traceback" not in err, err
        done = [d for d in run_dirs(tmp_path / "out" / "tiny") if (d / "_COMPLETE").exists()]
        assert len(done) == 1  # what was complete is written

        server.heal()
        again = capped("holistic.cli.run", args, tmp_path, env=_hostile_env(tmp_path))
        assert again.returncode == 0, again.stdout + again.stderr
        assert "1 already complete" in again.stdout
