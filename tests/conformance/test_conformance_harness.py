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
    assert matching(f"boolq,data_augmentation=canonical:{model}") == ["boolq_canonical"]
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


def test_summarization_runs_at_temperature_0_are_told_from_the_sampled_ones() -> None:
    """HELM's temperature run expander keeps the run's name: the greedy run is found in a suite
    of its own, under its base's name, and the sampled run's completions are not a target."""
    harness = _harness()
    name = "summarization_cnndm:temperature=0.3,device=cpu,model=holistic_smollm2-135m-instruct"
    matching = [key for key in harness.SCENARIOS if harness._entry_matches(name, key)]
    assert matching == ["cnn_dailymail", "cnn_dailymail_greedy"]
    assert (harness.helm_suite("cnn_dailymail"), harness.helm_suite("cnn_dailymail_greedy")) == (
        "conformance",
        "conformance-greedy",
    )
    assert harness.base_key("xsum_greedy") == "xsum"
    assert harness.excluded_reason("rouge_2[test]", "cnn_dailymail") == harness.SAMPLED_REASON
    assert harness.excluded_reason("num_prompt_tokens[test]", "cnn_dailymail") is None
    assert harness.excluded_reason("rouge_2[test]", "cnn_dailymail_greedy") is None


def test_the_pickle_for_helm_holds_the_records_of_the_authors_files(tmp_path: Path) -> None:
    """The rows the harness pickles for HELM are its records' (as the Hugging Face conversion
    makes them), split by split and in the authors' list order."""
    harness = _harness()
    harness._write_cnn_dailymail(tmp_path / "cnn")
    rows = harness._cnn_pickle_rows()
    for split, name in (("train", "train"), ("validation", "val"), ("test", "test")):
        urls = (tmp_path / "cnn" / "url_lists" / f"all_{name}.txt").read_text(encoding="utf-8").split()
        assert [r["id"] for r in rows[split]] == [harness.hashlib.sha1(u.encode()).hexdigest() for u in urls]
    assert any(" ." in r["highlights"] for r in rows["test"]) and all("\n" in r["highlights"] for r in rows["test"])
    harness._write_xsum(tmp_path / "xsum")
    xsum = harness._xsum_pickle_rows()
    split_file = (tmp_path / "xsum" / "XSum-TRAINING-DEV-TEST-SPLIT-90-5-5.json").read_text(encoding="utf-8")
    listed = harness.json.loads(split_file)
    assert [r["id"] for r in xsum["train"]] == listed["train"]
    assert [r["id"] for r in xsum["test"]] == [i for i in listed["test"] if i != "39999999"]
    assert not any("Share this with" in r["document"] for split in xsum.values() for r in split)


def test_ms_marco_perturbation_runs_compare_the_worst_cases_helm_does_not_pool() -> None:
    """HELM pools a ranking run's num_prompt_tokens over every request (a named exclusion), but
    its worst cases take each query's smallest request, a mean over queries: those are compared."""
    harness = _harness()
    for key in ("msmarco_regular", "msmarco_regular_robustness", "msmarco_trec_fairness"):
        assert harness.excluded_reason("num_prompt_tokens[valid]", key) == harness._POOLED
        assert harness.excluded_reason("num_prompt_tokens[valid]{mild_mix}", key) == harness._POOLED
        for worst in ("robustness", "fairness", "dialect:worst"):
            assert harness.excluded_reason(f"num_prompt_tokens[valid]{{{worst}}}", key) is None
    assert {"msmarco_regular_robustness", "msmarco_trec_fairness"} <= set(harness.AUGMENTED)
