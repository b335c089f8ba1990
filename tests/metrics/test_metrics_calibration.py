from __future__ import annotations

import math

import numpy as np
import pytest

from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import AdapterSpec, MetricName, RequestState
from holistic.metrics.calibration import CalibrationMetric
from holistic.metrics.calibration_math import (
    coverage_accuracy_area,
    expected_calibration_error,
    fit_platt,
    helm_ece,
    reliability_bins,
    selective_accuracies,
    selective_accuracy,
)
from tests.metrics.metrics_testkit import DEPLOYMENT, ctx, gen_state, instance, score_state, tokens


def test_ece_by_hand_with_equal_mass_bins() -> None:
    conf = [0.9, 0.8, 0.7, 0.6]
    hits = [1, 1, 0, 0]
    # 2 bins: {0.6,0.7} acc 0 conf .65 ; {0.8,0.9} acc 1 conf .85 -> .5*.65 + .5*.15 = .4
    assert expected_calibration_error(conf, hits, 2) == pytest.approx(0.4)
    # 1 bin: |0.5 - 0.75| = 0.25
    assert expected_calibration_error(conf, hits, 1) == pytest.approx(0.25)
    # 10 bins with 4 items: every item alone -> mean |hit - conf| = (.1+.2+.7+.6)/4
    assert expected_calibration_error(conf, hits, 10) == pytest.approx(0.4)


def test_reliability_bins_are_equal_mass() -> None:
    conf = np.linspace(0.05, 0.95, 20)
    bins = reliability_bins(conf, np.ones(20), 10)
    assert [b.count for b in bins] == [2] * 10
    assert bins[0].confidence == pytest.approx((0.05 + conf[1]) / 2)


def test_identical_confidences_are_never_split_and_order_does_not_matter() -> None:
    hits = [1, 0, 0, 1, 1, 0, 1, 1]
    conf = [0.7] * 8
    assert len(reliability_bins(conf, hits, 10)) == 1
    assert expected_calibration_error(conf, hits, 10) == pytest.approx(abs(5 / 8 - 0.7))
    assert expected_calibration_error(conf, hits[::-1], 10) == expected_calibration_error(conf, hits, 10)
    # selective accuracy inside a tie is the tie's mean correctness
    assert selective_accuracy(conf, hits, 0.1) == pytest.approx(5 / 8)


def test_selective_accuracy_and_area_by_hand() -> None:
    conf = [0.9, 0.8, 0.7, 0.6]
    hits = [1, 0, 1, 0]
    assert selective_accuracies(conf, hits).tolist() == pytest.approx([1.0, 0.5, 2 / 3, 0.5])
    assert selective_accuracy(conf, hits, 0.1) == 1.0  # ceil(0.4) = 1 instance
    assert selective_accuracy(conf, hits, 0.5) == 0.5
    assert coverage_accuracy_area(conf, hits) == pytest.approx((1 + 0.5 + 2 / 3 + 0.5) / 4)


def test_single_instance() -> None:
    assert expected_calibration_error([0.8], [1], 10) == pytest.approx(0.2)
    assert selective_accuracy([0.8], [0], 0.1) == 0.0


def test_platt_scaling_reduces_miscalibration_and_stays_finite_when_all_correct() -> None:
    rng = np.random.default_rng(0)
    true_p = rng.uniform(0.2, 0.9, size=2000)
    hits = (rng.uniform(size=2000) < true_p).astype(float)
    overconfident = 1 / (1 + np.exp(-3 * np.log(true_p / (1 - true_p))))
    platt = fit_platt(overconfident, hits)
    assert platt.slope == pytest.approx(1 / 3, abs=0.05)
    assert expected_calibration_error(platt(overconfident), hits) < expected_calibration_error(overconfident, hits) / 2
    allright = fit_platt([0.6, 0.7, 0.8], [1, 1, 1])
    assert math.isfinite(allright.slope) and math.isfinite(allright.intercept)
    assert np.all(allright([0.6, 0.7]) > np.array([0.6, 0.7]))


def test_bad_confidences_are_rejected() -> None:
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        expected_calibration_error([1.5], [1])
    with pytest.raises(ValueError, match="equal length"):
        expected_calibration_error([0.5, 0.5], [1])


def _mc_states() -> list[RequestState]:
    states = []
    # 4 instances, separate method; probabilities of the pick via softmax of two scores
    spec = [("a", [-0.1, -3.0], 0), ("b", [-0.2, -2.0], 1), ("c", [-1.0, -1.1], 0), ("d", [-4.0, -0.5], 1)]
    for iid, scores, correct in spec:
        inst = instance(iid, ["x", "y"], correct=[correct])
        states += [score_state(inst, j, s, continuation=f" {j}") for j, s in enumerate(scores)]
    return states


