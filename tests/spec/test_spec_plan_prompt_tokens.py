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
from holistic.core.types import RunSpec
from holistic.execution.plan import make_plan
from holistic.models.registry import ModelRegistry
from holistic.spec import compile_spec
from tests.support.data import find_data_root, skip_without_data

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


def _client_counts(runs: tuple[RunSpec, ...], data_root: Path | None = None) -> list[tuple[int, set[str]]]:
    """Per run: the prompt tokens the embedded model's client reports for the run's real
    requests (chat ones through SmolLM2's template, with its default system prompt),
    computed by the client from its own tokenizer without running the model; and the
    prompt formats seen."""
    from holistic.adaptation import adapt
    from holistic.execution.options import RunOptions
    from holistic.execution.pipeline import _load_instances
    from holistic.models.local_client import LocalClient
    from holistic.models.registry import create_client
    from holistic.scenarios.registry import create_scenario

    client = create_client(ModelRegistry().get(EMBEDDED))  # tokenizer and config only: weights load on a request
    assert isinstance(client, LocalClient)
    out = []
    try:
        for run in runs:
            options = RunOptions(offline=True, data_root=data_root)
            train, evaluation = _load_instances(run, create_scenario(run.scenario), options)
            states = adapt(train, evaluation, run.adapter, client.deployment, client.tokenizer(), seed=run.adapter.seed)
            formats = {"chat" if state.request.messages else "plain" for state in states}
            out.append((sum(client.prompt_tokens(state.request) for state in states), formats))
    finally:
        client.close()
    return out


@pytest.mark.real_model
@pytest.mark.parametrize("name", ["quickstart.yaml", "my_dataset.yaml", "longcontext.yaml"])
def test_plan_prompt_tokens_match_the_embedded_models_own_count(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each shipped offline spec's plan, run by run, against the embedded model's own count."""
    shutil.copytree(RUNSPECS / "data", tmp_path / "data")
    spec = tmp_path / name
    shutil.copy(RUNSPECS / name, spec)
    monkeypatch.chdir(tmp_path)
    compiled = compile_spec(spec)
    runs = tuple(dataclasses.replace(r, adapter=r.adapter.replace(max_eval_instances=8)) for r in compiled.runs)
    assert {r.model for r in runs} == {EMBEDDED}
    plan = make_plan(dataclasses.replace(compiled, runs=runs), model_registry=ModelRegistry())
    formats: set[str] = set()
    for row, (actual, seen) in zip(plan.rows, _client_counts(runs), strict=True):
        formats |= seen
        assert row.size.prompt_tokens is not None
        if name != "longcontext.yaml":  # haystack's prompts are sized by its own estimate
            assert row.size.prompt_tokens_source == "exact"
        assert abs(row.size.prompt_tokens - actual) <= 0.15 * actual, (row.name, row.size.prompt_tokens, actual)
    assert formats == ({"chat", "plain"} if name == "quickstart.yaml" else {"chat"})


@pytest.mark.needs_data
@pytest.mark.real_model
def test_plan_sizes_core_runs_from_a_sample_of_their_real_prompts(tmp_path: Path) -> None:
    """core.yaml (HELM's plain prompts) on the runs whose authors' files are here: the plan
    builds the prompts of a sample of the instances and scales, within 15% of the real count."""
    root = _data_root()
    compiled = compile_spec(RUNSPECS / "core.yaml")
    wanted = {("mmlu", "abstract_algebra"), ("raft", "one_stop_english"), ("imdb", None)}
    runs = tuple(
        dataclasses.replace(r, adapter=r.adapter.replace(max_eval_instances=40))
        for r in compiled.runs
        if (r.scenario.name, r.scenario.args_dict.get("subject") or r.scenario.args_dict.get("subset")) in wanted
    )
    assert len(runs) == 3
    plan = make_plan(dataclasses.replace(compiled, runs=runs), model_registry=ModelRegistry(), data_root=root)
    for row, (actual, formats) in zip(plan.rows, _client_counts(runs, root), strict=True):
        assert formats == {"plain"}
        assert row.size.prompt_tokens_source == "sampled" and row.size.prompt_tokens is not None
        assert abs(row.size.prompt_tokens - actual) <= 0.15 * actual, (row.name, row.size.prompt_tokens, actual)


def _data_root() -> Path:
    root = find_data_root()
    if root is None or not all((root / name).is_dir() for name in ("mmlu", "raft", "imdb")):
        skip_without_data("mmlu/, raft/ and imdb/")
    return root
