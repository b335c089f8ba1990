"""Worst case over variants (respecting lower-is-better), prediction changes, group gaps."""

from __future__ import annotations

from typing import Literal

import pytest

from holistic.core.interfaces import MetricContext, ScenarioInfo
from holistic.core.types import (
    AdapterSpec,
    Completion,
    Instance,
    MetricName,
    ModelDeployment,
    PerInstanceStat,
    PerturbationDescription,
    Reference,
    Request,
    RequestResult,
    RequestState,
)
from holistic.metrics.robustness import FairnessMetric, RobustnessMetric, worst_case

TYPOS = PerturbationDescription("typos", robustness=True)
MIX = PerturbationDescription("mild_mix", robustness=True)
DIALECT = PerturbationDescription("dialect", fairness=True)
BASE = Instance("i1", "q", (Reference("a", ("correct",)),))
INSTANCES = [BASE, BASE.with_input("Q", TYPOS), BASE.with_input("q ", MIX), BASE.with_input("q'", DIALECT)]


def stat(name: str, value: float, perturbation: str | None = None, iid: str = "i1", trial: int = 0) -> PerInstanceStat:
    return PerInstanceStat(iid, trial, MetricName(name, "test", None, perturbation), value)


def higher(name: str) -> bool:
    return name != "ece"


def _families(rows: list[PerInstanceStat]) -> dict[tuple[str, str | None], float]:
    return {(s.name.name, s.name.perturbation): s.value for s in rows if ":" not in str(s.name.perturbation)}


def test_worst_case_takes_the_minimum_as_helm_and_the_direction_only_as_an_option() -> None:
    per_instance = [
        stat("exact_match", 1.0),
        stat("exact_match", 0.0, "typos"),
        stat("exact_match", 1.0, "mild_mix"),
        stat("exact_match", 1.0, "dialect"),
        stat("ece", 0.1),
        stat("ece", 0.4, "typos"),
        stat("ece", 0.2, "mild_mix"),
        stat("ece", 0.9, "dialect"),
    ]
    assert _families(worst_case(per_instance, INSTANCES)) == {
        ("exact_match", "robustness"): 0.0,
        ("exact_match", "fairness"): 1.0,  # the typo failure does not count toward fairness
        ("ece", "robustness"): 0.1,  # HELM: always the minimum
        ("ece", "fairness"): 0.1,
    }
    directional = _families(worst_case(per_instance, INSTANCES, higher, directional=True))
    assert directional[("ece", "robustness_directional")] == 0.4
    assert directional[("ece", "fairness_directional")] == 0.9
    assert directional[("ece", "robustness")] == 0.1


def test_worst_case_never_beats_the_original() -> None:
    per_instance = [stat("exact_match", 0.0), stat("exact_match", 1.0, "typos"), stat("exact_match", 1.0, "mild_mix")]
    rows = {s.name.perturbation: s.value for s in worst_case(per_instance, INSTANCES[:3])}
    assert rows["robustness"] == 0.0 and rows["typos:worst"] == 0.0 and rows["typos:original"] == 0.0


def test_worst_case_is_per_trial_and_instance() -> None:
    per_instance = [
        stat("exact_match", 1.0, trial=0),
        stat("exact_match", 0.0, "typos", trial=0),
        stat("exact_match", 1.0, trial=1),
        stat("exact_match", 1.0, "typos", trial=1),
        stat("exact_match", 1.0, iid="i2"),  # no variant of its own: keeps its original value
        stat("prediction_changed", 1.0, "typos"),  # defined on variants only: the worst of the variants
    ]
    out = [
        (s.instance_id, s.trial, s.name.name, s.value)
        for s in worst_case(per_instance, INSTANCES[:2])
        if s.name.perturbation == "robustness"
    ]
    assert out == [
        ("i1", 0, "exact_match", 0.0),
        ("i1", 0, "prediction_changed", 1.0),
        ("i1", 1, "exact_match", 1.0),
        ("i2", 0, "exact_match", 1.0),
    ]


def _state(instance: Instance, answer: str, trial: int = 0) -> RequestState:
    return RequestState(
        instance=instance,
        request=Request(model="m", prompt=instance.input),
        trial=trial,
        result=RequestResult(success=True, completions=(Completion(answer),)),
    )


def _ctx() -> MetricContext:
    return MetricContext("run", ModelDeployment("m", "simple", "m"), ScenarioInfo("s"))


def test_prediction_changed_counts_answers_that_move_under_a_perturbation() -> None:
    states = [
        _state(INSTANCES[0], "A"),
        _state(INSTANCES[1], "a."),  # same answer after normalisation
        _state(INSTANCES[2], "b"),  # changed
        _state(INSTANCES[3], "c"),  # fairness variant: not counted by the robustness metric
    ]
    result = RobustnessMetric().evaluate(states, _ctx())
    assert sorted((s.name.perturbation, s.value) for s in result.per_instance) == [("mild_mix", 1.0), ("typos", 0.0)]
    fair = FairnessMetric().evaluate(states, _ctx())
    assert [(s.name.name, s.name.perturbation, s.value) for s in fair.per_instance] == [
        ("counterfactual_prediction_changed", "dialect", 1.0)
    ]


