"""The capabilities suite end to end on the deterministic test model (real data, skipped when absent)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from holistic.cli.run import main as run_main
from tests.support.data import need


@pytest.mark.needs_data
def test_ifeval_and_gpqa_runs_write_their_values(tmp_path: Path, data_root: Path) -> None:
    root = data_root
    need(root / "ifeval")
    need(root / "gpqa")
    spec = tmp_path / "caps.yaml"
    spec.write_text(
        json.dumps(
            {
                "suite": "caps",
                "protocol": "helm",
                "models": ["simple/echo"],
                "defaults": {"metrics": ["accuracy", "efficiency"]},
                "runs": [{"scenario": "ifeval"}, {"scenario": "gpqa"}],
            }
        ),
        encoding="utf-8",
    )
    out = tmp_path / "out"
    args = [
        spec,
        "--output-dir",
        out,
        "--cache-dir",
        tmp_path / "cache",
        "--data-root",
        root,
        "--limit",
        "4",
        "--quiet",
    ]
    assert run_main([str(a) for a in args]) == 0
    values: dict[str, dict[str, float]] = {}
    for stats in sorted((out / "caps" / "runs").glob("*/stats.parquet")):
        rows = pq.read_table(stats).to_pylist()
        values[rows[0]["scenario"]] = {
            r["metric"]: r["mean"] for r in rows if r["split"] == "test" and r["sub_split"] is None
        }
    ifeval, gpqa = values["ifeval"], values["gpqa"]
    assert {
        "ifeval_strict_accuracy",
        "prompt_level_strict_acc",
        "prompt_level_loose_acc",
        "inst_level_strict_acc",
        "inst_level_loose_acc",
    } <= set(ifeval)
    assert "exact_match" not in ifeval and "exact_match" not in gpqa
    assert all(0.0 <= v <= 1.0 for k, v in ifeval.items() if "acc" in k)
    assert "chain_of_thought_correctness" in gpqa
    inst = pq.read_table(next((out / "caps" / "runs").glob("ifeval*/stats.parquet"))).to_pylist()
    assert {r["count"] for r in inst if r["metric"] == "inst_level_strict_acc"} == {7}  # the 4 prompts' instructions
