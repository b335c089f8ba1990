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


EMBEDDED = "embedded/smollm2-135m-instruct"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["quickstart.yaml", "my_dataset.yaml"])
def test_plan_prompt_tokens_match_the_embedded_models_own_count(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plan against the prompt tokens the embedded model's client reports for the
    run's real requests (chat ones through SmolLM2's template, with its default system
    prompt), computed by the client itself from its own tokenizer without running the model."""
    from holistic.adaptation import adapt
    from holistic.execution.options import RunOptions
    from holistic.execution.pipeline import _load_instances
    from holistic.models.registry import create_client
    from holistic.scenarios.registry import create_scenario

    shutil.copytree(RUNSPECS / "data", tmp_path / "data")
    spec = tmp_path / name
    shutil.copy(RUNSPECS / name, spec)
    monkeypatch.chdir(tmp_path)
    compiled = compile_spec(spec)
    runs = tuple(dataclasses.replace(r, adapter=r.adapter.replace(max_eval_instances=8)) for r in compiled.runs)
    assert {r.model for r in runs} == {EMBEDDED}
    registry = ModelRegistry()
    plan = make_plan(dataclasses.replace(compiled, runs=runs), model_registry=registry)
    client = create_client(registry.get(EMBEDDED))  # tokenizer and config only: weights load on a first request
    try:
        formats = set()
        for run, row in zip(runs, plan.rows, strict=True):
            train, evaluation = _load_instances(run, create_scenario(run.scenario), RunOptions(offline=True))
            states = adapt(train, evaluation, run.adapter, client.deployment, client.tokenizer(), seed=run.adapter.seed)
            formats.add("chat" if states[0].request.messages else "plain")
            actual = sum(client.prompt_tokens(state.request) for state in states)
            assert row.size.prompt_tokens is not None and row.size.prompt_tokens_source == "exact"
            assert abs(row.size.prompt_tokens - actual) <= 0.15 * actual, (row.name, row.size.prompt_tokens, actual)
    finally:
        client.close()
    assert formats == ({"chat", "plain"} if name == "quickstart.yaml" else {"chat"})
