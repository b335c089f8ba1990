"""The conformance harness's own matching (scripts/helm_conformance.py; it imports no HELM)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _harness() -> Any:
    scripts = str(HERE.parents[1] / "scripts")
    if scripts not in sys.path:
        sys.path.insert(0, scripts)
    return importlib.import_module("helm_conformance")


def test_a_helm_run_folder_matches_only_the_entry_with_every_argument() -> None:
    harness = _harness()
    model = "model=holistic_smollm2-135m-instruct"

    def matching(run_dir: str) -> list[str]:
        return [key for key in harness.SCENARIOS if harness._entry_matches(run_dir, key)]

    # HellaSwag and OpenBookQA are both HELM's "commonsense" runs
    assert matching(f"commonsense:dataset=hellaswag,method=multiple_choice_separate_original,{model}") == ["hellaswag"]
    assert matching(f"commonsense:dataset=openbookqa,method=multiple_choice_separate_calibrated,{model}") == [
        "openbookqa"
    ]
    # a robustness run is not the unperturbed run, whichever way HELM writes the name
    assert matching(f"boolq:{model}") == ["boolq"]
    assert matching(f"boolq,data_augmentation=robustness:{model}") == ["boolq_robustness"]
    assert matching(f"boolq,data_augmentation=fairness:{model}") == ["boolq_fairness"]
    assert matching(f"mmlu:subject=anatomy,method=multiple_choice_joint,{model}") == ["mmlu"]
    assert matching(f"mmlu:subject=anatomy,method=multiple_choice_joint,data_augmentation=robustness,{model}") == [
        "mmlu_robustness"
    ]


def test_helms_perturbation_descriptions_in_holistics_naming() -> None:
    harness = _harness()
    name = harness.helm_perturbation
    assert name(None) is None
    assert name({"name": "robustness", "robustness": True, "computed_on": "worst"}) == "robustness"
    assert name({"name": "fairness", "fairness": True, "computed_on": "worst"}) == "fairness"
    assert name({"name": "mild_mix", "computed_on": "worst"}) == "mild_mix:worst"
    assert name({"name": "mild_mix", "computed_on": "original"}) == "mild_mix:original"
    assert name({"name": "mild_mix", "computed_on": "perturbed"}) == "mild_mix"
    assert name({"name": "person_name", "computed_on": "worst"}) == "person_names:worst"
    assert harness._stat_key("exact_match", "test", "toxic", "robustness") == "exact_match[test/toxic]{robustness}"


def test_a_separate_scoring_request_is_compared_as_the_text_helm_echoes() -> None:
    harness = _harness()
    row = {"prompt": "Kyoto. ", "continuation": " walks.", "kind": "loglikelihood"}
    assert harness.sent_text(row) == "Kyoto.  walks."
    assert harness.sent_text({**row, "kind": "generate", "continuation": ""}) == "Kyoto. "
