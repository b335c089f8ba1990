"""The capabilities suite's requests against HELM's own (crfm-helm 0.5.16), without HELM.

``capabilities/helm_requests.json`` was written by ``tools/conformance/helm/capabilities.py``:
HELM's scenario classes, Capabilities run specs and adapters on the same bytes (the real
GPQA zip and IFEval file, and MMLU-Pro rows in the release's schema that the file
holds). Here holistic builds the runs of ``runspecs/capabilities.yaml`` and every
evaluated instance must have HELM's id, prompt (by sha256 for the real data, whose text
stays out of the repository) and request parameters; HELM's answer parsing for
``chain_of_thought_correctness`` is checked on the recorded responses.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from holistic.adaptation import adapt
from holistic.core.types import RunSpec
from holistic.execution.options import RunOptions
from holistic.execution.pipeline import _load_instances
from holistic.metrics.chain_of_thought import extract_answer
from holistic.metrics.ifeval import IFEvalMetric
from holistic.models.registry import ModelRegistry
from holistic.scenarios.ifeval import read_row
from holistic.scenarios.registry import create_scenario, scenario_info
from holistic.spec import compile_spec
from tests.conformance.test_conformance_golden import _RoomyTokenizer
from tests.metrics.metrics_testkit import ctx, gen_state
from tests.support.data import find_data_root, skip_without_data
from tests.support.ifeval_responses import all_responses, random_letter_slots

GOLDEN = json.loads((Path(__file__).parent / "capabilities" / "helm_requests.json").read_text(encoding="utf-8"))
SPEC = Path(__file__).resolve().parents[2] / "runspecs" / "capabilities.yaml"


def _run(scenario: str) -> RunSpec:
    (run,) = [r for r in compile_spec(SPEC).runs if r.scenario.name == scenario]
    assert run.adapter.protocol == "helm"
    return run


def _requests(run: RunSpec, data_root: Path) -> dict[str, Any]:
    train, evaluation = _load_instances(
        run, create_scenario(run.scenario), RunOptions(offline=True, data_root=data_root)
    )
    # HELM's requests here are the run specs' own (its window was roomy); the embedded
    # model caps its answers at 512 tokens, so the deployment is given room for 4096.
    deployment = replace(ModelRegistry().get(run.model), max_output_tokens=8192, context_window=16384)
    states = adapt(train, evaluation, run.adapter, deployment, _RoomyTokenizer(), seed=run.adapter.seed)
    return {s.instance.id: s.request for s in states}


def _check(scenario: str, data_root: Path) -> None:
    ours = _requests(_run(scenario), data_root)
    helm = GOLDEN[scenario]["requests"]
    assert sorted(ours) == sorted(h["id"] for h in helm)
    for expected in helm:
        request = ours[expected["id"]]
        assert request.prompt is not None and request.messages is None
        if expected["prompt"] is not None:
            assert request.prompt == expected["prompt"]
        assert hashlib.sha256(request.prompt.encode("utf-8")).hexdigest() == expected["prompt_sha256"], expected["id"]
        assert request.temperature == expected["temperature"]
        assert request.max_tokens == expected["max_tokens"]
        assert list(request.stop) == expected["stop_sequences"]
        assert request.num_completions == expected["num_completions"]


def _real(folder: str, name: str) -> Path:
    root = find_data_root()
    if root is None or not (root / folder / name).is_file():
        skip_without_data(f"{folder}/{name}")
    return root


@pytest.mark.needs_data
def test_gpqa_requests_are_helms() -> None:
    assert GOLDEN["gpqa"]["run_spec"] == "gpqa:subset=gpqa_main,use_chain_of_thought=true,use_few_shot=false"
    _check("gpqa", _real("gpqa", "dataset.zip"))


@pytest.mark.needs_data
def test_ifeval_requests_are_helms() -> None:
    _check("ifeval", _real("ifeval", "input_data.jsonl"))


def test_mmlu_pro_requests_are_helms(tmp_path: Path) -> None:
    folder = tmp_path / "mmlu_pro" / "data"
    folder.mkdir(parents=True)
    rows = GOLDEN["mmlu_pro_rows"]
    pq.write_table(
        pa.Table.from_pylist([r for r in rows if r["question_id"] != 1]), folder / "test-00000-of-00001.parquet"
    )
    pq.write_table(
        pa.Table.from_pylist([r for r in rows if r["question_id"] == 1]), folder / "validation-00000-of-00001.parquet"
    )
    _check("mmlu_pro", tmp_path)


def _write_test_rows(root: Path, scenario: str) -> list[dict[str, Any]]:
    """The golden's rows of ``scenario`` as its ``test.jsonl`` under ``root``; returns them."""
    folder = root / scenario
    folder.mkdir()
    rows: list[dict[str, Any]] = GOLDEN[f"{scenario}_rows"]
    (folder / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return rows


def test_omni_math_requests_are_helms(tmp_path: Path) -> None:
    _write_test_rows(tmp_path, "omni_math")
    assert all(r["prompt"] is not None for r in GOLDEN["omni_math"]["requests"])
    _check("omni_math", tmp_path)


def test_wildbench_requests_are_helms_chat_messages(tmp_path: Path) -> None:
    """HELM's ChatAdapter sends each conversation as messages, verbatim; holistic's requests are the same."""
    rows = _write_test_rows(tmp_path, "wildbench")
    helm = GOLDEN["wildbench"]
    assert helm["run_spec"] == "wildbench:subset=v2"
    ours = list(_requests(_run("wildbench"), tmp_path).values())
    assert len(ours) == len(helm["requests"]) == len(rows)
    for request, expected in zip(ours, helm["requests"], strict=True):  # matched by position: HELM numbers them
        assert request.messages is not None and request.prompt == expected["prompt"] == ""
        assert [{"role": m.role, "content": m.content} for m in request.messages] == expected["messages"]
        assert request.temperature == expected["temperature"]
        assert request.max_tokens == expected["max_tokens"]
        assert list(request.stop) == expected["stop_sequences"]
        assert request.num_completions == expected["num_completions"]


def test_chain_of_thought_answers_are_parsed_as_helm_parses_them() -> None:
    for text, letter in GOLDEN["chain_of_thought_answers"]:
        assert extract_answer(text) == letter, text


@pytest.mark.needs_data
def test_ifeval_strict_accuracy_is_helms_on_every_response() -> None:
    """HELM's ``IFEvalMetric`` value on ~6,800 responses to all 541 prompts equals holistic's."""
    root = _real("ifeval", "input_data.jsonl")
    with (root / "ifeval" / "input_data.jsonl").open(encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    with gzip.open(
        Path(__file__).parent / "capabilities" / "helm_ifeval_strict.jsonl.gz", "rt", encoding="utf-8"
    ) as fh:
        helm = {(g["key"], g["variant"]): g["ifeval_strict_accuracy"] for g in map(json.loads, fh)}
    excused = {key for key, _ in random_letter_slots(rows)}  # HELM counts a random letter there
    by_key = {row["key"]: read_row(row, f"row {row['key']}") for row in rows}
    states = [
        gen_state(replace(by_key[key], id=f"{key}/{variant}"), text)
        for key, variant, text in all_responses(rows)
        if key not in excused
    ]
    result = IFEvalMetric().evaluate(states, ctx(scenario_info("ifeval")))
    ours = {s.instance_id: s.value for s in result.per_instance if s.name.name == "ifeval_strict_accuracy"}
    assert len(ours) == len(states) > 6000
    differ = [(k, v, helm[k]) for k, v in ((tuple_key(i), v) for i, v in ours.items()) if v != helm[k]]
    assert differ == []
    assert len({k for k, _ in helm}) == 541


def tuple_key(instance_id: str) -> tuple[int, str]:
    key, variant = instance_id.split("/", 1)
    return int(key), variant
