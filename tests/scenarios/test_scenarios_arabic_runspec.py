"""runspecs/arabic.yaml runs offline on the embedded model, every run at one instance (slow: HELM's
Arabic EXAMS asks for 100 tokens with no stop sequence): each run completes with its task's
metrics, and no English perturbation touches Arabic text."""

from __future__ import annotations

import glob
import json
from pathlib import Path

import pyarrow.dataset as ds
import pytest

from holistic.cli.run import main as helm_run

pytestmark = [pytest.mark.slow, pytest.mark.real_model, pytest.mark.needs_data]
SPEC = Path(__file__).resolve().parents[2] / "runspecs" / "arabic.yaml"


def test_the_arabic_suite_runs_offline_on_the_embedded_model(data_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = [str(SPEC), "--output-dir", str(out), "--data-root", str(data_root), "--max-eval-instances", "1"]
    assert helm_run([*args, "--quiet"]) == 0
    runs = json.loads((out / "arabic" / "suite.json").read_text(encoding="utf-8"))["runs"]
    assert len(runs) == 12 and all(r["status"] == "complete" for r in runs)
    stats = ds.dataset(glob.glob(str(out / "arabic" / "runs" / "*" / "stats.parquet"))).to_table().to_pylist()
    by_run: dict[str, set[str]] = {}
    for s in stats:
        by_run.setdefault(s["run_id"], set()).add(s["metric"])
    wanted = {
        "arabic_exams": {"exact_match"},
        "exams_multilingual": {"exact_match"},
        "llmebench_sarcasm": {"classification_macro_f1"},
        "llmebench_stance": {"classification_macro_f1"},
        "llmebench_qa": {"f1_score", "quasi_exact_match"},
    }
    for run in runs:
        scenario = json.loads((out / "arabic" / "runs" / run["run_id"] / "run_spec.json").read_text())["scenario"]
        assert wanted[scenario["name"]] <= by_run[run["run_id"]], run["run_id"]
    # The only perturbation that ran is the language-neutral one the spec names (its rows: whitespace,
    # whitespace:original, whitespace:worst; robustness and fairness are the worst-case aggregates).
    assert {s["perturbation"].split(":")[0] for s in stats if s["perturbation"]} - {"robustness", "fairness"} == {
        "whitespace"
    }
    # No fairness variant ran: the fairness worst case is the unperturbed value itself.
    plain = {(s["run_id"], s["metric"]): s["mean"] for s in stats if s["perturbation"] is None and not s["sub_split"]}
    fair = [s for s in stats if s["perturbation"] == "fairness" and not s["sub_split"]]
    assert fair and all(s["mean"] == plain[(s["run_id"], s["metric"])] for s in fair)