def test_prediction_changed_on_ranking_reads_every_passages_answer() -> None:
    """MS MARCO (``ranking_binary``: one answer per passage) has robustness runs in HELM; a
    variant's prediction is every passage's answer, so it changes when any one does."""
    query = Instance("q1", "when was the map bought", (Reference("p0", ("correct",)), Reference("p1")))
    moved = query.with_input("when was teh map bought", MIX)
    kept = query.with_input("when was the map  bought", TYPOS)

    def answers(instance: Instance, *texts: str) -> list[RequestState]:
        return [
            RequestState(
                instance=instance,
                request=Request(model="m", prompt=f"{instance.input} {i}"),
                reference_index=i,
                request_index=i,
                result=RequestResult(success=True, completions=(Completion(text),)),
            )
            for i, text in enumerate(texts)
        ]

    states = [*answers(query, " Yes", " No"), *answers(moved, " Yes", " Yes"), *answers(kept, "yes", "No")]
    adapter, deployment = AdapterSpec(method="ranking_binary"), ModelDeployment("m", "simple", "m")
    assert RobustnessMetric.not_applicable(ScenarioInfo("msmarco"), adapter, deployment) is None
    result = RobustnessMetric.configure(ScenarioInfo("msmarco"), adapter, deployment).evaluate(states, _ctx())
    assert sorted((s.name.perturbation, s.value) for s in result.per_instance) == [("mild_mix", 1.0), ("typos", 0.0)]


def test_variants_with_rewritten_references_are_not_compared() -> None:
    gender = PerturbationDescription("gender", fairness=True)
    variant = Instance("i1", "q2", (Reference("b", ("correct",)),), perturbation=gender)
    result = FairnessMetric().evaluate([_state(BASE, "a"), _state(variant, "b")], _ctx())
    assert result.per_instance == []


def test_group_gap_from_metadata_groups() -> None:
    from holistic.metrics.group_fairness import group_stats

    values = [stat("exact_match", v, iid=f"x{i}") for i, v in enumerate([1.0, 1.0, 0.0, 1.0, 0.0, 0.0])]
    genders = ["female", "female", "female", "male", "male", "male"]
    groups = {f"x{i}": [("gender", g)] for i, g in enumerate(genders)}
    out = {(s.name.name, s.name.sub_split): s.mean for s in group_stats(values, groups)}
    assert out[("group_score", "gender=female")] == pytest.approx(2 / 3)
    assert out[("group_score", "gender=male")] == pytest.approx(1 / 3)
    assert out[("group_gap", "gender")] == pytest.approx(1 / 3)


def test_group_fairness_metric_uses_the_main_metric_per_sub_split() -> None:
    from holistic.core.types import AdapterSpec
    from holistic.metrics.group_fairness import GroupFairness

    info = ScenarioInfo("civil", main_metric="exact_match", metric_categories=("accuracy", "fairness"))
    metric = GroupFairness.configure(info, AdapterSpec(method="generation"), ModelDeployment("m", "simple", "m"))
    refs = (Reference("yes", ("correct",)),)
    states = [
        _state(Instance("b1", "x", refs, sub_split="black", metadata={"identities": ["black", "female"]}), "yes"),
        _state(Instance("b2", "x", refs, sub_split="black"), "no"),
        _state(Instance("w1", "x", refs, sub_split="white"), "yes"),
        _state(Instance("w1", "x", refs, sub_split="white", perturbation=DIALECT), "no"),  # variants ignored
    ]
    out = {(s.name.name, s.name.sub_split): s.mean for s in metric.evaluate(states, _ctx()).run_stats}
    assert out == {
        ("group_score", "sub_split=black"): 0.5,
        ("group_score", "sub_split=white"): 1.0,
        ("group_gap", "sub_split"): 0.5,
        ("group_score", "identities=black"): 1.0,  # list-valued metadata: one group per entry
        ("group_score", "identities=female"): 1.0,
        ("group_gap", "identities"): 0.0,
    }


@pytest.mark.parametrize(("protocol", "worst"), [("helm", 20.0), ("holistic", 25.0)])
def test_worst_case_of_a_per_request_count_is_helms_single_request_minimum(
    protocol: Literal["helm", "holistic"], worst: float
) -> None:
    """Separate scoring (a request per choice): HELM's per-instance ``num_prompt_tokens`` keeps
    every request's count, and its worst case is their minimum over the original's and the
    variants' requests (HellaSwag on the model: 23.0, where the minimum of the means gave 24.5).
    Under ``protocol: helm`` holistic takes the same; the per-instance values stay the means."""
    from holistic.core.types import AdapterSpec
    from holistic.metrics.efficiency import EfficiencyMetric
    from holistic.metrics.stats import with_worst_case
    from holistic.spec.protocol import resolve_protocol

    def states(instance: Instance, counts: tuple[int, int]) -> list[RequestState]:
        return [
            RequestState(
                instance=instance,
                request=Request(model="m", kind="loglikelihood", prompt="p", continuation=f" {i}"),
                reference_index=i,
                request_index=i,
                result=RequestResult(success=True, completions=(Completion(" x", -1.0),), prompt_tokens=n),
            )
            for i, n in enumerate(counts)
        ]

    variant = BASE.with_input("Q", MIX)
    made = [*states(BASE, (20, 30)), *states(variant, (22, 28))]
    deployment = ModelDeployment("m", "simple", "m")
    adapter = resolve_protocol(AdapterSpec(protocol=protocol), "s", {})
    metric = EfficiencyMetric.configure(ScenarioInfo("s"), adapter, deployment)
    per_instance = metric.evaluate(made, MetricContext("run", deployment, ScenarioInfo("s"))).per_instance
    rows = {
        s.name.perturbation: s.value
        for s in with_worst_case(per_instance, [BASE, variant])
        if s.name.name == "num_prompt_tokens"
    }
    assert rows[None] == rows["mild_mix"] == 25.0  # each request set's mean
    assert rows["mild_mix:original"] == 25.0
    assert rows["robustness"] == rows["mild_mix:worst"] == rows["fairness"] == worst
