"""The IFEval metric: HELM's and the authors' values from one run's responses."""

from __future__ import annotations

from typing import Any

from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import AdapterSpec, Instance
from holistic.metrics.ifeval import IFEvalMetric
from holistic.metrics.registry import select_metrics
from holistic.scenarios.registry import scenario_info
from tests.metrics.metrics_testkit import DEPLOYMENT, ctx, gen_state


def _instance(iid: str, ids: list[str], kwargs: list[dict[str, Any]]) -> Instance:
    return Instance(id=iid, input="prompt", metadata={"instruction_ids": ids, "instruction_kwargs": kwargs})


def test_prompt_level_instruction_level_and_helms_values() -> None:
    two = _instance("id1", ["punctuation:no_comma", "startend:quotation"], [{}, {}])
    one = _instance("id2", ["detectable_format:title"], [{}])
    states = [
        gen_state(two, '\n"no commas here"'),  # both followed (strictly: the quotation checker strips)
        gen_state(one, "Sure:\n<<Title>>, yes"),
    ]
    result = IFEvalMetric().evaluate(states, ctx(scenario_info("ifeval")))
    values = {(s.instance_id, s.name.name): s.value for s in result.per_instance}
    assert values[("id1", "prompt_level_strict_acc")] == 1.0
    assert values[("id1", "ifeval_strict_accuracy")] == 1.0
    assert values[("id2", "prompt_level_strict_acc")] == 1.0
    runs = {s.name.name: (s.count, s.sum) for s in result.run_stats}
    assert runs == {"inst_level_strict_acc": (3, 3.0), "inst_level_loose_acc": (3, 3.0)}
    details = next(s.details for s in result.per_instance if s.name.name == "prompt_level_strict_acc")
    assert details == {
        "instruction_ids": ["punctuation:no_comma", "startend:quotation"],
        "strict": [True, True],
        "loose": [True, True],
        "helm_strict": [True, True],
    }


def test_helm_strips_the_response_the_authors_do_not() -> None:
    # paragraph 1 is empty before the strip: the authors' checker finds no first word there
    inst = _instance(
        "id3",
        ["length_constraints:nth_paragraph_first_word"],
        [{"num_paragraphs": 2, "nth_paragraph": 1, "first_word": "alpha"}],
    )
    result = IFEvalMetric().evaluate([gen_state(inst, "\n\nAlpha one.\n\nBeta two.")], ctx(scenario_info("ifeval")))
    values = {s.name.name: s.value for s in result.per_instance}
    assert values["ifeval_strict_accuracy"] == 1.0
    assert values["prompt_level_strict_acc"] == 0.0
    assert values["prompt_level_loose_acc"] == 1.0


def test_a_failed_request_follows_nothing() -> None:
    inst = _instance("id4", ["punctuation:no_comma"], [{}])
    result = IFEvalMetric().evaluate([gen_state(inst, "x", success=False)], ctx(scenario_info("ifeval")))
    assert {s.name.name: s.value for s in result.per_instance}["ifeval_strict_accuracy"] == 0.0


def test_accuracy_of_ifeval_is_the_ifeval_metric_alone() -> None:
    info = scenario_info("ifeval")
    adapter = AdapterSpec(**info.default_adapter)
    selection = select_metrics(["accuracy"], info, adapter, DEPLOYMENT)
    assert [m.name for m in selection.metrics] == ["ifeval"]
    other = select_metrics(["ifeval"], ScenarioInfo(name="x"), adapter, DEPLOYMENT)
    assert other.metrics == [] and "tag ifeval" in other.not_applicable["ifeval"]
