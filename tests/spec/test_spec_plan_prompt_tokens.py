"""``--plan``'s prompt-token counts against what the runs then report, on the shipped
specs run on the ``simple`` model (whose counts the plan reproduces with its tokenizer)."""

from __future__ import annotations

import dataclasses
import glob
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from holistic.cli.run import main
from holistic.models.registry import ModelRegistry
from holistic.spec import compile_spec
from holistic.spec.plan import make_plan

RUNSPECS = Path(__file__).resolve().parents[2] / "runspecs"


@pytest.mark.parametrize("name", ["quickstart.yaml", "my_dataset.yaml"])
def test_plan_prompt_tokens_match_the_run(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = (RUNSPECS / name).read_text(encoding="utf-8").replace("embedded/smollm2-135m-instruct", "simple/echo")
    shutil.copytree(RUNSPECS / "data", tmp_path / "data")  # the spec's relative data paths resolve the same way
    spec = tmp_path / name
    spec.write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main([str(spec), "--output-dir", str(tmp_path / "out"), "--quiet", "--max-eval-instances", "8"]) == 0
    compiled = compile_spec(spec)
    plan = make_plan(
        dataclasses.replace(
            compiled,
            runs=tuple(dataclasses.replace(r, adapter=r.adapter.replace(max_eval_instances=8)) for r in compiled.runs),
        ),
        model_registry=ModelRegistry(),
    )
    actual: dict[str, int] = {}
    for path in glob.glob(str(tmp_path / "out" / "*" / "runs" / "*" / "requests.parquet")):
        table = pq.read_table(path, columns=["run_name", "prompt_tokens"]).to_pydict()
        actual[table["run_name"][0]] = sum(table["prompt_tokens"])
    assert len(actual) == len(plan.rows)
    for row in plan.rows:
        assert row.size.prompt_tokens is not None
        assert abs(row.size.prompt_tokens - actual[row.name]) <= 0.15 * actual[row.name], row.name
    assert plan.total_prompt_tokens == sum(actual.values())  # the simple model's own tokenizer: exact
