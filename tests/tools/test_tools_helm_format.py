"""The synthetic suite as HELM run folders (``tools.bench.helm_format``), for HELM's own
``helm-summarize`` (``tools.bench.helm_summarize``): the files and fields HELM 0.5.16's
dataclasses read, holistic's values in them, and (with HELM's environment) HELM's summary of them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import yaml

from tests.support.fake_suite import FakeRun, write_fake_suite
from tools.bench.helm_format import HELM_INPUTS, convert_run, convert_suite, write_schema
from tools.bench.summarize import write_suite

# The fields of HELM 0.5.16's dataclasses (helm.benchmark.run_spec.RunSpec, ...), as its
# ``asdict_without_nones`` writes them and its ``from_json`` reads them.
RUN_SPEC = {"name", "scenario_spec", "adapter_spec", "metric_specs", "data_augmenter_spec", "groups", "annotators"}
ADAPTER_SPEC = {
    "method", "global_prefix", "global_suffix", "instructions", "input_prefix", "input_suffix", "reference_prefix",
    "reference_prefix_characters", "reference_suffix", "chain_of_thought_prefix", "chain_of_thought_suffix",
    "output_prefix", "output_suffix", "instance_prefix", "substitutions", "max_train_instances", "max_eval_instances",
    "num_outputs", "num_train_trials", "num_trials", "sample_train", "model_deployment", "model", "temperature",
    "max_tokens", "stop_sequences", "random", "multi_label", "image_generation_parameters", "reeval_parameters",
    "eval_splits", "output_mapping_pattern",
}  # fmt: skip
REQUEST_STATE = {
    "instance", "reference_index", "request_mode", "train_trial_index", "output_mapping", "request", "result",
    "num_train_instances", "prompt_truncated", "num_conditioning_tokens", "annotations",
}  # fmt: skip
REQUEST_STATE_REQUIRED = {"instance", "train_trial_index", "request", "num_train_instances", "prompt_truncated"}
INSTANCE = {"input", "references", "split", "sub_split", "id", "perturbation", "contrast_inputs",
            "contrast_references", "extra_data"}  # fmt: skip
REQUEST = {
    "model_deployment", "model", "embedding", "prompt", "temperature", "num_completions", "top_k_per_token",
    "max_tokens", "stop_sequences", "echo_prompt", "top_p", "presence_penalty", "frequency_penalty", "random",
    "messages", "multimodal_prompt", "image_generation_parameters", "response_format",
}  # fmt: skip
RESULT = {"success", "embedding", "completions", "cached", "request_time", "request_datetime", "error",
          "error_flags", "batch_size", "batch_request_time"}  # fmt: skip
STAT = ["name", "count", "sum", "sum_squared", "min", "max", "mean", "variance", "stddev"]
METRIC_NAME = {"name", "split", "sub_split", "perturbation"}
PER_INSTANCE = {"instance_id", "perturbation", "train_trial_index", "stats"}
PERTURBATION = {"name", "robustness", "fairness", "computed_on", "seed", "prob"}


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[tuple[str, str, str, int]]]:
    """The benchmark's suite at 2 runs x 3 instances, and HELM's folders for it."""
    root = tmp_path_factory.mktemp("helm_format")
    suite = write_suite(root, 2, 3)
    out = root / "benchmark_output"
    return suite, out, convert_suite(suite, out, "bench", jobs=1)


def _read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _run(out: Path, name: str) -> Path:
    return out / "runs" / "bench" / name


def _holistic_run(suite: Path, model: str) -> Path:
    return next(d for d in (suite / "runs").iterdir() if _read(d / "run_spec.json")["model"] == model)


def test_each_run_gets_helms_folder_with_the_files_helm_run_writes(converted: Any) -> None:
    _, out, runs = converted
    assert sorted(name for name, *_ in runs) == ["scenario_0000:model=model_00", "scenario_0000:model=model_01"]
    for name, group, main, size in runs:
        folder = _run(out, name)
        assert sorted(p.name for p in folder.iterdir()) == sorted(HELM_INPUTS)
        assert size == sum(p.stat().st_size for p in folder.iterdir())
        assert (group, main) == ("scenario_0000", "exact_match")
        spec = _read(folder / "run_spec.json")
        assert set(spec) <= RUN_SPEC and set(spec["adapter_spec"]) <= ADAPTER_SPEC
        assert spec["name"] == name and spec["groups"] == ["scenario_0000"]
        assert spec["adapter_spec"]["model"] == name.rsplit("=", 1)[1].replace("_", "/")
        assert [p["class_name"].rsplit(".", 1)[1] for p in spec["data_augmenter_spec"]["perturbation_specs"]] == [
            "TyposPerturbation"
        ]
        assert (folder / "run_spec.json").read_text(encoding="utf-8").startswith('{\n  "name": ')  # indent 2


def test_the_stats_are_holistics_in_helms_stat_fields(converted: Any) -> None:
    suite, out, _ = converted
    stats = _read(_run(out, "scenario_0000:model=model_00") / "stats.json")
    ours = pq.read_table(_holistic_run(suite, "model/00") / "stats.parquet").to_pylist()
    assert len(stats) == len(ours) == 3
    for stat, row in zip(stats, ours, strict=True):
        assert list(stat) == STAT and set(stat["name"]) <= METRIC_NAME
        assert stat["name"]["name"] == row["metric"] and stat["name"]["split"] == "test"
        assert (stat["count"], stat["sum"], stat["sum_squared"], stat["mean"]) == (
            row["count"],
            row["sum"],
            row["sum_sq"],
            row["mean"],
        )
        assert stat["variance"] == pytest.approx(row["stddev"] ** 2)
    worst = [s for s in stats if "perturbation" in s["name"]]
    assert [s["name"]["perturbation"] for s in worst] == [
        {"name": "robustness", "robustness": True, "fairness": False, "computed_on": "worst"}
    ]


def test_helms_worst_case_over_the_per_instance_stats_gives_holistics_robustness(converted: Any) -> None:
    _, out, _ = converted
    folder = _run(out, "scenario_0000:model=model_01")
    entries = _read(folder / "per_instance_stats.json")
    assert len(entries) == 2 * 3  # each instance, then its perturbed version
    by_instance: dict[str, dict[str | None, float]] = defaultdict(dict)
    for entry in entries:
        assert set(entry) <= PER_INSTANCE and entry["train_trial_index"] == 0
        pert = entry.get("perturbation")
        if pert is not None:
            assert set(pert) <= PERTURBATION and (pert["name"], pert["computed_on"]) == ("typos", "perturbed")
        for stat in entry["stats"]:
            assert list(stat) == STAT and stat["count"] == 1 and stat["name"].get("perturbation") == pert
        names = [s["name"]["name"] for s in entry["stats"]]
        assert names == (["exact_match"] if pert else ["exact_match", "inference_denoised_runtime"])
        by_instance[entry["instance_id"]][pert and pert["name"]] = entry["stats"][0]["mean"]
    worst = sum(min(v.values()) for v in by_instance.values()) / len(by_instance)
    robustness = next(s for s in _read(folder / "stats.json") if "perturbation" in s["name"])
    assert worst == pytest.approx(robustness["mean"])


def test_each_request_is_a_request_state_with_its_instance(converted: Any) -> None:
    suite, out, _ = converted
    state = _read(_run(out, "scenario_0000:model=model_00") / "scenario_state.json")
    assert set(state) == {"adapter_spec", "request_states"}
    requests = pq.read_table(_holistic_run(suite, "model/00") / "requests.parquet").to_pylist()
    assert len(state["request_states"]) == len(requests) == 3
    for rs, req in zip(state["request_states"], requests, strict=True):
        assert REQUEST_STATE_REQUIRED <= set(rs) <= REQUEST_STATE
        assert set(rs["instance"]) <= INSTANCE and set(rs["request"]) <= REQUEST and set(rs["result"]) <= RESULT
        assert rs["instance"]["id"] == req["instance_id"] and rs["request"]["prompt"] == req["prompt"]
        assert rs["result"]["completions"][0]["text"] == req["completion"]
        assert rs["instance"]["references"][0]["tags"] == ["correct"]


def test_the_schema_names_a_group_per_scenario_under_one_parent(converted: Any, tmp_path: Path) -> None:
    _, _, runs = converted
    raw = yaml.safe_load(write_schema(tmp_path / "schema.yaml", runs, "synthetic_suite").read_text(encoding="utf-8"))
    groups = {g["name"]: g for g in raw["run_groups"]}
    assert groups["synthetic_suite"]["subgroups"] == ["scenario_0000"]
    leaf = groups["scenario_0000"]
    assert leaf["environment"] == {"main_name": "exact_match", "main_split": "test"}
    assert set(leaf["metric_groups"]) == {g["name"] for g in raw["metric_groups"]}
    assert {m["name"]: m["lower_is_better"] for m in raw["metrics"]} == {
        "exact_match": False,
        "inference_denoised_runtime": True,
    }


def test_a_perturbation_helm_has_no_counterpart_of_is_a_clear_error(tmp_path: Path) -> None:
    suite = write_fake_suite(tmp_path, "s", [FakeRun("sc", "m/x", num_instances=2, perturbations=("made_up",))])
    with pytest.raises(ValueError, match="no HELM counterpart known for the perturbation 'made_up'"):
        convert_run(next((suite / "runs").iterdir()), tmp_path / "out")


def _helm_python() -> Path:
    venv = Path(
        os.environ.get("HOLISTIC_HELM_BENCH_VENV", Path.home() / ".cache" / "holistic" / "peers" / "bench" / "helm")
    )
    if not (venv / "bench-installed.txt").is_file():
        pytest.skip(f"HELM is not installed under {venv} (python -m tools.bench.helm_summarize installs it)")
    return venv / "bin" / "python"


@pytest.mark.needs_peer
@pytest.mark.slow
def test_helms_own_classes_read_the_folders_back_unchanged(converted: Any, tmp_path: Path) -> None:
    from tools.bench.helm_summarize import FORMAT_CHECK

    python = _helm_python()
    _, out, runs = converted
    folders = [str(_run(out, name)) for name, *_ in runs]
    ok = subprocess.run([str(python), str(FORMAT_CHECK), *folders], capture_output=True, text=True)
    assert ok.returncode == 0 and json.loads(ok.stdout) == {"folders": 2, "differences": []}
    bad = tmp_path / "bad"
    shutil.copytree(folders[0], bad)
    stats = _read(bad / "stats.json")
    stats[0]["colour"] = "red"  # a field HELM's Stat does not have
    (bad / "stats.json").write_text(json.dumps(stats), encoding="utf-8")
    found = subprocess.run([str(python), str(FORMAT_CHECK), str(bad)], capture_output=True, text=True)
    assert found.returncode == 1 and "bad/stats.json[0].colour: only in the file" in found.stdout


@pytest.mark.needs_peer
@pytest.mark.slow
def test_helms_summarize_makes_its_leaderboards_and_instance_pages(tmp_path: Path) -> None:
    from tools.bench.helm_summarize import main

    python = _helm_python()
    report_path = tmp_path / "report.json"
    args = ["--runs", "2", "--instances", "3", "--work", str(tmp_path), "--helm-python", str(python)]
    assert main([*args, "--holistic-seconds", "1.5", "--out", str(report_path)]) == 0
    report = _read(report_path)
    assert (report["runs"], report["runs_with_display_json"], report["format_checked_runs"]) == (2, 2, 2)
    assert report["ratio_holistic_to_helm"] == pytest.approx(1.5 / report["helm_seconds_median"], rel=0.01)
    release = tmp_path / "benchmark_output" / "runs" / "bench"
    accuracy = _read(release / "groups" / "json" / "synthetic_suite_accuracy.json")
    assert [row[0]["value"] for row in accuracy["rows"]] == ["model/00", "model/01"]
    predictions = _read(release / "scenario_0000:model=model_00" / "display_predictions.json")
    assert [p["instance_id"] for p in predictions] == ["id000000", "id000001", "id000002"]
