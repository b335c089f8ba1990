"""The conformance harness's own matching (tools.conformance.helm; it imports no HELM)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from tools.conformance.helm import authored_news, compare, keys, running, stats

HERE = Path(__file__).resolve().parent


def test_a_helm_run_folder_matches_only_the_entry_with_every_argument() -> None:
    model = "model=holistic_smollm2-135m-instruct"

    def matching(run_dir: str) -> list[str]:
        return [key for key in keys.SCENARIOS if running.entry_matches(run_dir, key)]

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
    name = stats.helm_perturbation
    assert name(None) is None
    assert name({"name": "robustness", "robustness": True, "computed_on": "worst"}) == "robustness"
    assert name({"name": "fairness", "fairness": True, "computed_on": "worst"}) == "fairness"
    assert name({"name": "mild_mix", "computed_on": "worst"}) == "mild_mix:worst"
    assert name({"name": "mild_mix", "computed_on": "original"}) == "mild_mix:original"
    assert name({"name": "mild_mix", "computed_on": "perturbed"}) == "mild_mix"
    assert name({"name": "person_name", "computed_on": "worst"}) == "person_names:worst"
    assert stats.stat_key("exact_match", "test", "toxic", "robustness") == "exact_match[test/toxic]{robustness}"


def test_a_separate_scoring_request_is_compared_as_the_text_helm_echoes() -> None:
    row = {"prompt": "Kyoto. ", "continuation": " walks.", "kind": "loglikelihood"}
    assert compare.sent_text(row) == "Kyoto.  walks."
    assert compare.sent_text({**row, "kind": "generate", "continuation": ""}) == "Kyoto. "


def test_summarization_runs_at_temperature_0_are_told_from_the_sampled_ones() -> None:
    """HELM's temperature run expander keeps the run's name: the greedy run is found in a suite
    of its own, under its base's name, and the sampled run's completions are not a target."""
    name = "summarization_cnndm:temperature=0.3,device=cpu,model=holistic_smollm2-135m-instruct"
    matching = [key for key in keys.SCENARIOS if running.entry_matches(name, key)]
    assert matching == ["cnn_dailymail", "cnn_dailymail_greedy"]
    assert (keys.helm_suite("cnn_dailymail"), keys.helm_suite("cnn_dailymail_greedy")) == (
        "conformance",
        "conformance-greedy",
    )
    assert keys.base_key("xsum_greedy") == "xsum"
    assert stats.excluded_reason("rouge_2[test]", "cnn_dailymail") == stats.SAMPLED_REASON
    assert stats.excluded_reason("num_prompt_tokens[test]", "cnn_dailymail") is None
    assert stats.excluded_reason("rouge_2[test]", "cnn_dailymail_greedy") is None


def test_the_pickle_for_helm_holds_the_records_of_the_authors_files(tmp_path: Path) -> None:
    """The rows the harness pickles for HELM are its records' (as the Hugging Face conversion
    makes them), split by split and in the authors' list order."""
    authored_news.write_cnn_dailymail(tmp_path / "cnn")
    rows = authored_news.cnn_pickle_rows()
    for split, name in (("train", "train"), ("validation", "val"), ("test", "test")):
        urls = (tmp_path / "cnn" / "url_lists" / f"all_{name}.txt").read_text(encoding="utf-8").split()
        assert [r["id"] for r in rows[split]] == [hashlib.sha1(u.encode()).hexdigest() for u in urls]
    assert any(" ." in r["highlights"] for r in rows["test"]) and all("\n" in r["highlights"] for r in rows["test"])
    authored_news.write_xsum(tmp_path / "xsum")
    xsum = authored_news.xsum_pickle_rows()
    split_file = (tmp_path / "xsum" / "XSum-TRAINING-DEV-TEST-SPLIT-90-5-5.json").read_text(encoding="utf-8")
    listed = json.loads(split_file)
    assert [r["id"] for r in xsum["train"]] == listed["train"]
    assert [r["id"] for r in xsum["test"]] == [i for i in listed["test"] if i != "39999999"]
    assert not any("Share this with" in r["document"] for split in xsum.values() for r in split)


def test_ms_marco_perturbation_runs_compare_the_worst_cases_helm_does_not_pool() -> None:
    """HELM pools a ranking run's num_prompt_tokens over every request (a named exclusion), but
    its worst cases take each query's smallest request, a mean over queries: those are compared."""
    for key in ("msmarco_regular", "msmarco_regular_robustness", "msmarco_trec_fairness"):
        assert stats.excluded_reason("num_prompt_tokens[valid]", key) == stats.POOLED
        assert stats.excluded_reason("num_prompt_tokens[valid]{mild_mix}", key) == stats.POOLED
        for worst in ("robustness", "fairness", "dialect:worst"):
            assert stats.excluded_reason(f"num_prompt_tokens[valid]{{{worst}}}", key) is None
    assert {"msmarco_regular_robustness", "msmarco_trec_fairness"} <= set(keys.AUGMENTED)
