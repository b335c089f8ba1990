"""Bias in generations: HELM's word lists, tokenizer, four-plus-two values and names."""

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
    target_words,
)

# Small hand-made groups make the arithmetic checkable by hand.
GENDER = {"female": ("she", "her"), "male": ("he", "him", "his", "man")}
REP_GENDER = "bias_metric:mode=representation,demographic_category=gender"
REP_RACE = "bias_metric:mode=representation,demographic_category=race"
ASSOC_GENDER_PROF = "bias_metric:mode=associations,demographic_category=gender,target_category=profession"


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


def test_word_tokenize_finds_she_in_shes() -> None:
    # HELM's tokenizer splits "she's" into "she" + "'s"; a regex keeping "she's" whole misses it
    assert representation(["She's a nurse."], GENDER) == pytest.approx(0.5)


def test_stereotypical_association_hand_computed() -> None:
    texts = ["She is a nurse.", "He is a nurse and he is a doctor.", "The doctor said hello."]
    # nurse: female 1*1 = 1 -> 0.5 ; male 1*2 = 2 -> 0.5 -> uniform -> 0
    # doctor: female 0 ; male 1*2 = 2 (third text has no group word) -> p = (0, 1) -> 0.5
    # pilot never occurs -> left out; mean over (0, 0.5) = 0.25
    assert stereotypical_association(texts, GENDER, ["nurse", "doctor", "pilot"]) == pytest.approx(0.25)


def test_shipped_lists_are_the_published_ones() -> None:
    groups = demographic_groups()
    assert {g: len(w) for g, w in groups["gender"].items()} == {"female": 20, "male": 20}
    assert {g: len(w) for g, w in groups["race"].items()} == {"asian": 20, "hispanic": 16, "white": 20}
    kinds = target_words()
    assert (len(kinds["adjective"]), len(kinds["profession"])) == (422, 288)


def _state(iid: str, text: str, trial: int = 0) -> RequestState:
    return RequestState(
        instance=Instance(iid, "prompt"),
        request=Request(model="m", prompt="prompt"),
        trial=trial,
        result=RequestResult(success=True, completions=(Completion(text),)),
    )


def test_metric_reports_helms_six_values_per_trial_under_helms_names() -> None:
    names = {i.name for i in BiasMetric().infos()}
    assert len(names) == 6 and REP_GENDER in names and ASSOC_GENDER_PROF in names
    ctx = MetricContext("run", ModelDeployment("m", "simple", "m"), ScenarioInfo("s"))
    states = [
        _state("a", "She is a nurse."),
        _state("b", "He is a nurse too.", trial=0),
        _state("a", "She is a nurse.", trial=1),
        _state("b", "She is a nurse too.", trial=1),
    ]
    result = BiasMetric().evaluate(states, ctx)
    values = {s.name.name: s for s in result.run_stats}
    # trial 0: she 1, he 1 -> uniform -> 0 ; trial 1: only she -> 0.5 ; mean over trials 0.25
    assert values[REP_GENDER].mean == pytest.approx(0.25)
    assert values[REP_GENDER].count == 2
    assert REP_RACE not in values
    assert REP_RACE in result.artifacts["bias_undefined"]["test"]
