"""helm-run ends by telling the user what happened: each run's headline score and interval."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from holistic.cli.run import main
from tests.cli.helm_run_helpers import run_dirs, write_spec


def test_helm_run_prints_each_runs_headline_score_with_its_interval(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_spec(tmp_path, metrics=("accuracy",))
    out = tmp_path / "out"
    assert main([str(spec), "--output-dir", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "scores (main metric, 95% bootstrap interval over instances):" in printed
    for run_dir in run_dirs(out / "tiny"):
        (row,) = [
            r
            for r in pq.read_table(run_dir / "stats.parquet").to_pylist()
            if r["metric"] == "exact_match" and r["perturbation"] is None and r["sub_split"] is None
        ]
        score = f"  exact_match {row['mean']:.3f} [{row['ci_low']:.3f}, {row['ci_high']:.3f}] (test, n=6)"
        digits = json.loads((run_dir / "run_spec.json").read_text(encoding="utf-8"))["scenario"]["args"]["digits"]
        # named as the site names the run; its id (the folder's name) only with --show-ids
        assert f"  arithmetic (digits={digits}) · simple/echo{score}" in printed.splitlines()
        assert run_dir.name not in printed.split("scores (main metric", 1)[1]
    # A rerun skips the complete runs and still shows their scores, read back from their stats.
    assert main([str(spec), "--output-dir", str(out)]) == 0
    again = capsys.readouterr().out
    assert "0 runs written, 2 already complete" in again and again.count(" exact_match ") == 2
    # --quiet keeps its one line.
    assert main([str(spec), "--output-dir", str(out), "--quiet"]) == 0
    assert "scores" not in capsys.readouterr().out


def test_plan_lists_the_runs_whose_data_is_not_on_this_machine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "mirror"
    (root / "truthful_qa").mkdir(parents=True)
    (root / "truthful_qa" / "TruthfulQA.csv").write_text("Type,Category,Question\n", encoding="utf-8")
    monkeypatch.setenv("HOLISTIC_CACHE_DIR", str(tmp_path / "empty-cache"))
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "suite: data\nmodels: [simple/echo]\nruns:\n  - scenario: truthful_qa\n  - scenario: boolq\n", encoding="utf-8"
    )
    assert main([str(spec), "--plan", "--data-root", str(root)]) == 0
    out = capsys.readouterr().out
    assert "Data not on this machine: 1 of 2 runs (1 scenario)" in out
    assert "  boolq (1 run): downloaded from dl.fbaipublicfiles.com on the first run (fails offline)" in out
    assert "truthful_qa (" not in out.split("Data not on this machine")[1].split("Coverage")[0]


def test_targeted_runs_use_helms_plain_prompts_even_on_a_chat_model() -> None:
    from holistic.spec import compile_spec
    from tests.cli.helm_run_helpers import REPO

    compiled = compile_spec(REPO / "runspecs" / "targeted.yaml")
    gsm8k = [r for r in compiled.runs if r.scenario.name == "gsm8k"]
    assert gsm8k and compiled.runs[0].model == "embedded/smollm2-135m-instruct"  # a chat model
    assert {r.adapter.prompt_format for r in compiled.runs} == {"plain"}


def test_plan_estimates_time_from_this_machines_measured_speed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    spec = write_spec(tmp_path, metrics=("accuracy",))
    out = tmp_path / "out"
    assert main([str(spec), "--output-dir", str(out), "--plan"]) == 0
    plan = capsys.readouterr().out
    assert "simple/echo has no generation measured on this machine" in plan
    assert "helm-run SPEC --plan --calibrate" in plan
    # A real run measures its model; the next plan estimates from that.
    assert main([str(spec), "--output-dir", str(out), "--quiet"]) == 0
    capsys.readouterr()
    rates = json.loads((out / "cache" / "rates.json").read_text(encoding="utf-8"))
    measured = rates["simple/echo"]["generation"]
    assert measured["runs"] == 2 and measured["requests"] == 12 and measured["source"] == "runs"
    assert main([str(spec), "--output-dir", str(out), "--plan"]) == 0
    plan = capsys.readouterr().out
    assert re.search(r"Estimated time: ~\d+ s on this machine", plan) and "tokens/s (runs, " in plan
    # --calibrate measures a model the machine has no figure for, before planning.
    fresh = tmp_path / "fresh"
    assert main([str(spec), "--output-dir", str(fresh), "--plan", "--calibrate"]) == 0
    captured = capsys.readouterr()
    assert "calibrating simple/echo (generation)" in captured.err
    assert "tokens/s (calibration, " in captured.out
    assert json.loads((fresh / "cache" / "rates.json").read_text())["simple/echo"]["generation"]["requests"] == 4
