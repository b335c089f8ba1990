"""Aggregation of sub-runs and trials, exports, and byte-identical output."""

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from holistic.summarize import summarize_suite, write_summary
from tests.support.fake_suite import FakeRun, write_fake_suite


def _suite(tmp_path: Path) -> Path:
    runs = []
    for model, skill in (("m/strong", 0.9), ("m/weak", 0.3)):
        for subject in ("anatomy", "astronomy"):
            runs.append(
                FakeRun(
                    "mmlu",
                    model,
                    {"subject": subject},
                    method="multiple_choice_joint",
                    skill=skill,
                    num_instances=60,
                    num_trials=3,
                    perturbations=("typos",),
                )
            )
        runs.append(FakeRun("boolq", model, skill=skill, num_instances=80))
    return write_fake_suite(tmp_path / "out", "s", runs)


def _stat_mean(suite_dir: Path, run_id: str, metric: str) -> float:
    t = pq.read_table(suite_dir / "runs" / run_id / "stats.parquet").to_pylist()
    return float(next(r["mean"] for r in t if r["metric"] == metric and r["perturbation"] is None))


def test_sub_runs_macro_average_into_one_column(tmp_path: Path) -> None:
    suite_dir = _suite(tmp_path)
    summary = summarize_suite(suite_dir, num_bootstrap=50)
    assert summary.columns == ["boolq", "mmlu"]
    cells = {(c["group"], c["model"], c["column"]): c for c in summary.cells}
    strong = cells[("accuracy", "m/strong", "mmlu")]
    assert strong["sub_runs"] == 2
    run_ids = [r.run_id for r in summary.runs if r.model == "m/strong" and r.scenario == "mmlu"]
    expected = sum(_stat_mean(suite_dir, rid, "exact_match") for rid in run_ids) / 2
    assert strong["value"] == pytest.approx(expected)
    assert strong["ci_low"] < strong["value"] < strong["ci_high"]
    # robustness leaderboard only exists where worst-case values were recorded
    assert ("robustness", "m/strong", "mmlu") in cells
    assert ("robustness", "m/strong", "boolq") not in cells


def test_leaderboard_orders_models_and_efficiency_is_lower_better(tmp_path: Path) -> None:
    summary = summarize_suite(_suite(tmp_path), num_bootstrap=50)
    acc = summary.leaderboards["accuracy"]
    assert acc.win_rate[acc.models.index("m/strong")] == 1.0
    assert acc.win_rate[acc.models.index("m/weak")] == 0.0
    eff_cells = [c for c in summary.cells if c["group"] == "efficiency"]
    assert eff_cells and all(c["lower_is_better"] for c in eff_cells)


def test_same_results_give_byte_identical_summary(tmp_path: Path) -> None:
    suite_dir = _suite(tmp_path)
    out1, out2 = tmp_path / "a", tmp_path / "b"
    files1 = write_summary(summarize_suite(suite_dir, num_bootstrap=30), out1)
    files2 = write_summary(summarize_suite(suite_dir, num_bootstrap=30), out2)
    assert [p.relative_to(out1) for p in files1] == [p.relative_to(out2) for p in files2]
    for a, b in zip(files1, files2, strict=True):
        assert a.read_bytes() == b.read_bytes(), a.name
    doc = json.loads((out1 / "summary.json").read_text())
    assert {t["id"] for t in doc["tables"]} >= {"group_accuracy", "coverage", "scenario_mmlu"}
    md = (out1 / "tables" / "group_accuracy.md").read_text()
    assert "| Model |" in md and "m/strong" in md
    tex = (out1 / "tables" / "group_accuracy.tex").read_text()
    assert "\\begin{tabular}" in tex and "m/strong" in tex
