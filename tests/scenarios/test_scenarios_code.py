"""The code scenarios read the authors' files; a problem whose tests do not parse is
reported at its line; without the sandbox a code run is refused before any model call."""

from __future__ import annotations

import gzip
import json
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from holistic.cli.run import main
from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioContext
from holistic.metrics import sandbox as sandbox_module
from holistic.scenarios.humaneval import HumanEvalScenario, read_humaneval

PROBLEM = {
    "task_id": "HumanEval/0",
    "prompt": 'def add(a, b):\n    """Sum."""\n',
    "canonical_solution": "    return a + b\n",
    "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n",
    "entry_point": "add",
}


def _write_humaneval(folder: Path, rows: list[dict[str, str]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "HumanEval.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row) + "\n")
    return path


def test_real_humaneval_has_164_problems_in_helms_form(data_root: Path) -> None:
    instances = HumanEvalScenario().get_instances(ScenarioContext(data_root=data_root, offline=True))
    assert len(instances) == 164
    first = instances[0]
    assert first.id == "HumanEval_0" and first.split == "test"
    assert first.input.startswith("from typing import List\n\n\ndef has_close_elements(")
    assert first.metadata["entry_point"] == "has_close_elements"
    assert first.metadata["test"].lstrip().startswith("METADATA") or "def check(candidate)" in first.metadata["test"]
    assert first.references[0].is_correct


def test_helms_adaptation_is_the_default() -> None:
    adapter = HumanEvalScenario.info.default_adapter
    assert adapter["max_train_instances"] == 0 and adapter["temperature"] == 0.2 and adapter["max_tokens"] == 600
    assert adapter["stop_sequences"] == ("\nclass", "\ndef", "\nif", "\nprint")
    assert adapter["input_prefix"] == adapter["input_suffix"] == adapter["output_prefix"] == ""
    assert adapter["prompt_format"] == "plain"  # a completion: never wrapped in a chat template


def test_a_test_that_does_not_parse_is_reported_at_its_line(tmp_path: Path) -> None:
    broken = {**PROBLEM, "task_id": "HumanEval/1", "test": "def check(candidate):\n    assert candidate(1, 2) ==\n"}
    path = _write_humaneval(tmp_path, [PROBLEM, broken])
    with pytest.raises(DataSourceError) as err:
        read_humaneval(path, {})
    assert f"{path}:2:" in str(err.value)
    assert "the test of HumanEval/1 does not parse as Python" in str(err.value) and "its line 2" in str(err.value)


def test_a_missing_field_is_reported_at_its_line(tmp_path: Path) -> None:
    row = {k: v for k, v in PROBLEM.items() if k != "entry_point"}
    path = _write_humaneval(tmp_path, [PROBLEM, PROBLEM, row])
    with pytest.raises(DataSourceError, match=r":3: missing field 'entry_point'"):
        read_humaneval(path, {})


def test_the_limits_given_as_arguments_travel_with_every_problem(tmp_path: Path) -> None:
    path = _write_humaneval(tmp_path / "humaneval", [PROBLEM])
    scenario = HumanEvalScenario(timeout_s=1.5, memory_mb=256)
    (inst,) = read_humaneval(path, scenario.sandbox)
    assert inst.metadata["sandbox"] == {"timeout_s": 1.5, "memory_mb": 256}


SPEC = """
suite: code
models: [simple/echo]
runs:
  - scenario: humaneval
"""


@pytest.fixture
def host_path() -> Iterator[Path]:
    """A folder any user may read (bubblewrap is started as an unprivileged user under root)."""
    folder = Path(tempfile.mkdtemp(prefix="holistic-path-"))
    folder.chmod(0o755)
    yield folder
    for child in folder.iterdir():
        child.unlink()
    folder.rmdir()


@pytest.fixture
def fresh_probe() -> Iterator[None]:
    sandbox_module.sandbox_problem.cache_clear()
    yield
    sandbox_module.sandbox_problem.cache_clear()


@pytest.fixture
def code_run(tmp_path: Path, fresh_probe: None) -> tuple[list[str], Path]:
    """helm-run's arguments for a HumanEval run on a one-problem data root, and its output folder."""
    _write_humaneval(tmp_path / "data" / "humaneval", [PROBLEM])
    spec = tmp_path / "code.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    out = tmp_path / "out"
    return [str(spec), "--output-dir", str(out), "--data-root", str(tmp_path / "data")], out


def test_without_bubblewrap_a_code_run_exits_2_before_any_model_call(
    code_run: tuple[list[str], Path],
    host_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    args, out = code_run
    monkeypatch.setenv("PATH", str(host_path))  # no bwrap on it
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "bubblewrap ('bwrap') is not on PATH" in err and "never run outside it" in err
    assert not out.exists()  # nothing written, no request made (no cache either)

    assert main([*args, "--plan"]) == 0
    printed = capsys.readouterr().out
    assert "Not runnable yet" in printed and "bwrap" in printed


def test_with_user_namespaces_disabled_a_code_run_exits_2(
    code_run: tuple[list[str], Path],
    host_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    args, out = code_run
    # A bwrap that fails as it does on a kernel without unprivileged user namespaces.
    fake = host_path / "bwrap"
    fake.write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace, likely because the kernel does "
        "not allow non-privileged user namespaces.' >&2\nexit 1\n",
        encoding="utf-8",
    )
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH | stat.S_IRGRP | stat.S_IROTH)
    monkeypatch.setenv("PATH", f"{host_path}{os.pathsep}/usr/bin:/bin")
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "cannot create its namespaces here (user namespaces disabled?)" in err
    assert not out.exists()


def test_a_spec_without_code_scoring_runs_without_the_sandbox(
    tmp_path: Path, data_root: Path, host_path: Path, fresh_probe: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Asking only for efficiency: the completions are generated, nothing is executed.
    spec = tmp_path / "code.yaml"
    spec.write_text(SPEC + "    metrics: [efficiency]\n", encoding="utf-8")
    monkeypatch.setenv("PATH", str(host_path))
    out = tmp_path / "out"
    args = [str(spec), "--output-dir", str(out), "--data-root", str(data_root), "--limit", "2", "--quiet"]
    assert main(args) == 0
    assert (out / "code").is_dir()
