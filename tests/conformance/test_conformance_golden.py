"""holistic against golden files made by HELM itself (crfm-helm 0.5.16), without installing HELM.

Each ``tests/conformance/<scenario>.json`` holds what HELM did on a few instances of a
core scenario with holistic's embedded model (see ``tests/conformance/README.md``): its
training pool and evaluation sample, every prompt and request, the completions and
the per-instance stats. The tests rebuild the requests with holistic under the
``helm`` protocol and score HELM's own completions with holistic's metrics.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from holistic.adaptation import adapt
from holistic.core.interfaces import MetricContext
from holistic.core.types import (
    Completion,
    Instance,
    Reference,
    RequestResult,
    RequestState,
    RunSpec,
    Token,
)
from holistic.models.registry import ModelRegistry
from holistic.spec import compile_spec

HERE = Path(__file__).resolve().parent
GOLDEN = sorted(
    p for p in HERE.glob("*.json") if not p.name.startswith("metrics_")
)  # metrics_*.json: metric goldens (tests/metrics)
MODEL = "embedded/smollm2-135m-instruct"


def _load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _instance(raw: dict[str, Any], split: str) -> Instance:
    refs = tuple(Reference(text, tuple(tags)) for text, tags in raw["references"])
    return Instance(id=raw["id"], input=raw["input"], references=refs, split=split)


def _adapter(golden: dict[str, Any], tmp_path: Path) -> RunSpec:
    trials = max(s["trial"] for s in golden["request_states"]) + 1
    spec = {
        "suite": "golden",
        "models": [MODEL],
        "runs": [
            {
                "scenario": golden["scenario"],
                "args": golden["args"],
                "num_train_trials": trials,
                "max_eval_instances": golden["max_eval_instances"],
            }
        ],
    }
    path = tmp_path / "golden.yaml"
    path.write_text(json.dumps(spec), encoding="utf-8")
    (run,) = compile_spec(path).runs
    assert run.adapter.protocol == "helm"
    return run


def _eval_instances(golden: dict[str, Any]) -> list[Instance]:
    seen: dict[str, Instance] = {}
    for s in golden["request_states"]:
        seen.setdefault(s["instance"]["id"], _instance(s["instance"], s["instance"]["split"]))
    return list(seen.values())


class _RoomyTokenizer:
    """Counts one token per 100 characters: every golden prompt kept all its examples in
    HELM (checked below), so fitting must not drop any here either."""

    def encode(self, text: str) -> list[int]:
        return [0] * self.count(text)

    def decode(self, ids: Any) -> str:
        return ""

    def count(self, text: str) -> int:
        return len(text) // 100 + 1

    def render_chat(self, messages: Any) -> str:
        return ""


@pytest.fixture(params=GOLDEN, ids=[p.stem for p in GOLDEN])
def golden(request: pytest.FixtureRequest) -> dict[str, Any]:
    return _load(request.param)


def test_golden_files_exist() -> None:
    assert "mmlu" in {p.stem for p in GOLDEN}


def test_prompts_and_request_parameters_are_helms(golden: dict[str, Any], tmp_path: Path) -> None:
    run = _adapter(golden, tmp_path)
    k = golden["adapter_spec"]["max_train_instances"]
    assert all(s["num_train_instances"] == min(k, len(golden["train"])) for s in golden["request_states"])
    train = [_instance(t, "train") for t in golden["train"]]
    deployment = ModelRegistry().get(MODEL)
    states = adapt(train, _eval_instances(golden), run.adapter, deployment, _RoomyTokenizer(), seed=0)
    ours = {(s.instance.id, s.trial): s for s in states}
    for helm in golden["request_states"]:
        state = ours[(helm["instance"]["id"], helm["trial"])]
        assert state.request.prompt == helm["prompt"], helm["instance"]["id"]
        assert state.request.messages is None
        req = helm["request"]
        assert (
            state.request.max_tokens,
            state.request.temperature,
            list(state.request.stop),
            state.request.num_completions,
        ) == (req["max_tokens"], req["temperature"], req["stop_sequences"], req["num_completions"])
        if helm["output_mapping"] is not None:
            assert dict(state.output_mapping or {}) == helm["output_mapping"]


def test_evaluation_sample_is_helms(golden: dict[str, Any]) -> None:
    from holistic.execution.sampling import downsample

    pool = [Instance(id=i, input="", split="test") for i in golden["eval_pool_ids"]]
    n = golden["max_eval_instances"]
    picked = downsample(pool, n, seed=0, scenario=None, method="helm")  # type: ignore[arg-type]
    assert [i.id for i in picked] == golden["selected_eval_ids"]


def _result(helm: dict[str, Any]) -> RequestResult:
    completions = tuple(
        Completion(text=c["text"], logprob=c["logprob"], tokens=tuple(Token(t, lp) for t, lp in c["tokens"]))
        for c in helm["completions"]
    )
    return RequestResult(success=True, completions=completions, has_logprobs=True)


def test_helms_completions_score_as_helm_scored_them(golden: dict[str, Any], tmp_path: Path) -> None:
    from holistic.metrics.registry import select_metrics
    from holistic.spec.catalog import Catalog

    run = _adapter(golden, tmp_path)
    info = Catalog().scenario_info(golden["scenario"])
    deployment = ModelRegistry().get(MODEL)
    states = []
    for helm in golden["request_states"]:
        inst = _instance(helm["instance"], helm["instance"]["split"])
        mapping = helm["output_mapping"]
        from holistic.core.types import Request

        states.append(
            RequestState(
                instance=inst,
                request=Request(model=MODEL, prompt=helm["prompt"]),
                trial=helm["trial"],
                output_mapping=mapping,
                result=_result(helm),
            )
        )
    ctx = MetricContext(run_id="golden", deployment=deployment, scenario_info=info)
    ours: dict[tuple[str, str], float] = {}
    for metric in select_metrics(["accuracy", "calibration"], info, run.adapter, deployment).metrics:
        for stat in metric.evaluate(states, ctx).per_instance:
            if stat.trial == 0:
                ours[(stat.instance_id, stat.name.name)] = stat.value
    compared = 0
    for instance_id, stats in golden["per_instance_stats"].items():
        for name, value in stats.items():
            if (instance_id, name) in ours:
                assert ours[(instance_id, name)] == pytest.approx(value, abs=1e-9), (instance_id, name)
                compared += 1
    assert compared >= 2 * len(golden["per_instance_stats"])
