"""Semantic checks: names exist (with "did you mean"), args fit, models can do what is asked."""

from __future__ import annotations

from pathlib import Path

import pytest

from holistic.core.errors import SpecError
from holistic.spec import compile_spec


def compile_text(tmp_path: Path, text: str) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(text, encoding="utf-8")
    compile_spec(path)


def test_unknown_scenario(tmp_path: Path) -> None:
    with pytest.raises(SpecError) as info:
        compile_text(tmp_path, "suite: demo\nruns:\n  - scenario: arithmatic\n")
    err = info.value
    assert (err.line, err.column, err.path) == (3, 15, "runs[0].scenario")
    assert "unknown scenario 'arithmatic'" in str(err)
    assert "did you mean 'arithmetic'" in str(err)
    assert err.exit_code == 2


def test_unknown_model_in_top_level_list(tmp_path: Path) -> None:
    text = "suite: demo\nmodels: [simple/echo, simple/no-logprob]\nruns:\n  - scenario: arithmetic\n"
    with pytest.raises(SpecError) as info:
        compile_text(tmp_path, text)
    assert info.value.path == "models[1]"
    assert (info.value.line, info.value.column) == (2, 23)
    assert "did you mean 'simple/no-logprobs'" in str(info.value)


def test_unknown_model_in_run_override(tmp_path: Path) -> None:
    text = "suite: demo\nruns:\n  - scenario: arithmetic\n    models: [simple/ech]\n"
    with pytest.raises(SpecError, match="did you mean 'simple/echo'") as info:
        compile_text(tmp_path, text)
    assert info.value.path == "runs[0].models[0]" and info.value.line == 4


def test_unknown_metric_in_defaults(tmp_path: Path) -> None:
    text = (
        "suite: demo\nmodels: [simple/echo]\ndefaults:\n  metrics: [accuracy, calibraton]\n"
        "runs:\n  - scenario: arithmetic\n"
    )
    with pytest.raises(SpecError) as info:
        compile_text(tmp_path, text)
    assert info.value.path == "defaults.metrics[1]" and info.value.line == 4
    assert "did you mean 'calibration'" in str(info.value)


def test_unknown_perturbation(tmp_path: Path) -> None:
    text = "suite: demo\nmodels: [simple/echo]\nruns:\n  - scenario: arithmetic\n    perturbations: [typoes]\n"
    with pytest.raises(SpecError, match="did you mean 'typos'") as info:
        compile_text(tmp_path, text)
    assert info.value.path == "runs[0].perturbations[0]"


def test_unknown_scenario_argument(tmp_path: Path) -> None:
    text = "suite: demo\nmodels: [simple/echo]\nruns:\n  - scenario: arithmetic\n    args:\n      digts: 2\n"
    with pytest.raises(SpecError) as info:
        compile_text(tmp_path, text)
    err = info.value
    assert (err.line, err.column, err.path) == (6, 7, "runs[0].args.digts")
    assert "unknown argument 'digts' of scenario 'arithmetic'; did you mean 'digits'?" in str(err)


def test_invalid_argument_value_points_at_the_list_item_used(tmp_path: Path) -> None:
    text = "suite: demo\nmodels: [simple/echo]\nruns:\n  - scenario: arithmetic\n    args: {digits: [1, 9]}\n"
    with pytest.raises(SpecError) as info:
        compile_text(tmp_path, text)
    err = info.value
    assert err.path == "runs[0].args.digits[1]"
    assert (err.line, err.column) == (5, 24)
    assert "from 1 to 5" in str(err)


def test_scoring_method_on_a_model_without_logprobs(tmp_path: Path) -> None:
    text = (
        "suite: demo\nmodels: [simple/no-logprobs]\nruns:\n  - scenario: arithmetic\n"
        "    adaptation: {method: multiple_choice_separate_original}\n"
    )
    with pytest.raises(SpecError) as info:
        compile_text(tmp_path, text)
    assert info.value.path == "runs[0].adaptation.method"
    assert "simple/no-logprobs" in str(info.value)


def test_bad_perturbation_argument_is_located(tmp_path: Path) -> None:
    text = (
        "suite: demo\nmodels: [simple/echo]\nruns:\n  - scenario: arithmetic\n"
        "    perturbations:\n      - {name: typos, args: {probability: 0.1}}\n"
    )
    with pytest.raises(SpecError) as info:
        compile_text(tmp_path, text)
    assert info.value.line == 6
    assert info.value.path is not None and info.value.path.startswith("runs[0].perturbations[0]")
    assert "probability" in str(info.value)


def test_logprob_metric_on_a_model_without_logprobs_names_both(tmp_path: Path) -> None:
    text = (
        "suite: demo\nmodels: [simple/echo, simple/no-logprobs]\nruns:\n  - scenario: arithmetic\n"
        "    metrics: [accuracy, ece_10_bin]\n"
    )
    with pytest.raises(SpecError) as info:
        compile_text(tmp_path, text)
    err = info.value
    assert err.path == "runs[0].metrics[1]" and err.line == 5
    assert "'ece_10_bin'" in str(err) and "'simple/no-logprobs'" in str(err)


def test_calibration_category_on_a_model_without_logprobs_is_not_an_error(tmp_path: Path) -> None:
    path = tmp_path / "ok.yaml"
    path.write_text(
        "suite: demo\nmodels: [simple/no-logprobs]\nruns:\n  - scenario: arithmetic\n    metrics: [accuracy, calibration]\n",
        encoding="utf-8",
    )
    (run,) = compile_spec(path).runs
    assert run.metrics == ("accuracy", "calibration")
