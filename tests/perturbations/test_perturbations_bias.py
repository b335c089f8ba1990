"""Bias in generations: representation and stereotypical associations, hand-computed."""

from __future__ import annotations

import pytest

from holistic.core.interfaces import MetricContext, ScenarioInfo
from holistic.core.types import Completion, Instance, ModelDeployment, Request, RequestResult, RequestState
from holistic.metrics.bias import (
    BiasMetric,
    demographic_groups,
    distance_from_uniform,
    representation,
    stereotypical_association,
)

# Small hand-made groups make the arithmetic checkable by hand.
GENDER = {"female": frozenset({"she", "her"}), "male": frozenset({"he", "him", "his", "man"})}


def test_distance_from_uniform_normalises_by_list_size() -> None:
    # counts 2 and 2 over lists of size 2 and 4 -> 1.0 and 0.5 -> p = (2/3, 1/3) -> TVD = 1/6
    assert distance_from_uniform([2, 2], [2, 4]) == pytest.approx(1 / 6)
    assert distance_from_uniform([0, 0], [2, 4]) is None
    assert distance_from_uniform([3, 0], [1, 1]) == pytest.approx(0.5)


def test_representation_hand_computed() -> None:
    texts = ["She said he was right.", "He told him that his plan worked."]
    # female: she = 1 -> 1/2 = 0.5 ; male: he, he, him, his = 4 -> 4/4 = 1.0
    # p = (1/3, 2/3); TVD from (1/2, 1/2) = 0.5 * (1/6 + 1/6) = 1/6
    assert representation(texts, GENDER) == pytest.approx(1 / 6)
    assert representation(["No people here."], GENDER) is None


def test_stereotypical_association_hand_computed() -> None:
    texts = ["She is a nurse.", "He is a nurse and he is a doctor.", "The doctor said hello."]
    # nurse: female 1*1 = 1 -> 0.5 ; male 1*2 = 2 -> 0.5 -> uniform -> 0
    # doctor: female 0 ; male 1*2 = 2 (third text has no group word) -> p = (0, 1) -> 0.5
    # pilot never occurs -> left out; mean over (0, 0.5) = 0.25
    assert stereotypical_association(texts, GENDER, ["nurse", "doctor", "pilot"]) == pytest.approx(0.25)


def test_shipped_lists_and_metric_run_stats() -> None:
    groups = demographic_groups()
    assert set(groups) == {"gender", "race"}
    assert set(groups["race"]) == {"asian", "hispanic", "white"}
    sizes = {g: len(w) for g, w in groups["gender"].items()}
    texts = ["She is a nurse.", "She is a nurse too."]
    scores = BiasMetric.scores(texts)
    assert scores["bias_representation_gender"] == pytest.approx(0.5)  # only female words
    assert scores["bias_stereotype_gender_profession"] == pytest.approx(0.5)
    assert scores["bias_representation_race"] is None
    assert sizes["female"] > 10 and sizes["male"] > 10

    def state(iid: str, text: str) -> RequestState:
        return RequestState(
            instance=Instance(iid, "prompt"),
            request=Request(model="m", prompt="prompt"),
            result=RequestResult(success=True, completions=(Completion(text),)),
        )

    ctx = MetricContext("run", ModelDeployment("m", "simple", "m"), ScenarioInfo("s"))
    result = BiasMetric().evaluate([state("a", texts[0]), state("b", texts[1])], ctx)
    values = {s.name.name: s.mean for s in result.run_stats}
    assert values["bias_representation_gender"] == pytest.approx(0.5)
    assert "bias_representation_race" not in values
    assert "bias_representation_race" in result.artifacts["bias_undefined"]["test"]
