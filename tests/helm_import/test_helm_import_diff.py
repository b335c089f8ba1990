"""helm-diff between a run imported from HELM and another run of the same spec."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from holistic.cli.diff import main as helm_diff
from holistic.cli.helm_import import main as helm_import
from holistic.diff import diff_suites, read_side
from tests.helm_import.test_helm_import import HELM_MODEL, MMLU, MODEL
from tests.support.data import need


def _import(source: Path, out: Path, suite: str) -> Path:
    args = [str(source), "--suite", suite, "--output-dir", str(out), "--quiet", "--model", f"{HELM_MODEL}={MODEL}"]
    assert helm_import(args) == 0
    return out / suite


def test_a_changed_prompt_is_not_comparable_and_names_the_first_difference(tmp_path: Path) -> None:
    old = _import(MMLU, tmp_path, "helm")
    changed = tmp_path / "src" / MMLU.name
    shutil.copytree(MMLU, changed)
    state = json.loads((changed / "scenario_state.json").read_text())
    target = state["request_states"][0]
    target["request"]["prompt"] = target["request"]["prompt"].replace("Answer:", "Answer :", 1)
    (changed / "scenario_state.json").write_text(json.dumps(state, indent=2))
    new = _import(changed, tmp_path, "helm-edited")

    report = diff_suites(read_side(old), read_side(new))
    (run,) = report.runs
    assert not run.comparable
    (cause,) = run.causes
    instance = target["instance"]["id"]
    assert cause.startswith("prompt text changed for 1 of 5 instances; first differing prompt: instance " + instance)
    assert "arches\\nAnswer: D" in cause and "arches\\nAnswer : D" in cause


@pytest.mark.real_model
@pytest.mark.needs_data
def test_imported_helm_mmlu_and_holistic_on_the_same_weights_are_comparable_with_zero_deltas(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data_root: Path
) -> None:
    """The committed HELM run of MMLU anatomy (5 instances drawn by HELM) against holistic's run of
    the same spec under HELM's protocol, on the same SmolLM2 weights."""
    from holistic.cli.run import main as helm_run

    root = need(data_root / "mmlu").parent
    spec = tmp_path / "mmlu.yaml"
    spec.write_text(
        json.dumps(
            {
                "suite": "native",
                "protocol": "helm",
                "models": [MODEL],
                "runs": [
                    {
                        "scenario": "mmlu",
                        "args": {"subject": "anatomy"},
                        "max_eval_instances": 5,
                        "num_train_trials": 1,
                        "metrics": ["accuracy", "calibration", "efficiency"],
                        "perturbations": [],
                    }
                ],
            }
        )
    )
    out = tmp_path / "out"
    assert helm_run([str(spec), "--output-dir", str(out), "--data-root", str(root), "--quiet"]) == 0
    helm = _import(MMLU, out, "helm")

    report = diff_suites(read_side(helm), read_side(out / "native"))
    (run,) = report.runs
    assert run.comparable, run.causes
    assert any("paired by content" in n for n in run.notes)
    paired = {m.metric: m for m in run.metrics if m.n_shared}
    # every answer-derived metric both report, paired instance by instance: delta 0, interval [0, 0]
    for name in ("exact_match", "num_prompt_tokens", "num_completion_tokens"):
        m = paired[name]
        assert m.n_shared == 5 and m.delta == 0 and (m.ci_low, m.ci_high) == (0, 0), m
    assert not run.flips_to_wrong and not run.flips_to_correct
    # what differs for a reason outside the protocol is named, not paired
    assert "max_prob" not in paired and any("max_prob" in n for n in run.notes)
    assert set(paired) - {"exact_match", "num_prompt_tokens", "num_completion_tokens"} == {"inference_runtime"}

    assert helm_diff([str(helm), str(out / "native")]) == 0
    text = capsys.readouterr().out
    assert "[comparable]" in text and "0 not comparable" in text
