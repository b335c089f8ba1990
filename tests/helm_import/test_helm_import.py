"""helm-import on run folders written by HELM 0.5.16 itself (see README.md beside this file)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from holistic.cli.helm_import import main as helm_import
from holistic.results import SuiteReader
from holistic.summarize import summarize_suite
from tests.support.fake_suite import FakeRun, write_fake_suite

SUITE = Path(__file__).parent / "helm_runs" / "fixtures"
MMLU = next(p for p in SUITE.iterdir() if p.name.startswith("mmlu:"))
SRN = next(p for p in SUITE.iterdir() if p.name.startswith("synthetic_reasoning_natural:"))
HELM_MODEL = "holistic/smollm2-135m-instruct"
MODEL = "embedded/smollm2-135m-instruct"


def _import(source: Path, out: Path, *extra: str, suite: str = "helm") -> int:
    return helm_import([str(source), "--suite", suite, "--output-dir", str(out), "--quiet", *extra])


def _runs_by_folder(suite_dir: Path) -> dict[str, Any]:
    reader = SuiteReader(suite_dir)
    return {r.spec["imported_from"]["run_folder"]: r for r in reader.runs}


def _stat_key(name: dict[str, Any]) -> tuple[Any, ...]:
    pert = name.get("perturbation")
    return (name["name"], name.get("split"), name.get("sub_split"), json.dumps(pert, sort_keys=True))


def test_import_reproduces_every_helm_stat_mean(tmp_path: Path) -> None:
    assert _import(SUITE, tmp_path, "--model", f"{HELM_MODEL}={MODEL}", "--helm-version", "0.5.16") == 0
    runs = _runs_by_folder(tmp_path / "helm")
    assert set(runs) == {MMLU.name, SRN.name}
    for folder in (MMLU, SRN):
        run = runs[folder.name]
        assert run.status == "complete"
        helm_stats = json.loads((folder / "stats.json").read_text())
        ours = run.table("stats").to_pylist()
        assert len(ours) == len(helm_stats)
        # every stat: HELM's mean, count and sum exactly, in HELM's order
        for helm, row in zip(helm_stats, ours, strict=True):
            assert row["metric"] == helm["name"]["name"]
            assert row["split"] == helm["name"]["split"]
            assert row["mean"] == helm.get("mean")
            assert (row["count"], row["sum"], row["sum_sq"]) == (helm["count"], helm["sum"], helm["sum_squared"])
        # intervals come from the per-instance values
        main = run.spec["main_metric"]
        test_em = next(r for r in ours if r["metric"] == main and r["split"] == "test" and r["perturbation"] is None)
        values = [
            r["value"]
            for r in run.table("per_instance_stats").to_pylist()
            if r["metric"] == main and r["split"] == "test" and r["perturbation"] is None
        ]
        assert test_em["mean"] == pytest.approx(sum(values) / len(values))
        assert test_em["ci_low"] is not None and test_em["ci_low"] <= test_em["mean"] <= test_em["ci_high"]


def test_import_keeps_origin_sha256_and_raw_fields(tmp_path: Path) -> None:
    assert _import(MMLU, tmp_path, "--model", f"{HELM_MODEL}={MODEL}", "--helm-version", "0.5.16") == 0
    (run,) = SuiteReader(tmp_path / "helm").runs
    origin = run.spec["imported_from"]
    assert origin["helm_version"] == "0.5.16"
    assert origin["run_spec_name"] == json.loads((MMLU / "run_spec.json").read_text())["name"]
    assert origin["layout"] == "0.4-0.5"
    for name in ("run_spec.json", "scenario_state.json", "per_instance_stats.json", "stats.json", "scenario.json"):
        assert origin["files"][name]["sha256"] == hashlib.sha256((MMLU / name).read_bytes()).hexdigest()
    assert run.spec["scenario"] == {"name": "mmlu", "args": {"subject": "anatomy"}}
    assert run.spec["model"] == MODEL

    states = json.loads((MMLU / "scenario_state.json").read_text())["request_states"]
    requests = run.table("requests").to_pylist()
    assert [r["prompt"] for r in requests] == [s["request"]["prompt"] for s in states]
    assert [r["completion"] for r in requests] == [s["result"]["completions"][0]["text"] for s in states]
    assert requests[0]["output_mapping"] is not None and requests[0]["top_k_logprobs"] == 5
    # what holistic has no column for is kept, and listed
    raw = json.loads(requests[0]["raw"])
    assert raw["request"]["top_p"] == states[0]["request"]["top_p"]
    assert "result.request_datetime" in run.artifacts["import"]["unmapped_fields"]
    instances = run.table("instances").to_pylist()
    assert sorted(i["instance_id"] for i in instances) == sorted({s["instance"]["id"] for s in states})


def test_summarize_ranks_imported_runs_beside_native_ones(tmp_path: Path) -> None:
    native = FakeRun("mmlu", "m/native", {"subject": "anatomy"}, method="multiple_choice_joint", skill=0.9)
    suite_dir = write_fake_suite(tmp_path, "mixed", [native])
    assert _import(MMLU, tmp_path, suite="mixed") == 2  # the suite exists: --force needed
    assert _import(MMLU, tmp_path, "--force", suite="mixed") == 0
    summary = summarize_suite(suite_dir, num_bootstrap=50)
    board = summary.leaderboards["accuracy"]
    assert set(board.models) == {"m/native", HELM_MODEL}
    cells = {(c["model"], c["column"]): c for c in summary.cells if c["group"] == "accuracy"}
    helm_em = next(
        s["mean"]
        for s in json.loads((MMLU / "stats.json").read_text())
        if s["name"] == {"name": "exact_match", "split": "test"}
    )
    imported = cells[(HELM_MODEL, "mmlu")]
    assert imported["value"] == pytest.approx(helm_em)
    assert imported["ci_low"] is not None and imported["ci_high"] is not None


def test_summarize_renders_the_imported_suite_and_its_instances(tmp_path: Path) -> None:
    from holistic.cli.summarize import main as helm_summarize

    assert _import(SUITE, tmp_path) == 0
    assert helm_summarize(["--suite", "helm", "--output-dir", str(tmp_path)]) == 0
    site = tmp_path / "helm" / "site"
    assert (site / "index.html").is_file()
    states = json.loads((MMLU / "scenario_state.json").read_text())["request_states"]
    chunks = "".join(p.read_text(encoding="utf-8") for p in (site / "data").glob("*/chunk_*.js"))
    for state in states:  # every imported instance is in the instance browser's data
        assert json.dumps(state["instance"]["id"]) in chunks
        assert state["instance"]["input"]["text"] in chunks
    # the run page says where the run came from, with the sha256 of what was read
    (page,) = (p for p in (site / "runs").glob("helm_mmlu*.html"))
    html = page.read_text(encoding="utf-8")
    assert "Imported from" in html and "HELM's adapter spec" in html
    assert hashlib.sha256((MMLU / "scenario_state.json").read_bytes()).hexdigest() in html


def _copy(source: Path, tmp_path: Path) -> Path:
    target = tmp_path / "src" / source.name
    shutil.copytree(source, target)
    return target


def test_not_a_helm_run_exits_2_naming_the_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _import(empty, tmp_path / "out") == 2
    err = capsys.readouterr().err
    assert str(empty) in err and "not a HELM run" in err
    assert not (tmp_path / "out").exists()


def test_the_folder_of_all_suites_names_the_suites(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "benchmark_output" / "runs"
    shutil.copytree(SUITE, runs / "v1")
    assert _import(runs, tmp_path / "out") == 2
    assert f"a folder of HELM suites, not one suite: give one of {runs / 'v1'}" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["stats.json", "run_spec.json", "per_instance_stats.json", "scenario_state.json"])
def test_json_that_does_not_parse_exits_2_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    run = _copy(MMLU, tmp_path)
    text = (run / name).read_text()
    (run / name).write_text(text.replace('": ', '" ', 1))  # a member without its colon
    assert _import(run, tmp_path / "out") == 2
    err = capsys.readouterr().err
    assert f"{run / name}: not valid JSON at character" in err
    assert not list((tmp_path / "out").glob("*/runs/*/_COMPLETE"))


def test_truncated_scenario_state_exits_2_and_nothing_is_complete(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _copy(MMLU, tmp_path)
    data = (run / "scenario_state.json").read_bytes()
    (run / "scenario_state.json").write_bytes(data[: len(data) * 2 // 3])
    assert _import(run, tmp_path / "out") == 2
    err = capsys.readouterr().err
    assert f"{run / 'scenario_state.json'}: truncated" in err
    suite = tmp_path / "out" / "helm"
    assert not suite.exists()  # a new suite with no run imported is removed: a rerun needs no --force
    assert _import(MMLU, tmp_path / "out") == 0
    assert _import(run, tmp_path / "out", "--force") == 2  # into an existing suite: the failure is recorded
    assert not list(suite.glob("runs/*-*/scenario_state*"))
    entries = json.loads((suite / "suite.json").read_text())["runs"]
    assert [e["status"] for e in entries if e.get("error")] == ["failed"]
    assert "truncated" in next(e["error"] for e in entries if e.get("error"))


def test_missing_file_exits_2_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _copy(MMLU, tmp_path)
    (run / "stats.json").unlink()
    assert _import(run, tmp_path / "out") == 2
    assert f"{run / 'stats.json'}: missing" in capsys.readouterr().err


def test_layout_without_per_instance_stats_is_refused_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _copy(MMLU, tmp_path)
    (run / "per_instance_stats.json").unlink()
    assert _import(run, tmp_path / "out") == 2
    assert "a layout older than HELM 0.2" in capsys.readouterr().err


def test_helm_02_03_layout_is_read(tmp_path: Path) -> None:
    """HELM 0.2 and 0.3 name the model in the adapter spec and requests, with no deployment."""
    run = _copy(MMLU, tmp_path)
    spec = json.loads((run / "run_spec.json").read_text())
    del spec["adapter_spec"]["model_deployment"]
    (run / "run_spec.json").write_text(json.dumps(spec, indent=2))
    state = json.loads((run / "scenario_state.json").read_text())
    del state["adapter_spec"]["model_deployment"]
    for s in state["request_states"]:
        del s["request"]["model_deployment"]
    (run / "scenario_state.json").write_text(json.dumps(state, indent=2))
    assert _import(run, tmp_path / "out") == 0
    (imported,) = SuiteReader(tmp_path / "out" / "helm").runs
    assert imported.spec["imported_from"]["layout"] == "0.2-0.3"
    assert imported.spec["model"] == HELM_MODEL


def test_unknown_stat_name_exits_2_unless_kept_raw_and_listed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _copy(MMLU, tmp_path)
    stats = json.loads((run / "stats.json").read_text())
    consistent = {"count": 1, "sum": 0.25, "sum_squared": 0.0625, "min": 0.25, "max": 0.25, "mean": 0.25}
    stats.append({**stats[0], "name": {"name": "my_custom_stat", "split": "test"}, **consistent})
    (run / "stats.json").write_text(json.dumps(stats, indent=2))
    assert _import(run, tmp_path / "out") == 2
    err = capsys.readouterr().err
    assert f"{run / 'stats.json'}: at [{len(stats) - 1}].name.name ('my_custom_stat')" in err
    assert "--keep-unknown-stats" in err
    assert not (tmp_path / "out").exists()

    assert _import(run, tmp_path / "out", "--keep-unknown-stats") == 0
    out = capsys.readouterr().out
    (imported,) = SuiteReader(tmp_path / "out" / "helm").runs
    row = next(r for r in imported.table("stats").to_pylist() if r["metric"] == "my_custom_stat")
    assert row["mean"] == 0.25 and row["category"] is None
    assert imported.artifacts["import"]["unknown_stats"] == ["my_custom_stat"]
    assert (
        imported.spec["imported_from"]["files"]["stats.json"]["sha256"]
        == hashlib.sha256((run / "stats.json").read_bytes()).hexdigest()
    )
    assert "my_custom_stat" in json.dumps(imported.artifacts) and out.count("imported 1 HELM run") == 1


def test_existing_suite_needs_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _import(MMLU, tmp_path) == 0
    before = (tmp_path / "helm" / "suite.json").read_text()
    assert _import(MMLU, tmp_path) == 2
    err = capsys.readouterr().err
    assert str(tmp_path / "helm" / "suite.json") in err and "--force" in err
    assert (tmp_path / "helm" / "suite.json").read_text() == before
    assert _import(SUITE, tmp_path, "--force") == 0
    assert len(SuiteReader(tmp_path / "helm").runs) == 2  # the same run replaced, the new one added


def test_imported_run_rows_read_as_one_table_with_native_ones(tmp_path: Path) -> None:
    write_fake_suite(tmp_path, "mixed", [FakeRun("boolq", "m/native", with_requests=True)])
    assert _import(SRN, tmp_path, "--force", suite="mixed") == 0
    reader = SuiteReader(tmp_path / "mixed")
    table = reader.dataset_table("requests", columns=["run_id", "prompt", "raw"])
    raws = {r["run_id"]: r["raw"] for r in table.to_pylist()}
    native = next(r.run_id for r in reader.runs if not r.spec.get("imported_from"))
    assert raws[native] is None  # a native run has nothing raw
    assert all(v is not None for k, v in raws.items() if k != native)
    assert "raw" in pq.read_schema(reader.run(native).table_path("requests")).names


def test_intervals_are_a_native_runs_whatever_the_memory_budget(tmp_path: Path) -> None:
    """The imported intervals are those holistic's own aggregation gives the same per-instance
    values, and computing them in many small passes changes nothing."""
    from holistic.core.interfaces import MetricInfo
    from holistic.core.types import MetricName, PerInstanceStat
    from holistic.helm.imports.intervals import intervals_from_parquet
    from holistic.metrics.stats import aggregate

    assert _import(SRN, tmp_path) == 0
    (run,) = SuiteReader(tmp_path / "helm").runs
    rows = run.table("per_instance_stats").to_pylist()
    values = [
        PerInstanceStat(
            r["instance_id"],
            r["trial"],
            MetricName(r["metric"], r["split"], r["sub_split"], r["perturbation"]),
            r["value"],
        )
        for r in rows
    ]
    native = {
        s.name: (s.ci_low, s.ci_high) for s in aggregate(values, seed=0, infos=lambda n: MetricInfo(n, "accuracy"))
    }
    stats = {
        MetricName(r["metric"], r["split"], r["sub_split"], r["perturbation"]): r
        for r in run.table("stats").to_pylist()
        if r["ci_low"] is not None
    }
    assert len(stats) >= 20
    for name, row in stats.items():
        assert (row["ci_low"], row["ci_high"]) == pytest.approx(native[name]), name
    counts = {v.name: 0 for v in values}
    for v in values:
        counts[v.name] += 1
    table = Path(str(run.table_path("per_instance_stats")))
    small = intervals_from_parquet(table, counts, seed=0, budget=7)
    large = intervals_from_parquet(table, counts, seed=0)
    assert small == large and set(small) == set(counts)


def test_perturbed_instances_and_worst_cases_get_holistics_names(tmp_path: Path) -> None:
    """HELM's PerturbationDescription (on instances, per-instance stats and stats) as holistic's
    perturbation columns: the variant's name, ``P:worst``, ``P:original``, ``robustness``."""
    run = _copy(MMLU, tmp_path)
    typos = {"name": "typos", "robustness": True, "fairness": False, "prob": 0.1}
    state = json.loads((run / "scenario_state.json").read_text())
    variant = json.loads(json.dumps(state["request_states"][0]))
    variant["instance"]["perturbation"] = typos
    state["request_states"].append(variant)
    (run / "scenario_state.json").write_text(json.dumps(state, indent=2))
    per_instance = json.loads((run / "per_instance_stats.json").read_text())
    entry = json.loads(json.dumps(per_instance[0]))
    entry["perturbation"] = typos
    per_instance.append(entry)
    (run / "per_instance_stats.json").write_text(json.dumps(per_instance, indent=2))
    stats = json.loads((run / "stats.json").read_text())
    base = next(s for s in stats if s["name"] == {"name": "exact_match", "split": "test"})
    for computed_on in ("worst", "original"):
        stats.append({**base, "name": {**base["name"], "perturbation": {**typos, "computed_on": computed_on}}})
    (run / "stats.json").write_text(json.dumps(stats, indent=2))

    assert _import(run, tmp_path / "out") == 0
    (imported,) = SuiteReader(tmp_path / "out" / "helm").runs
    inst = [r for r in imported.table("instances").to_pylist() if r["perturbation"]]
    assert [(r["perturbation"], json.loads(r["perturbation_args"]), r["robustness"]) for r in inst] == [
        ("typos", {"prob": 0.1}, True)
    ]
    pis = {r["perturbation"] for r in imported.table("per_instance_stats").to_pylist()}
    assert "typos" in pis
    names = {r["perturbation"] for r in imported.table("stats").to_pylist()}
    assert {"typos:worst", "typos:original", "robustness", "fairness"} <= names


def test_a_malformed_entry_exits_2_naming_the_file_and_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _copy(MMLU, tmp_path)
    state = json.loads((run / "scenario_state.json").read_text())
    del state["request_states"][2]["request"]
    (run / "scenario_state.json").write_text(json.dumps(state, indent=2))
    assert _import(run, tmp_path / "out") == 2
    err = capsys.readouterr().err
    assert f"{run / 'scenario_state.json'}: at request_states[2].request: missing or not an object" in err
    assert not list((tmp_path / "out").glob("*/runs/*"))
