"""helm-import on hostile HELM run folders, each case in a process under a 1.5 GB address-space cap
and a CPU deadline: exit 2 naming the file and the field, never a traceback, no suite left behind,
nothing read from outside the folder, nothing printed raw to the terminal; a killed import leaves
pending runs that helm-summarize reports."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "helm_runs" / "fixtures"
MMLU = next(p for p in FIXTURES.iterdir() if p.name.startswith("mmlu:"))
ADDRESS_SPACE = 1536 << 20
CPU_SECONDS = 60


def _limits() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS))


def _capped(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    # one BLAS thread: each thread's buffers would count against the cap
    env = {**os.environ, "PYTHONPATH": str(REPO), "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env=env,
        preexec_fn=_limits,
        timeout=CPU_SECONDS * 3,
        cwd=REPO,
    )


_IMPORT = "import sys; from holistic.cli.helm_import import main; sys.exit(main(sys.argv[1:]))"


def _import(source: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return _capped(_IMPORT, str(source), "--suite", "hostile", "--output-dir", str(out))


def _edit(tmp_path: Path, name: str, change: Callable[[Any], Any]) -> Path:
    run = tmp_path / "src" / MMLU.name
    shutil.copytree(MMLU, run)
    data = json.loads((run / name).read_text(encoding="utf-8"))
    data = change(data) or data
    (run / name).write_text(json.dumps(data), encoding="utf-8")  # NaN and Infinity as Python writes them
    return run


def _nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


def _state(i: int, *path: str, value: Any) -> Callable[[Any], None]:
    def change(data: Any) -> None:
        target = data["request_states"][i]
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


def _stat(**fields: Any) -> Callable[[Any], None]:
    def change(data: Any) -> None:
        data[0].update(fields)

    return change


def _model(name: str) -> Callable[[Any], None]:
    def change(data: Any) -> None:
        data["adapter_spec"]["model"] = name
        data["adapter_spec"]["model_deployment"] = name

    return change


def _same_id(data: Any) -> None:
    data["request_states"][1]["instance"]["id"] = data["request_states"][0]["instance"]["id"]


CASES: dict[str, tuple[str, Callable[[Any], Any], str]] = {
    "nested_input": (
        "scenario_state.json",
        _state(0, "instance", "input", value=_nested(500)),
        "nested deeper than 64",
    ),
    "nested_json_text": ("scenario_state.json", lambda d: None, "nested"),  # written below as raw text
    "400_digit_integer": ("scenario_state.json", _state(0, "request", "max_tokens", value=10**400), "64-bit"),
    "infinite_max_tokens": (
        "scenario_state.json",
        _state(0, "request", "max_tokens", value=float("inf")),
        "request_states[0].request.max_tokens: inf is not a finite number",
    ),
    "completions_a_dict": (
        "scenario_state.json",
        _state(0, "result", "completions", value={"text": "A"}),
        "request_states[0].result.completions: expected a list",
    ),
    "duplicate_instance_id": ("scenario_state.json", _same_id, "names two different instances"),
    "nan_stat": ("stats.json", _stat(mean=float("nan")), "[0].mean: nan is not a finite number"),
    "infinite_stat": ("stats.json", _stat(sum=float("inf")), "[0].sum: inf is not a finite number"),
    "contradictory_counts": ("stats.json", _stat(count=0, sum=5.0), "count: 0 values cannot sum to 5.0"),
    "mean_not_sum_over_count": ("stats.json", _stat(count=2, sum=1.0, mean=0.9), "contradicts sum / count"),
    "bidi_model_name": ("run_spec.json", _model("acme/\u202e4-tpg-ianepo"), "U+202E"),
    "nul_model_name": ("run_spec.json", _model("acme/gpt\x00"), "U+0000"),
    "html_model_name": ("run_spec.json", _model("acme/<img src=x onerror=alert(1)>"), "markup"),
    "escape_code_run_name": ("run_spec.json", lambda d: d.update(name="\x1b[2J\x1b[31mevil"), "U+001B"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_hostile_value_is_exit_2_naming_the_file_and_field(case: str, tmp_path: Path) -> None:
    name, change, expected = CASES[case]
    run = _edit(tmp_path, name, change)
    if case == "nested_json_text":  # deeper than Python's parser recurses
        text = (run / name).read_text(encoding="utf-8")
        (run / name).write_text(text.replace('"input": ', '"input": ' + "[" * 200_000 + "]" * 200_000 + ', "x": ', 1))
    out = tmp_path / "out"
    done = _import(run, out)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert str(run / name) in done.stderr and expected in done.stderr, done.stderr
    assert "\x1b" not in done.stderr and "\u202e" not in done.stderr and "\x00" not in done.stderr
    assert not (out / "hostile").exists()  # no half-written suite: a rerun needs no --force


def test_a_symlink_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    run = tmp_path / "src" / MMLU.name
    shutil.copytree(MMLU, run)
    secret = tmp_path / "secret.txt"
    secret.write_text("not HELM's")
    (run / "scenario.json").unlink()
    (run / "scenario.json").symlink_to(secret)
    done = _import(run, tmp_path / "out")
    assert done.returncode == 2 and "symbolic link" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("run_spec.json"))


_KILLED = """
import os, signal, sys
from holistic.helm.imports import importer
real = importer.import_run
calls = []
def killed(*args, **kwargs):
    calls.append(1)
    if len(calls) == 2:
        os.kill(os.getpid(), signal.SIGKILL)
    return real(*args, **kwargs)
importer.import_run = killed
from holistic.cli.helm_import import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_killed_import_leaves_pending_runs_that_summarize_reports(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = _capped(_KILLED, str(FIXTURES), "--suite", "killed", "--output-dir", str(out))
    assert done.returncode == -9
    entries = json.loads((out / "killed" / "suite.json").read_text())["runs"]
    assert sorted(e["status"] for e in entries) == ["complete", "pending"]
    summarize = "import sys; from holistic.cli.summarize import main; sys.exit(main(sys.argv[1:]))"
    summary = _capped(summarize, "--suite", "killed", "--output-dir", str(out))
    assert summary.returncode not in (0, 70), summary.stderr
    assert "pending" in summary.stdout + summary.stderr
