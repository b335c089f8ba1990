"""helm-run end to end on the deterministic `simple` model and a synthetic scenario."""

from __future__ import annotations

import glob
import json
import sys
from pathlib import Path
from typing import Any

import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from holistic.cli.run import main
from holistic.results.schemas import SCHEMA_VERSION
from holistic.scenarios import fetching
from tests.cli.helm_run_helpers import call_count, run_dirs, write_spec

RUN_FILES = {
    "run_spec.json",
    "instances.parquet",
    "requests.parquet",
    "per_instance_stats.parquet",
    "stats.parquet",
    "artifacts.json",
    "_COMPLETE",
    "browser",  # the run's instance browser, built as the run completes (holistic.site.bundle)
}


@pytest.fixture
def call_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    log = tmp_path / "calls.log"
    monkeypatch.setenv("HOLISTIC_SIMPLE_CALL_LOG", str(log))
    return log


def _run(*args: str | Path) -> int:
    return main([str(a) for a in args])


def test_suite_runs_end_to_end_and_reads_as_one_table(
    tmp_path: Path, call_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_spec(tmp_path)
    out = tmp_path / "out"
    assert _run(spec, "--output-dir", out) == 0
    stdout = capsys.readouterr().out
    assert "2 runs written" in stdout
    suite_dir = out / "tiny"
    suite = json.loads((suite_dir / "suite.json").read_text())
    assert suite["schema_version"] == SCHEMA_VERSION
    assert suite["spec_path"] == str(spec)
    assert len(suite["spec_sha256"]) == 64
    assert [r["status"] for r in suite["runs"]] == ["complete", "complete"]
    dirs = run_dirs(suite_dir)
    assert len(dirs) == 2
    for d in dirs:
        assert {p.name for p in d.iterdir()} == RUN_FILES
    stats = ds.dataset(glob.glob(str(suite_dir / "runs" / "*" / "stats.parquet"))).to_table()
    assert set(stats.column("run_id").to_pylist()) == {d.name for d in dirs}
    assert "exact_match" in stats.column("metric").to_pylist()
    requests = ds.dataset(glob.glob(str(suite_dir / "runs" / "*" / "requests.parquet"))).to_table().to_pylist()
    assert requests and all(r["prompt"] and r["success"] and r["completion"] is not None for r in requests)
    assert call_count(call_log) == len({r["cache_key"] for r in requests})
    instances = pq.read_table(dirs[0] / "instances.parquet").to_pylist()
    assert sum(1 for i in instances if i["role"] == "eval") == 6
    artifacts = json.loads((dirs[0] / "artifacts.json").read_text())
    assert artifacts["execution"]["error_rate"] == 0.0


def test_rerun_skips_complete_runs_and_resumes_the_rest_from_the_cache(
    tmp_path: Path, call_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_spec(tmp_path)
    out = tmp_path / "out"
    assert _run(spec, "--output-dir", out, "--quiet") == 0
    calls = call_count(call_log)
    first, second = run_dirs(out / "tiny")
    before = (first / "stats.parquet").read_bytes()
    (second / "_COMPLETE").unlink()
    assert _run(spec, "--output-dir", out) == 0
    assert call_count(call_log) == calls  # nothing asked of the model again
    assert "1 runs written, 1 already complete" in capsys.readouterr().out
    assert (first / "stats.parquet").read_bytes() == before  # the complete run was not touched
    redone = pq.read_table(second / "requests.parquet")
    assert all(redone.column("cached").to_pylist())


def test_same_spec_gives_identical_prompts_and_stats(tmp_path: Path, call_log: Path) -> None:
    spec = write_spec(tmp_path)
    assert _run(spec, "--output-dir", tmp_path / "a", "--quiet", "--no-cache") == 0
    assert _run(spec, "--output-dir", tmp_path / "b", "--quiet", "--no-cache") == 0
    for a, b in zip(run_dirs(tmp_path / "a" / "tiny"), run_dirs(tmp_path / "b" / "tiny"), strict=True):
        assert a.name == b.name
        ra, rb = pq.read_table(a / "requests.parquet"), pq.read_table(b / "requests.parquet")
        assert ra.column("prompt").to_pylist() == rb.column("prompt").to_pylist()
        sa = pq.read_table(a / "stats.parquet").drop_columns(
            ["sum", "sum_sq", "min", "max", "mean", "stddev", "ci_low", "ci_high"]
        )
        assert sa.equals(
            pq.read_table(b / "stats.parquet").drop_columns(
                ["sum", "sum_sq", "min", "max", "mean", "stddev", "ci_low", "ci_high"]
            )
        )
        em_a = [r for r in pq.read_table(a / "stats.parquet").to_pylist() if r["metric"] == "exact_match"]
        em_b = [r for r in pq.read_table(b / "stats.parquet").to_pylist() if r["metric"] == "exact_match"]
        assert em_a == em_b


def test_no_cache_writes_no_cache_and_asks_the_model_again(tmp_path: Path, call_log: Path) -> None:
    spec = write_spec(tmp_path, digits=(1,))
    out = tmp_path / "out"
    assert _run(spec, "--output-dir", out, "--quiet", "--no-cache") == 0
    calls = call_count(call_log)
    assert not (out / "cache").exists()
    (run_dirs(out / "tiny")[0] / "_COMPLETE").unlink()
    assert _run(spec, "--output-dir", out, "--quiet", "--no-cache") == 0
    assert call_count(call_log) == 2 * calls


def test_cache_dir_option_moves_the_cache(tmp_path: Path, call_log: Path) -> None:
    spec = write_spec(tmp_path, digits=(1,))
    assert _run(spec, "--output-dir", tmp_path / "out", "--cache-dir", tmp_path / "elsewhere", "--quiet") == 0
    assert (tmp_path / "elsewhere" / "requests.sqlite").exists()
    assert not (tmp_path / "out" / "cache").exists()
    # another output folder sharing the cache needs no model call
    calls = call_count(call_log)
    assert _run(spec, "--output-dir", tmp_path / "out2", "--cache-dir", tmp_path / "elsewhere", "--quiet") == 0
    assert call_count(call_log) == calls


def test_plan_prints_the_matrix_and_writes_nothing(
    tmp_path: Path, call_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_spec(tmp_path)
    out = tmp_path / "out"
    for flag in ("--plan", "--dry-run"):
        assert _run(spec, "--output-dir", out, flag) == 0
        text = capsys.readouterr().out
        assert "arithmetic" in text and "simple/echo" in text
    assert not out.exists()
    assert call_count(call_log) == 0


def test_model_and_scenario_filters(tmp_path: Path, call_log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = write_spec(tmp_path, models=("simple/echo", "simple/no-logprobs"), digits=(1,), metrics=("accuracy",))
    out = tmp_path / "out"
    assert _run(spec, "--output-dir", out, "--models", "simple/no-*", "--quiet") == 0
    suite = json.loads((out / "tiny" / "suite.json").read_text())
    assert [r["model"] for r in suite["runs"]] == ["simple/no-logprobs"]
    capsys.readouterr()
    assert _run(spec, "--output-dir", out, "--models", "simple/ecko") == 2
    err = capsys.readouterr().err
    assert "matches no model" in err and "simple/echo" in err and "Traceback" not in err
    assert _run(spec, "--output-dir", out, "--scenarios", "arith*", "--models", "simple/echo", "--quiet") == 0


def test_max_eval_instances_override_changes_size_and_run_id(tmp_path: Path, call_log: Path) -> None:
    spec = write_spec(tmp_path, digits=(1,), max_eval=6)
    out = tmp_path / "out"
    assert _run(spec, "--output-dir", out, "--quiet") == 0
    assert _run(spec, "--output-dir", out, "--quiet", "--max-eval-instances", "3") == 0
    dirs = run_dirs(out / "tiny")
    assert len(dirs) == 2
    counts = sorted(
        sum(1 for r in pq.read_table(d / "instances.parquet").to_pylist() if r["role"] == "eval") for d in dirs
    )
    assert counts == [3, 6]


def test_suite_override(tmp_path: Path, call_log: Path) -> None:
    spec = write_spec(tmp_path, digits=(1,))
    assert _run(spec, "--output-dir", tmp_path / "out", "--suite", "renamed", "--quiet") == 0
    assert json.loads((tmp_path / "out" / "renamed" / "suite.json").read_text())["suite"] == "renamed"


def test_progress_lines_when_not_a_terminal_and_one_line_when_quiet(
    tmp_path: Path, call_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_spec(tmp_path, digits=(1,))
    assert _run(spec, "--output-dir", tmp_path / "a") == 0
    out = capsys.readouterr().out
    assert "[1/1]" in out and "start" in out and "6 instances" in out
    assert "pyarrow.dataset.dataset" in out  # the summary says how to read the suite
    assert _run(spec, "--output-dir", tmp_path / "b", "--quiet") == 0
    captured = capsys.readouterr()
    # quiet: no progress, only the final line saying what was done
    assert captured.err == "" and captured.out.count("\n") == 1
    assert captured.out.startswith("suite ") and "1 runs written" in captured.out and "from the cache" in captured.out


def test_unwritable_output_dir_fails_before_any_model_call(
    tmp_path: Path, call_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_spec(tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    assert _run(spec, "--output-dir", blocker / "out") == 2
    err = capsys.readouterr().err
    assert err.startswith("helm-run: error: ") and "cannot write results to" in err
    assert len(err.strip().splitlines()) == 1
    assert call_count(call_log) == 0


def test_incompatible_existing_suite_fails_before_any_model_call(
    tmp_path: Path, call_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_spec(tmp_path)
    suite_dir = tmp_path / "out" / "tiny"
    suite_dir.mkdir(parents=True)
    (suite_dir / "suite.json").write_text(json.dumps({"schema_version": 0, "runs": []}))
    assert _run(spec, "--output-dir", tmp_path / "out") == 2
    err = capsys.readouterr().err
    assert "schema_version 0" in err and "Traceback" not in err
    assert call_count(call_log) == 0
    assert not (suite_dir / "runs").exists()


def test_bad_spec_is_one_line_with_exit_code(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "bad.yaml"
    spec.write_text("suite: x\nmodels: [simple/echo]\nruns:\n  - scenario: arithmetc\n")
    assert _run(spec, "--output-dir", tmp_path / "out") == 2
    err = capsys.readouterr().err
    assert "arithmetic" in err  # the nearest valid name
    assert "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_ray_executor_without_ray_is_a_clear_error(
    tmp_path: Path, call_log: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed: importing it fails
    spec = write_spec(tmp_path)
    assert _run(spec, "--output-dir", tmp_path / "out", "--executor", "ray") == 2
    err = capsys.readouterr().err
    assert "--executor ray needs the `ray` extra" in err and "pip install 'holistic[ray]'" in err
    assert call_count(call_log) == 0


def test_fetch_only_calls_the_scenarios_fetch_hook(
    tmp_path: Path, call_log: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: dict[str, object] = {}

    def fetch_for_runs(runs: list[Any], ctx: object) -> list[fetching.FetchReport]:
        seen["runs"] = [r.scenario.name for r in runs]
        seen["ctx"] = ctx
        return [fetching.FetchReport("arithmetic", ("a.csv", "b.csv"), ("mirror", "download"))]

    monkeypatch.setattr(fetching, "fetch_for_runs", fetch_for_runs)
    monkeypatch.setenv("HOLISTIC_DATA_ROOT", str(tmp_path / "mirror"))
    spec = write_spec(tmp_path)
    assert _run(spec, "--output-dir", tmp_path / "out", "--fetch-only") == 0
    assert seen["runs"] == ["arithmetic", "arithmetic"]
    assert seen["ctx"].data_root == tmp_path / "mirror"  # type: ignore[attr-defined]
    assert "arithmetic: 2 files (1 from download, 1 from mirror)" in capsys.readouterr().out
    assert call_count(call_log) == 0
    assert not (tmp_path / "out").exists()


def test_a_failing_run_is_recorded_and_the_suite_goes_on(
    tmp_path: Path, call_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The compiler checks a file's first rows; a bad row further down fails the run when its
    # instances are read, which must not stop the suite's other runs.
    rows = [json.dumps({"id": str(i), "question": f"{i}+0", "answer": str(i)}) for i in range(60)]
    (tmp_path / "late_bad_row.jsonl").write_text("\n".join([*rows, "{not json"]) + "\n", encoding="utf-8")
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "suite: mixed\nmodels: [simple/echo]\ndefaults: {max_eval_instances: 3, metrics: [accuracy]}\nruns:\n"
        "  - scenario: file\n    args: {path: late_bad_row.jsonl, fields: {input: question, output: answer, id: id}}\n"
        "  - scenario: arithmetic\n    args: {digits: 1, num_train: 5, num_test: 5}\n"
    )
    assert _run(spec, "--output-dir", tmp_path / "out") == 1
    captured = capsys.readouterr()
    assert "1 runs written, 0 already complete, 1 failed" in captured.out
    assert "FAILED" in captured.out and "late_bad_row.jsonl" in captured.out
    assert "Traceback" not in captured.out + captured.err
    suite = json.loads((tmp_path / "out" / "mixed" / "suite.json").read_text())
    assert [r["status"] for r in suite["runs"]] == ["failed", "complete"]
    assert "late_bad_row.jsonl:61" in suite["runs"][0]["error"]


def test_perturbed_variants_are_stored_with_worst_case_stats(tmp_path: Path, call_log: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "suite: pert\nmodels: [simple/echo]\n"
        "defaults: {max_eval_instances: 4, metrics: [accuracy], adaptation: {max_train_instances: 1}}\nruns:\n"
        "  - scenario: synthetic_reasoning\n    args: {mode: pattern_match, num_train: 5, num_test: 8}\n"
        "    perturbations: [lowercase]\n"
    )
    assert _run(spec, "--output-dir", tmp_path / "out", "--quiet") == 0
    (run,) = run_dirs(tmp_path / "out" / "pert")
    instances = pq.read_table(run / "instances.parquet").to_pylist()
    evals = [i for i in instances if i["role"] == "eval"]
    assert len(evals) == 8
    variants = [i for i in evals if i["perturbation"] == "lowercase"]
    assert {v["instance_id"] for v in variants} == {i["instance_id"] for i in evals if i["perturbation"] is None}
    assert all(v["input"] == v["input"].lower() for v in variants)
    stats = pq.read_table(run / "stats.parquet").to_pylist()
    perturbations = {(s["metric"], s["perturbation"]) for s in stats}
    assert ("exact_match", "lowercase") in perturbations
    assert ("exact_match", "robustness") in perturbations  # worst case over original + variants
    requests = pq.read_table(run / "requests.parquet").to_pylist()
    assert {r["perturbation"] for r in requests} == {None, "lowercase"}


def test_trials_are_stored_and_averaged(tmp_path: Path, call_log: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "suite: trials\nmodels: [simple/echo]\n"
        "defaults: {max_eval_instances: 4, metrics: [accuracy], num_train_trials: 2,"
        " adaptation: {max_train_instances: 2}}\nruns:\n"
        "  - scenario: arithmetic\n    args: {digits: 1, num_train: 10, num_test: 8}\n"
    )
    assert _run(spec, "--output-dir", tmp_path / "out", "--quiet") == 0
    (run,) = run_dirs(tmp_path / "out" / "trials")
    requests = pq.read_table(run / "requests.parquet").to_pylist()
    assert sorted({r["trial"] for r in requests}) == [0, 1]
    assert all(len(r["train_ids"]) == r["num_train_instances"] == 2 for r in requests)
    per_instance = pq.read_table(run / "per_instance_stats.parquet").to_pylist()
    assert {p["trial"] for p in per_instance} == {0, 1}
    (em,) = [s for s in pq.read_table(run / "stats.parquet").to_pylist() if s["metric"] == "exact_match"]
    assert em["num_trials"] == 2 and em["count"] == 4