def test_calibration_metric_on_multiple_choice_states() -> None:
    metric = CalibrationMetric("multiple_choice_separate_original")
    result = metric.evaluate(_mc_states(), ctx())
    probs = {s.instance_id: s.value for s in result.per_instance}
    assert probs["a"] == pytest.approx(1 / (1 + math.exp(-2.9)))
    run = {s.name.name: s for s in result.run_stats}
    assert set(run) == {
        "ece_10_bin",
        "ece_1_bin",
        "platt_ece_10_bin",
        "platt_ece_1_bin",
        "platt_coef",
        "platt_intercept",
        "selective_acc@10",
        "selective_cov_acc_area",
    }
    conf = [probs[i] for i in "abcd"]
    hits = [1, 0, 1, 1]
    assert run["ece_1_bin"].mean == pytest.approx(abs(np.mean(conf) - 0.75))
    assert run["ece_10_bin"].mean == pytest.approx(helm_ece(conf, hits, 10))
    assert run["ece_10_bin"].count == 1  # one trial
    assert run["ece_10_bin"].name == MetricName("ece_10_bin", "test", None, None)
    diagram = result.artifacts["calibration"]["reliability"][0]
    assert sum(b["count"] for b in diagram["bins"]) == 4
    assert set(diagram["bins"][0]) == {"confidence", "accuracy", "count"}


def test_calibration_metric_for_generation_uses_sequence_probability() -> None:
    info = ScenarioInfo(name="s", metric_categories=("accuracy", "calibration"))
    a = instance("a", ["4"])
    b = instance("b", ["9"])
    states = [
        gen_state(a, "4", logprob_tokens=tokens(("4", math.log(0.9)))),
        gen_state(b, "8", logprob_tokens=tokens(("8", math.log(0.5)), ("\n", math.log(0.8)))),
    ]
    result = CalibrationMetric("generation").evaluate(states, ctx(info))
    probs = {s.instance_id: s.value for s in result.per_instance}
    assert probs == pytest.approx({"a": 0.9, "b": 0.4})
    ece1 = next(s for s in result.run_stats if s.name.name == "ece_1_bin")
    assert ece1.mean == pytest.approx(abs(0.65 - 0.5))


def test_generation_without_logprobs_has_no_pairs() -> None:
    a = instance("a", ["4"])
    result = CalibrationMetric("generation").evaluate([gen_state(a, "4")], ctx())
    assert result.per_instance == [] and result.run_stats == []


def test_platt_fit_agrees_with_scikit_learn() -> None:
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(5)
    conf = rng.uniform(0.3, 0.99, size=500)
    hits = (rng.uniform(size=500) < conf**2).astype(float)
    ours = fit_platt(conf, hits)
    logits = np.log(conf / (1 - conf))[:, None]
    # sklearn's L2 is centred on 0 rather than on the identity map; with a weak penalty both are the MLE
    reference = LogisticRegression(C=1e6, max_iter=1000).fit(logits, hits)
    assert ours.slope == pytest.approx(float(reference.coef_[0, 0]), abs=0.01)
    assert ours.intercept == pytest.approx(float(reference.intercept_[0]), abs=0.01)


def test_generation_correctness_is_exact_match_as_in_helm() -> None:
    # HELM's calibration always reads exact_match, whatever the scenario's main metric is
    info = ScenarioInfo(name="boolq", main_metric="quasi_exact_match", metric_categories=("calibration",))
    metric = CalibrationMetric.configure(info, AdapterSpec(method="generation"), DEPLOYMENT)
    a = instance("a", ["Yes"])
    state = gen_state(a, " yes.", logprob_tokens=tokens(("yes", math.log(0.8))))
    result = metric.evaluate([state], ctx(info))
    assert result.artifacts["calibration"]["correctness"] == "exact_match"
    assert next(s for s in result.run_stats if s.name.name == "ece_1_bin").mean == pytest.approx(0.8)
    with pytest.raises(ValueError, match="correctness must be one of"):
        CalibrationMetric("generation", correctness="f1_score")


def test_run_level_calibration_values_carry_seeded_bootstrap_intervals() -> None:
    metric = CalibrationMetric("multiple_choice_separate_original")
    first = {s.name.name: s for s in metric.evaluate(_mc_states(), ctx()).run_stats}
    again = {s.name.name: s for s in metric.evaluate(_mc_states(), ctx()).run_stats}
    for name in ("ece_10_bin", "ece_1_bin", "selective_acc@10", "selective_cov_acc_area"):
        stat = first[name]
        assert stat.ci_low is not None and stat.ci_high is not None, name
        assert stat.ci_low <= stat.ci_high
        assert stat.ci_low >= 0.0 and stat.ci_high <= 1.0
        assert (stat.ci_low, stat.ci_high) == (again[name].ci_low, again[name].ci_high)  # seeded
    # resampling four instances moves ECE: the interval has width
    ci_low, ci_high = first["ece_1_bin"].ci_low, first["ece_1_bin"].ci_high
    assert ci_low is not None and ci_high is not None and ci_high > ci_low
    assert first["platt_ece_10_bin"].ci_low is None  # documented: no interval for the refitted value
