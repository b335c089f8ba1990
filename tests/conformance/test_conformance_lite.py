"""HELM Lite's LegalBench, MedQA and WMT14 against HELM's own (crfm-helm 0.5.16), without HELM.

``lite/helm_requests.json.gz`` was written by ``tools/conformance/helm/lite.py``: HELM's scenario
classes, HELM Lite's run specs and HELM's adapters on the same bytes holistic reads (the data
mirror's files; see that script for how each is given to HELM), every evaluation prompt's sha256,
and HELM's reference stats of the embedded model's answers. Here holistic builds the runs of
``runspecs/lite.yaml``: every evaluation instance must be HELM's, in HELM's order, with HELM's
prompt (in-context examples included) and request parameters, and holistic's metrics must give
HELM's stats on the same answers. BLEU-4 is also compared on fixed pairs, HELM's own test case
among them.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from holistic.adaptation import adapt
from holistic.core.interfaces import MetricContext, ScenarioContext
from holistic.core.types import TRAIN_SPLIT, Completion, RequestResult, RunSpec
from holistic.metrics.overlap import bleu_scores
from holistic.metrics.registry import select_metrics
from holistic.models.registry import ModelRegistry
from holistic.scenarios.registry import create_scenario
from holistic.spec import compile_spec
from holistic.spec.catalog import Catalog
from tests.conformance.test_conformance_golden import _RoomyTokenizer
from tools.conformance.helm.lite import instance_key, run_key

HERE = Path(__file__).resolve().parent
with gzip.open(HERE / "lite" / "helm_requests.json.gz", "rt", encoding="utf-8") as _fh:
    GOLDEN: dict[str, Any] = json.load(_fh)
SPEC = HERE.parents[1] / "runspecs" / "lite.yaml"
KEYS = sorted(GOLDEN["runs"])


def _run(key: str) -> RunSpec:
    (run,) = [r for r in compile_spec(SPEC).runs if run_key(r.scenario.name, dict(r.scenario.args_dict)) == key]
    assert run.adapter.protocol == "helm"
    return run


def _states(key: str, data_root: Path) -> tuple[RunSpec, list[Any], int]:
    """The run, holistic's request states for every evaluation instance, and its training pool's size."""
    run = _run(key)
    instances = create_scenario(run.scenario).get_instances(ScenarioContext(data_root=data_root, offline=True))
    train = [i for i in instances if i.split == TRAIN_SPLIT]
    evaluation = [i for i in instances if i.split != TRAIN_SPLIT]
    deployment = replace(ModelRegistry().get(run.model), context_window=1 << 20)
    states = adapt(train, evaluation, run.adapter, deployment, _RoomyTokenizer(), seed=run.adapter.seed)
    return run, states, len(train)


def _key(state: Any) -> str:
    return instance_key(state.instance.input, [(r.output, r.is_correct) for r in state.instance.references])


def test_golden_covers_the_lite_runs_it_names() -> None:
    assert (
        sorted(
            ["legalbench:abercrombie", "legalbench:corporate_lobbying", "legalbench:proa", "med_qa"]
            + [f"wmt_14:{x}-en" for x in ("cs", "de", "fr", "hi", "ru")]
        )
        == KEYS
    )
    assert GOLDEN["runs"]["wmt_14:de-en"]["run_spec"] == "wmt_14:language_pair=de-en"
    assert all(GOLDEN["runs"][k]["stats"] for k in KEYS)


@pytest.mark.needs_data
@pytest.mark.parametrize("key", KEYS)
def test_prompts_and_requests_are_helms(key: str, data_root: Path) -> None:
    """Every evaluation instance HELM built, in HELM's order, with HELM's prompt and parameters."""
    helm = GOLDEN["runs"][key]
    _, states, num_train = _states(key, data_root)
    assert num_train == helm["num_train"]
    assert [s.trial for s in states] == [0] * len(states)
    ours = [[_key(s), s.instance.split, hashlib.sha256(s.request.prompt.encode()).hexdigest()[:16]] for s in states]
    assert len(ours) == len(helm["eval"])
    assert [o[:2] for o in ours] == [h[:2] for h in helm["eval"]], "instances or their order differ"
    for index, prompt in enumerate(helm["prompts"]):
        assert states[index].request.prompt == prompt
    differ = [i for i, (o, h) in enumerate(zip(ours, helm["eval"], strict=True)) if o[2] != h[2]]
    assert differ == [], f"{len(differ)} prompts differ, first at {differ[:1]}"
    expected = helm["request"]
    for state in states[:5]:
        request = state.request
        assert request.temperature == expected["temperature"]
        assert request.max_tokens == expected["max_tokens"]
        assert list(request.stop) == expected["stop_sequences"]
        assert request.num_completions == expected["num_completions"]


@pytest.mark.needs_data
@pytest.mark.parametrize("key", KEYS)
def test_answers_score_as_helm_scored_them(key: str, data_root: Path) -> None:
    """The embedded model's answers, scored by holistic's metrics, give HELM's stats (BLEU-4 included)."""
    helm = GOLDEN["runs"][key]
    run, states, _ = _states(key, data_root)
    answered = []
    for state in states:
        stats = helm["stats"].get(_key(state))
        if stats is not None:
            completion = Completion(text=stats["completion"], logprob=0.0, tokens=())
            answered.append(replace(state, result=RequestResult(success=True, completions=(completion,))))
    assert len(answered) == len(helm["stats"]) >= 2
    info = Catalog().scenario_info(run.scenario.name)
    deployment = ModelRegistry().get(run.model)
    ctx = MetricContext(run_id="lite", deployment=deployment, scenario_info=info)
    ours: dict[tuple[str, str], float] = {}
    for metric in select_metrics(["accuracy"], info, run.adapter, deployment).metrics:
        for stat in metric.evaluate(answered, ctx).per_instance:
            ours[(stat.instance_id, stat.name.name)] = stat.value
    compared = set()
    for state in answered:
        expected = helm["stats"][_key(state)]
        for name in helm["metric_names"]:  # the run spec's names (HELM's max_prob and name@k aside)
            # A joint multiple-choice answer is a letter mapped to a choice: HELM's quasi and prefix
            # variants of exact match equal its exact match there, which holistic reports alone.
            mine = ours.get((state.instance.id, name), ours[(state.instance.id, "exact_match")])
            if (state.instance.id, name) not in ours:
                assert run.adapter.method == "multiple_choice_joint", name
            assert mine == pytest.approx(expected[name], abs=1e-9), (state.instance.id, name)
            compared.add(name)
    assert compared == set(helm["metric_names"])


def test_bleu_4_is_helms_on_helms_own_test_case_and_fixed_pairs() -> None:
    cases = GOLDEN["bleu"]
    assert cases[0]["gold"] == "the quick brown fox jumped over the lazy dog"  # HELM's test_bleu_1
    assert cases[0]["bleu_1"] == pytest.approx(0.6065306597126334)
    for case in cases:
        ours = bleu_scores(case["pred"].strip(), [case["gold"]])
        assert ours["bleu_1"] == pytest.approx(case["bleu_1"], abs=1e-12), case
        assert ours["bleu_4"] == pytest.approx(case["bleu_4"], abs=1e-12), case
