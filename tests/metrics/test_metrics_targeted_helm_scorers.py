"""HELM's scorers for WikiFact, synthetic reasoning (natural language), Dyck, LegalSupport,
entity matching and data imputation, against values worked out by hand in each test."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest

from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import AdapterSpec, PerInstanceStat
from holistic.metrics.accuracy import (
    GenerationAccuracy,
    MultipleChoiceAccuracy,
    answer_set,
    exact_match_indicator,
    exact_set_match,
    f1_set_match,
    iou_set_match,
)
from holistic.metrics.breakdown import breakdown_values
from holistic.metrics.stats import aggregate
from holistic.scenarios.registry import scenario_info
from tests.metrics.metrics_testkit import DEPLOYMENT, ctx, gen_state, instance


def _values(per_instance: Sequence[PerInstanceStat], name: str) -> dict[str, float]:
    return {s.instance_id: s.value for s in per_instance if s.name.name == name and s.name.sub_split is None}


def _configured(scenario: str) -> GenerationAccuracy:
    info = scenario_info(scenario)
    metric = GenerationAccuracy.configure(info, AdapterSpec(), DEPLOYMENT)
    assert isinstance(metric, GenerationAccuracy)
    return metric


# --- synthetic reasoning (natural language): set match ---------------------------------------


def test_answer_sets_as_helm_reads_them() -> None:
    assert answer_set("The cow is purple and cold.") == {"purple", "cold"}
    assert answer_set("Carol is red.") == {"red"}
    assert answer_set("Nothing.") == set()
    assert answer_set("Nothing") == {"Nothing"}  # only the exact sentence is the empty set


@pytest.mark.parametrize(
    ("prediction", "reference", "f1", "iou", "exact"),
    [
        # {purple, big} vs {purple, cold}: 1 in common; F1 = 2*1/(2+2), IoU = 1/3.
        (" The cow is purple and big.", "The cow is purple and cold.", 0.5, 1 / 3, 0.0),
        # Order does not matter; only the first line of the answer is read.
        ("The cow is cold and purple.\nThe cow is big.", "The cow is purple and cold.", 1.0, 1.0, 1.0),
        # {purple} vs {purple, cold, big}: F1 = 2*1/(1+3) = 0.5, IoU = 1/3.
        ("The cow is purple.", "The cow is purple and cold and big.", 0.5, 1 / 3, 0.0),
        # An empty gold set only matches an empty answer set.
        ("Nothing.", "Nothing.", 1.0, 1.0, 1.0),
        ("The cow is purple.", "Nothing.", 0.0, 0.0, 0.0),
        ("", "The cow is purple.", 0.0, 0.0, 0.0),
    ],
)
def test_set_match_scores(prediction: str, reference: str, f1: float, iou: float, exact: float) -> None:
    assert f1_set_match(prediction, reference) == pytest.approx(f1)
    assert iou_set_match(prediction, reference) == pytest.approx(iou)
    assert exact_set_match(prediction, reference) == exact


def test_srn_run_reports_the_set_family_and_its_mean() -> None:
    metric = _configured("synthetic_reasoning_natural")
    assert {"f1_set_match", "iou_set_match", "exact_set_match"} <= set(metric.scorers)
    states = [
        gen_state(instance("s1", ["The cow is purple and cold."]), " The cow is purple and big."),
        gen_state(instance("s2", ["Nothing."]), " Nothing."),
        gen_state(instance("s3", ["Dan is sad."]), " Dan is happy."),
    ]
    per_instance = metric.evaluate(states, ctx()).per_instance
    assert _values(per_instance, "f1_set_match") == {"s1": 0.5, "s2": 1.0, "s3": 0.0}
    means = {s.name.name: s.mean for s in aggregate(per_instance, seed=0, num_resamples=10)}
    assert means["f1_set_match"] == pytest.approx((0.5 + 1.0 + 0.0) / 3)
    assert means["iou_set_match"] == pytest.approx((1 / 3 + 1.0 + 0.0) / 3)
    assert means["exact_set_match"] == pytest.approx(1 / 3)


# --- Dyck: exact_match_indicator --------------------------------------------------------------


def test_dyck_indicator_compares_only_the_last_bracket() -> None:
    assert exact_match_indicator(" ] ) )", " ] ) )") == 1.0
    assert exact_match_indicator(" ) )", " ] ) )") == 1.0  # HELM: both end in ")"
    assert exact_match_indicator(" ] ) ]", " ] ) )") == 0.0
    assert exact_match_indicator("", " )") == 0.0
    metric = _configured("dyck_language")
    states = [
        gen_state(instance("d1", [" ] ) )"]), " ] ) )"),
        gen_state(instance("d2", [" ] ) )"]), " ) )"),
        gen_state(instance("d3", [" }"]), " >"),
    ]
    per_instance = metric.evaluate(states, ctx()).per_instance
    assert _values(per_instance, "exact_match_indicator") == {"d1": 1.0, "d2": 1.0, "d3": 0.0}
    assert _values(per_instance, "exact_match") == {"d1": 1.0, "d2": 0.0, "d3": 0.0}


# --- WikiFact: one sample and top-k -------------------------------------------------------------


def test_wikifact_accuracy_on_the_first_sample_and_best_of_k() -> None:
    metric = _configured("wikifact")
    hill = replace(instance("w1", ["mountain", "hill"]), metadata={"relation": "instance_of"})
    author = replace(instance("w2", ["Mira Osei"]), metadata={"relation": "author"})
    states = [
        # First sample "Mountain range": not quasi-exact ("mountain range" != "mountain"), but a quasi prefix.
        gen_state(hill, " Mountain range", " a Hill", " river", " lake", " town"),
        # No sample names the author.
        gen_state(author, " Ada Lindqvist", " Tomas", " a poet", " Mira", " unknown"),
    ]
    per_instance = metric.evaluate(states, ctx()).per_instance
    assert _values(per_instance, "quasi_exact_match") == {"w1": 0.0, "w2": 0.0}
    assert _values(per_instance, "quasi_prefix_exact_match") == {"w1": 1.0, "w2": 0.0}
    assert _values(per_instance, "quasi_exact_match@k") == {"w1": 1.0, "w2": 0.0}  # " a Hill" -> "hill"
    assert _values(per_instance, "exact_match@k") == {"w1": 0.0, "w2": 0.0}
    groups = breakdown_values(per_instance, [hill, author], ("relation",))
    by_group = {
        s.name.sub_split: s.mean
        for s in aggregate(groups, seed=0, num_resamples=10)
        if s.name.name == "quasi_exact_match@k"
    }
    assert by_group == {"relation=instance_of": 1.0, "relation=author": 0.0}


# --- LegalSupport, entity matching, data imputation ----------------------------------------------


def test_legal_support_joint_choice_accuracy() -> None:
    choices = ["holding that silence was acceptance", "holding that silence was not acceptance"]
    mapping = dict(zip("AB", choices, strict=True))
    states = [
        gen_state(instance("l1", choices, correct=[1]), " B", mapping=mapping),
        gen_state(instance("l2", choices, correct=[0]), " B", mapping=mapping),
        gen_state(instance("l3", choices, correct=[0, 1]), " A", mapping=mapping),
        gen_state(instance("l4", choices, correct=[0]), " C", mapping=mapping),  # no such choice
    ]
    per_instance = MultipleChoiceAccuracy("multiple_choice_joint").evaluate(states, ctx()).per_instance
    assert _values(per_instance, "exact_match") == {"l1": 1.0, "l2": 0.0, "l3": 1.0, "l4": 0.0}
    assert _values(per_instance, "invalid_answer") == {"l1": 0.0, "l2": 0.0, "l3": 0.0, "l4": 1.0}


def test_entity_matching_and_imputation_answers() -> None:
    metric = _configured("entity_matching")
    states = [
        gen_state(instance("m1", ["Yes"]), " Yes"),
        gen_state(instance("m2", ["No"]), " no."),
        gen_state(instance("m3", ["Yes"]), " Yes, they are"),
        gen_state(instance("i1", ["Pellworth"]), " pellworth"),
        gen_state(instance("i2", ["nan"]), " Arcwell"),
    ]
    per_instance = metric.evaluate(states, ctx(ScenarioInfo(name="entity_matching"))).per_instance
    assert _values(per_instance, "exact_match") == {"m1": 1.0, "m2": 0.0, "m3": 0.0, "i1": 0.0, "i2": 0.0}
    assert _values(per_instance, "quasi_exact_match") == {"m1": 1.0, "m2": 1.0, "m3": 0.0, "i1": 1.0, "i2": 0.0}
    assert _values(per_instance, "prefix_exact_match") == {"m1": 1.0, "m2": 0.0, "m3": 1.0, "i1": 0.0, "i2": 0.0}


def test_generation_accuracy_rejects_unknown_extra_scorers() -> None:
    with pytest.raises(ValueError, match="unknown extra scorer"):
        GenerationAccuracy(extra=("f1_set_mach",))
    assert "exact_match_indicator" not in _configured("babi_qa").scorers


def test_single_sample_scores_use_the_most_probable_sample() -> None:
    hill = instance("w1", ["hill"])
    state = gen_state(hill, " river", " hill", " lake")
    assert state.result is not None
    completions = tuple(
        replace(c, logprob=lp) for c, lp in zip(state.result.completions, (-5.0, -1.5, -3.0), strict=True)
    )
    ranked = replace(state, result=replace(state.result, completions=completions, has_logprobs=True))
    per_instance = GenerationAccuracy().evaluate([ranked], ctx()).per_instance
    # " hill" has the highest log-probability (-1.5), so it is the sample scored alone, as in HELM.
    assert _values(per_instance, "exact_match") == {"w1": 1.0}
    # Without log-probabilities the first sample (" river") is scored; @k is the same either way.
    plain = GenerationAccuracy().evaluate([state], ctx()).per_instance
    assert _values(plain, "exact_match") == {"w1": 0.0}
    assert _values(plain, "exact_match@k") == _values(per_instance, "exact_match@k") == {"w1": 1.0}
