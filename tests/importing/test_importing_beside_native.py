"""lm-eval's and inspect's fixture runs beside holistic's own run of the same ARC-Easy questions
(the embedded model): summarized together, and helm-diff pairing holistic's run with lm-eval's
instance by instance, where both score the same way (acc = exact_match, acc_norm =
exact_match_per_char, on identical prompts) every paired delta 0."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from holistic.cli import diff, helm_import, run, summarize
from tests.importing.test_importing_harnesses import FIXTURES, INSPECT, LM_EVAL, LM_EVAL_MODEL, MODEL

SPEC = """\
suite: arc
models: [embedded/smollm2-135m-instruct]
runs:
  - scenario: file
    args:
      path: {path}
      fields: {{id: id, input: question, choices: choices, label: answer}}
      label_format: index0
    adaptation:
      method: multiple_choice_separate_original
      max_train_instances: 0
      input_prefix: "Question: "
      output_prefix: "Answer: "
    metrics: [accuracy]
"""


def _doc_id(row: dict[str, Any]) -> str:
    return str(json.loads(row["raw"])["doc"]["id"])


def _values(run: Path, key: Callable[[dict[str, Any]], str]) -> dict[str, dict[str, float]]:
    """metric -> instance (named by ``key`` of its instances row) -> value."""
    names = {r["instance_id"]: key(r) for r in pq.read_table(run / "instances.parquet").to_pylist()}
    out: dict[str, dict[str, float]] = {}
    for row in pq.read_table(run / "per_instance_stats.parquet").to_pylist():
        out.setdefault(row["metric"], {})[names[row["instance_id"]]] = row["value"]
    return out


@pytest.mark.real_model
def test_lm_eval_pairs_with_holistic_instance_by_instance_with_zero_deltas(tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai")
    spec = tmp_path / "arc.yaml"
    spec.write_text(SPEC.format(path=FIXTURES / "arc_easy.jsonl"), encoding="utf-8")
    out = tmp_path / "out"
    assert run.main([str(spec), "--output-dir", str(out), "--cache-dir", str(tmp_path / "cache"), "--quiet"]) == 0
    common = ["--output-dir", str(out), "--quiet", "--force"]
    assert helm_import.main([str(LM_EVAL), "--suite", "lm", *common, "--model", f"{LM_EVAL_MODEL}={MODEL}"]) == 0
    report = tmp_path / "diff.json"
    assert diff.main([str(out / "arc"), str(out / "lm"), "--format", "json", "-o", str(report)]) in (0, 1)
    runs = json.loads(report.read_text())["runs"]
    arc = next(r for r in runs if r["new_run_id"].startswith("lm-evaluation-harness_arc_easy_local"))
    assert arc["old_run_id"].startswith("file_") and arc["comparable"], arc["causes"]
    assert any("10 instances of the imported (new) run paired by content" in n for n in arc["notes"])
    metrics = {m["metric"]: m for m in arc["metrics"]}
    for name in ("exact_match", "exact_match_per_char"):
        assert metrics[name]["n_shared"] == 10
        assert metrics[name]["delta"] == 0 and metrics[name]["ci_low"] == 0 and metrics[name]["ci_high"] == 0
    assert arc["flips_to_wrong"] == [] and arc["flips_to_correct"] == []
    # instance by instance: lm-eval's document (its id in the logged document) scored as holistic scored it
    native = _values(next((out / "arc" / "runs").iterdir()), lambda row: row["instance_id"])
    ours = _values(next((out / "lm" / "runs").glob("lm-evaluation-harness_arc_easy_local*")), _doc_id)
    for metric in ("exact_match", "exact_match_per_char"):
        assert len(native[metric]) == 10 and native[metric] == ours[metric]

    # beside the native run in one suite: ranked and summarized together
    assert helm_import.main([str(LM_EVAL), "--suite", "arc", *common, "--model", f"{LM_EVAL_MODEL}={MODEL}"]) == 0
    assert helm_import.main([str(INSPECT), "--suite", "arc", *common]) == 0
    assert summarize.main(["--suite", "arc", "--output-dir", str(out), "--no-site"]) == 0
    summary = json.loads((out / "arc" / "summary" / "summary.json").read_text())
    assert len(summary["runs"]) == 5
