"""Metrics defined exactly as HELM (crfm-helm 0.5.16) defines them; holistic's own
definitions only as named options with their own stat names.

Each test names the HELM behaviour it pins; each fails on holistic's former definition.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import (
    AdapterSpec,
    Instance,
    MetricName,
    PerInstanceStat,
    PerturbationDescription,
    RequestState,
    Token,
)
from holistic.metrics.accuracy import GenerationAccuracy, MultisetF1, exact_match, f1_score, quasi_exact_match
from holistic.metrics.calibration import CalibrationMetric, TieAwareCalibrationMetric
from holistic.metrics.calibration_math import (
    helm_calibration_stats,
    helm_ece,
    helm_equal_mass_edges,
    helm_selective_stats,
)
from holistic.metrics.efficiency import EfficiencyMetric
from holistic.metrics.language_modeling import LanguageModelingMetric
from holistic.metrics.overlap import bleu_scores
from holistic.metrics.ranking import RankingMetric
from holistic.metrics.registry import select_metrics
from holistic.metrics.robustness import worst_case
from holistic.metrics.stats import with_worst_case
from tests.metrics.metrics_testkit import ctx, gen_state, instance, score_state, tokens

# ---------------------------------------------------------------------------
# token F1 and exact match (finding 4)
# ---------------------------------------------------------------------------


def test_f1_uses_token_sets_not_counts() -> None:
    # sets: pred {cat}, gold {cat} -> 1.0 ; SQuAD counting would give P=1/2, R=1 -> 2/3
    assert f1_score("the cat the cat", "cat") == 1.0
    assert f1_score("cat cat dog", "cat dog dog bird") == pytest.approx(1 / (0.5 / 1.0 + 0.5 / (2 / 3)))


def test_empty_prediction_scores_zero_even_against_empty_reference() -> None:
    assert f1_score("", "") == 0.0
    assert f1_score("the", "a") == 0.0  # nothing left after normalisation
    assert exact_match("", "") == 0.0
    assert exact_match("  \n", "") == 0.0
    assert quasi_exact_match("", "") == 0.0
    assert exact_match(" Paris ", "Paris") == 1.0


def test_multiset_f1_is_a_named_option_with_its_own_stat() -> None:
    a = instance("a", ["cat"])
    state = gen_state(a, "the cat the cat")
    helm = {s.name.name: s.value for s in GenerationAccuracy().evaluate([state], ctx()).per_instance}
    option = {s.name.name: s.value for s in MultisetF1().evaluate([state], ctx()).per_instance}
    assert helm["f1_score"] == 1.0 and "f1_score_multiset" not in helm
    assert option == {"f1_score_multiset": pytest.approx(2 / 3)}
    info = ScenarioInfo(name="qa", task="qa", main_metric="f1_score", metric_categories=("accuracy",))
    chosen = select_metrics(["accuracy"], info, AdapterSpec(method="generation"), ctx().deployment)
    assert "f1_multiset" not in {m.name for m in chosen.metrics}  # never mixed in by default
    named = select_metrics(["accuracy", "f1_multiset"], info, AdapterSpec(method="generation"), ctx().deployment)
    assert "f1_multiset" in {m.name for m in named.metrics}


# ---------------------------------------------------------------------------
# BLEU (finding 5)
# ---------------------------------------------------------------------------


def test_bleu_4_is_the_unsmoothed_4gram_precision_on_word_tokenize_tokens() -> None:
    # 4-grams of the answer: "the cat sat on", "cat sat on the", "sat on the mat"; one matches -> 1/3,
    # equal lengths -> no brevity penalty. Uniform weights with smoothing would give about 0.54.
    scores = bleu_scores("the cat sat on the mat", ["the cat sat on a mat"])
    assert scores["bleu_4"] == pytest.approx(1 / 3)
    assert scores["bleu_1"] == pytest.approx(5 / 6)
    # case is kept and "don't" splits as NLTK splits it
    assert bleu_scores("Don't", ["don't"])["bleu_1"] == pytest.approx(0.5)
    assert bleu_scores("", ["a b c d"]) == {"bleu_1": 0.0, "bleu_4": 0.0}


# ---------------------------------------------------------------------------
# bits per byte (finding 5)
# ---------------------------------------------------------------------------


def test_bits_per_byte_pools_logprobs_and_bytes_over_documents() -> None:
    a, b = Instance("a", "doc a"), Instance("b", "doc b")
    states = [
        score_state(a, 0, -10.0, continuation="x" * 10, role="window", n_tokens=5),
        score_state(b, 0, -1.0, continuation="y" * 100, role="window", n_tokens=5),
    ]
    result = LanguageModelingMetric().evaluate(states, ctx())
    run = {s.name.name: s.mean for s in result.run_stats}
    assert run["bits_per_byte"] == pytest.approx(11 / 110 / math.log(2))  # a mean of ratios: 0.505 / ln 2
    assert run["logprob_per_byte"] == pytest.approx(-11 / 110)
    assert run["perplexity"] == pytest.approx(math.exp(11 / 10))
    per = {(s.instance_id, s.name.name): s.value for s in result.per_instance}
    assert per[("a", "num_bytes")] == 10 and per[("b", "logprob")] == -1.0
    assert "bits_per_byte" not in {s.name.name for s in result.per_instance}


# ---------------------------------------------------------------------------
# MS MARCO ranking (finding 5)
# ---------------------------------------------------------------------------


def _passage_state(inst: Instance, index: int, text: str, logprob: float) -> RequestState:
    return gen_state(inst, text, logprob_tokens=tokens((text, logprob)), reference_index=index, request_index=index)


def test_msmarco_ranks_by_answer_class_then_logprob_as_helm() -> None:
    inst = instance("q", ["p0", "p1", "p2", "p3"], correct=[2])
    states = [
        _passage_state(inst, 0, " Yes, it does", -0.01),  # not exactly "yes": HELM's lowest class
        _passage_state(inst, 1, " No", -0.05),  # a confident No
        _passage_state(inst, 2, " No", -1.5),  # an unsure No ranks above a confident No
        _passage_state(inst, 3, " Yes", -2.0),  # any Yes first
    ]
    result = RankingMetric().evaluate(states, ctx())
    values = {s.name.name: s.value for s in result.per_instance}
    # order: p3 (Yes), p2 (unsure No), p1 (sure No), p0 (other) -> the relevant p2 is second
    assert values["rr@10"] == 0.5


# ---------------------------------------------------------------------------
# calibration (finding 5)
# ---------------------------------------------------------------------------


def test_selective_acc_at_10_reads_index_int_of_a_tenth() -> None:
    conf = [0.95, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1]
    hits = [1, 0, 1, 0, 1, 0, 1, 0, 1, 0]
    area, top = helm_selective_stats(conf, hits)
    assert top == 0.5  # accuracy of the top int(0.1 * 10) + 1 = 2 (holistic's ceil rule: top 1 -> 1.0)
    running = np.cumsum(hits) / np.arange(1, 11)
    assert area == pytest.approx(float(running.mean()))


def test_equal_mass_bins_are_cut_with_array_split() -> None:
    conf = [0.05, 0.15, 0.25, 0.35, 0.45, 0.55, 0.65, 0.75, 0.85, 0.95]
    # np.array_split of 10 into 4 parts: 3, 3, 2, 2 (rank-proportional cutting gives 3, 2, 3, 2)
    assert helm_equal_mass_edges(conf, 4) == pytest.approx([0.3, 0.6, 0.8, 1.0])
    hits = [0, 0, 1, 0, 1, 1, 1, 1, 1, 1]
    expected = 0.3 * abs(0.15 - 1 / 3) + 0.3 * abs(0.45 - 2 / 3) + 0.2 * abs(0.7 - 1) + 0.2 * abs(0.9 - 1)
    assert helm_ece(conf, hits, 4) == pytest.approx(expected)


def test_platt_edge_cases_and_stat_names() -> None:
    all_right = helm_calibration_stats([0.6, 0.7, 0.8], [1, 1, 1])
    assert all_right["platt_ece_10_bin"] == 0.0 and all_right["platt_ece_1_bin"] == 0.0
    assert "platt_coef" not in all_right and "platt_intercept" not in all_right
    rng = np.random.default_rng(0)
    conf = rng.uniform(0.3, 0.99, 300)
    hits = (rng.uniform(size=300) < conf**2).astype(float)
    stats = helm_calibration_stats(conf, hits)
    assert set(stats) == {
        "ece_10_bin",
        "ece_1_bin",
        "selective_cov_acc_area",
        "selective_acc@10",
        "platt_ece_10_bin",
        "platt_ece_1_bin",
        "platt_coef",
        "platt_intercept",
    }
    from sklearn.linear_model import LogisticRegression

    logit = np.log(conf / (1 - conf))
    clf = LogisticRegression(C=1e10, solver="lbfgs").fit(logit[:, None], hits.astype(int))
    assert stats["platt_coef"] == pytest.approx(float(clf.coef_[0][0]))
    assert stats["ece_1_bin"] == pytest.approx(abs(conf.mean() - hits.mean()))


def test_calibration_metric_reports_helm_names_and_tie_aware_values_only_as_an_option() -> None:
    insts = [instance(f"i{k}", ["yes"]) for k in range(20)]
    states = [
        gen_state(inst, "yes" if k % 3 else "no", logprob_tokens=tokens(("x", -0.05 * (k + 1))))
        for k, inst in enumerate(insts)
    ]
    info = ScenarioInfo(name="t", metric_categories=("calibration",))
    helm = CalibrationMetric("generation").evaluate(states, ctx(info))
    names = {s.name.name for s in helm.run_stats}
    assert {"selective_cov_acc_area", "platt_coef", "platt_intercept", "platt_ece_1_bin"} <= names
    assert not any(n.endswith("_tie_aware") for n in names) and "selective_coverage_acc_area" not in names
    option = TieAwareCalibrationMetric("generation").evaluate(states, ctx(info))
    assert {s.name.name for s in option.run_stats} == {
        "ece_10_bin_tie_aware",
        "platt_ece_10_bin_tie_aware",
        "selective_acc@10_tie_aware",
        "selective_cov_acc_area_tie_aware",
    }
    assert option.per_instance == []


def test_joint_multiple_choice_keeps_unparseable_answers_as_wrong_in_calibration() -> None:
    mapping = {"A": "red", "B": "blue"}
    insts = [instance(f"i{k}", ["red", "blue"], correct=[0]) for k in range(4)]
    states = [
        gen_state(insts[0], " A", mapping=mapping, logprob_tokens=tokens((" A", -0.1))),
        gen_state(insts[1], " B", mapping=mapping, logprob_tokens=tokens((" B", -0.2))),
        gen_state(insts[2], " A", mapping=mapping, logprob_tokens=tokens((" A", -0.3))),
        gen_state(insts[3], " I", mapping=mapping, logprob_tokens=tokens((" I", -0.4))),  # no choice named
    ]
    result = CalibrationMetric("multiple_choice_joint").evaluate(states, ctx())
    max_prob = {s.instance_id: s.value for s in result.per_instance}
    assert max_prob["i3"] == pytest.approx(math.exp(-0.4))
    ece1 = {s.name.name: s.mean for s in result.run_stats}["ece_1_bin"]
    probs = np.exp([-0.1, -0.2, -0.3, -0.4])
    assert ece1 == pytest.approx(abs(probs.mean() - 0.5))


# ---------------------------------------------------------------------------
# efficiency (finding 5)
# ---------------------------------------------------------------------------


def test_efficiency_reports_denoised_runtime_per_request() -> None:
    inst = instance("a", ["x", "y"], correct=[0])
    states = [
        score_state(inst, 0, -1.0, continuation="x"),
        score_state(inst, 1, -2.0, continuation="y"),
    ]
    states = [
        replace(s, result=replace(s.result, latency_s=t)) if s.result is not None else s
        for s, t in zip(states, (1.0, 3.0), strict=True)
    ]
    values = {s.name.name: s.value for s in EfficiencyMetric().evaluate(states, ctx()).per_instance}
    assert values["inference_denoised_runtime"] == 2.0  # mean per request, not the 4.0 summed per instance
    assert values["inference_runtime"] == 2.0
    assert values["num_requests"] == 2


# ---------------------------------------------------------------------------
# worst case (finding 6)
# ---------------------------------------------------------------------------


def _variant(iid: str, name: str, *, robustness: bool = True, fairness: bool = False) -> Instance:
    return Instance(iid, "x", perturbation=PerturbationDescription(name, robustness=robustness, fairness=fairness))


def _pis(iid: str, name: str, value: float, pert: str | None = None) -> PerInstanceStat:
    return PerInstanceStat(iid, 0, MetricName(name, "test", None, pert), value)


def test_worst_case_covers_every_metric_and_each_perturbation_with_before_values() -> None:
    instances = [Instance("a", "x"), _variant("a", "typos"), _variant("a", "dialect", robustness=False, fairness=True)]
    per = [
        _pis("a", "exact_match", 1.0),
        _pis("a", "exact_match", 0.0, "typos"),
        _pis("a", "exact_match", 1.0, "dialect"),
        _pis("a", "inference_runtime", 2.0),
        _pis("a", "inference_runtime", 5.0, "typos"),
        _pis("a", "inference_runtime", 1.0, "dialect"),
    ]
    out = {(s.name.name, s.name.perturbation): s.value for s in worst_case(per, instances)}
    assert out[("exact_match", "robustness")] == 0.0
    assert out[("exact_match", "fairness")] == 1.0
    assert out[("exact_match", "typos:worst")] == 0.0
    assert out[("exact_match", "typos:original")] == 1.0
    assert out[("exact_match", "dialect:worst")] == 1.0
    # every metric, and (as HELM) the minimum even where lower is better
    assert out[("inference_runtime", "robustness")] == 2.0
    assert out[("inference_runtime", "fairness")] == 1.0
    assert out[("inference_runtime", "typos:worst")] == 2.0
    assert not any(p and p.endswith("_directional") for _, p in out)


def test_directional_worst_case_is_a_named_option() -> None:
    instances = [Instance("a", "x"), _variant("a", "typos")]
    per = [
        _pis("a", "ece", 0.1),
        _pis("a", "ece", 0.4, "typos"),
        _pis("a", "exact_match", 1.0),
        _pis("a", "exact_match", 0.0, "typos"),
    ]
    lower = {"ece"}
    out = {
        (s.name.name, s.name.perturbation): s.value
        for s in worst_case(per, instances, lambda n: n not in lower, directional=True)
    }
    assert out[("ece", "robustness")] == 0.1  # HELM's row unchanged
    assert out[("ece", "robustness_directional")] == 0.4
    assert out[("exact_match", "robustness_directional")] == 0.0
    # with_worst_case does not add derived rows twice
    once = with_worst_case(per, instances, infos=lambda n: type("I", (), {"higher_is_better": n not in lower})())
    assert with_worst_case(once, instances) == once


def test_worst_case_directional_metric_is_not_selected_by_the_robustness_category() -> None:
    info = ScenarioInfo(name="qa", metric_categories=("accuracy", "robustness"))
    chosen = select_metrics(["robustness"], info, AdapterSpec(method="generation"), ctx().deployment)
    assert "worst_case_directional" not in {m.name for m in chosen.metrics}
    assert "robustness" in {m.name for m in chosen.metrics}


def test_token_with_top_logprobs_does_not_change_helm_max_prob() -> None:
    inst = instance("a", ["yes"])
    top = {" yes": -0.1, " no": -2.5}
    state = gen_state(inst, "yes", logprob_tokens=(Token(" yes", -0.1, top), Token(".", -0.2)))
    info = ScenarioInfo(name="t", metric_categories=("calibration",))
    result = CalibrationMetric("generation").evaluate([state], ctx(info))
    assert result.per_instance[0].value == pytest.approx(math.exp(-0.3))
