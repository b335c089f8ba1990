"""--executor ray dispatches one task per run; results equal the local executor's.

Ray itself is not needed here: a stand-in module runs each task in-process, which
checks the dispatch path (task arguments are picklable, absolute paths, one report
per run, suite.json written by the driver)."""

from __future__ import annotations

import pickle
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from helm_run_helpers import run_dirs, write_spec

from holistic.cli.run import main


class _Ref:
    def __init__(self, value: Any) -> None:
        self.value = value


def _fake_ray(calls: list[tuple[Any, ...]]) -> types.ModuleType:
    ray = types.ModuleType("ray")

    def remote(fn: Callable[..., Any]) -> Any:
        def submit(*args: Any) -> _Ref:
            args = pickle.loads(pickle.dumps(args))  # what crossing to a worker requires
            calls.append(args)
            return _Ref(fn(*args))

        return types.SimpleNamespace(remote=submit)

    ray.is_initialized = lambda: False  # type: ignore[attr-defined]
    ray.init = lambda **kwargs: None  # type: ignore[attr-defined]
    ray.remote = remote  # type: ignore[attr-defined]
    ray.wait = lambda refs, num_returns=1: (refs[:num_returns], refs[num_returns:])  # type: ignore[attr-defined]
    ray.get = lambda ref: ref.value  # type: ignore[attr-defined]
    ray.cancel = lambda ref: None  # type: ignore[attr-defined]
    return ray


def test_ray_executor_writes_the_same_results_as_local(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls: list[tuple[Any, ...]] = []
    monkeypatch.setitem(sys.modules, "ray", _fake_ray(calls))
    spec = write_spec(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main([str(spec), "--output-dir", "ray-out", "--executor", "ray", "--no-cache"]) == 0
    assert "2 runs written" in capsys.readouterr().out
    assert len(calls) == 2
    assert all(args[2].output_dir.is_absolute() for args in calls)
    assert main([str(spec), "--output-dir", "local-out", "--quiet", "--no-cache"]) == 0
    for a, b in zip(run_dirs(tmp_path / "ray-out" / "tiny"), run_dirs(tmp_path / "local-out" / "tiny"), strict=True):
        assert a.name == b.name and (a / "_COMPLETE").exists()
        cols = ["run_id", "metric", "perturbation", "count"]
        assert pq.read_table(a / "stats.parquet").select(cols).equals(pq.read_table(b / "stats.parquet").select(cols))
        assert (
            pq.read_table(a / "requests.parquet").column("prompt").to_pylist()
            == pq.read_table(b / "requests.parquet").column("prompt").to_pylist()
        )
