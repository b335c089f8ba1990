"""HELM's classification F1 (``classification_macro_f1`` / ``classification_micro_f1``):
where it is measured and how it groups (HELM's own values: ``test_metrics_helm_goldens.py``)."""

from __future__ import annotations

import pytest

from holistic.core.types import AdapterSpec
from holistic.metrics.classification import ClassificationMetric, f1_scores, normalize_label
from holistic.metrics.registry import select_metrics
from holistic.spec.catalog import Catalog

from .metrics_testkit import DEPLOYMENT, ctx, gen_state, instance


def test_labels_are_normalised_as_helm_keeps_articles() -> None:
    assert normalize_label("  Not ADE-related. ") == "not aderelated"
    assert normalize_label("The Positive") == "the positive"


def test_f1_by_hand() -> None:
    true = [["pos"], ["neg"], ["pos"], ["neg"]]
    predicted = [["pos"], ["pos"], ["maybe"], ["neg"]]  # "maybe" is no label: negative for both
    # pos: TP 1, FP 1, FN 1 -> 1/2; neg: TP 1, FP 0, FN 1 -> 2/3
    assert f1_scores(true, predicted) == {
        "classification_macro_f1": pytest.approx((1 / 2 + 2 / 3) / 2),
        "classification_micro_f1": pytest.approx(4 / 7),
    }
    assert f1_scores([], []) == {}


@pytest.mark.parametrize(("scenario", "measured"), [("imdb", True), ("raft", True), ("boolq", False)])
def test_measured_with_accuracy_on_helms_classification_scenarios(scenario: str, measured: bool) -> None:
    info = Catalog().scenario_info(scenario)
    chosen = select_metrics(["accuracy"], info, AdapterSpec(method="generation"), DEPLOYMENT).metrics
    assert ("classification" in {m.name for m in chosen}) is measured


def test_per_perturbation_and_mean_over_trials() -> None:
    a, b = instance("a", ["yes"]), instance("b", ["no"])
    a_typo = instance("a", ["yes"], perturbation="typos")
    states = [
        gen_state(a, "yes"),
        gen_state(b, "no"),
        gen_state(a, "no", trial=1),
        gen_state(b, "no", trial=1),
        gen_state(a_typo, "yes"),
    ]
    stats = {(s.name.name, s.name.perturbation): s for s in ClassificationMetric().evaluate(states, ctx()).run_stats}
    # trial 0: both right (1.0); trial 1: yes never predicted -> macro (0 + 2/3) / 2, micro 1/2
    assert stats[("classification_macro_f1", None)].mean == pytest.approx((1 + 1 / 3) / 2)
    assert stats[("classification_micro_f1", None)].mean == pytest.approx(0.75)
    assert stats[("classification_micro_f1", "typos")].mean == 1.0
