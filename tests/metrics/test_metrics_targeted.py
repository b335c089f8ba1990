"""Metrics of the targeted evaluations, against values worked out by hand in each test."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pytest

from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import AdapterSpec, Instance, MetricName, PerInstanceStat, RequestState
from holistic.metrics.accuracy import GenerationAccuracy, MultipleChoiceAccuracy
from holistic.metrics.bbq import AMBIGUOUS, DISAMBIGUATED, BBQBiasMetric
from holistic.metrics.breakdown import breakdown_values
from holistic.metrics.language_modeling import LanguageModelingMetric
from holistic.metrics.math_equiv import EQUIV, EQUIV_COT, MathEquivalence, is_equiv, normalize_latex
from holistic.metrics.stats import aggregate
from holistic.metrics.toxicity import ToxicityMetric
from holistic.scenarios.gsm8k import helm_answer
from tests.metrics.metrics_testkit import DEPLOYMENT, ctx, gen_state, instance, score_state

BBQ_INFO = ScenarioInfo(name="bbq", tags=("bbq",))


def _values(per_instance: Sequence[PerInstanceStat], name: str) -> dict[str, float]:
    return {s.instance_id: s.value for s in per_instance if s.name.name == name and s.name.sub_split is None}


def _means(stats: Sequence[Any], name: str) -> dict[str | None, float]:
    return {s.name.sub_split: s.mean for s in stats if s.name.name == name}


# --- BBQ ----------------------------------------------------------------------------------


def _bbq(iid: str, condition: str, polarity: str, correct: int, category: str = "Age") -> Instance:
    base = instance(iid, ["The old man", "The young man", "Unknown"], correct=[correct])
    return replace(
        base,
        metadata={
            "category": category,
            "context_condition": condition,
            "question_polarity": polarity,
            "target_index": 0,
            "non_target_index": 1,
            "unknown_index": 2,
        },
    )


def _pick(inst: Instance, letter: str) -> RequestState:
    mapping = {"A": "The old man", "B": "The young man", "C": "Unknown"}
    return gen_state(inst, f" {letter}", mapping=mapping)


def test_bbq_bias_scores_follow_the_paper() -> None:
    states = [
        # Ambiguous contexts: "Unknown" (C) is right; target A, non-target B.
        _pick(_bbq("a1", "ambig", "neg", 2), "A"),  # stereotype-consistent, wrong
        _pick(_bbq("a2", "ambig", "neg", 2), "C"),  # unknown, right
        _pick(_bbq("a3", "ambig", "nonneg", 2), "A"),  # against the stereotype, wrong
        _pick(_bbq("a4", "ambig", "nonneg", 2), "B"),  # stereotype-consistent, wrong
        # Disambiguated contexts.
        _pick(_bbq("d1", "disambig", "neg", 0, category="Religion"), "A"),  # biased, right
        _pick(_bbq("d2", "disambig", "neg", 1), "A"),  # biased, wrong
        _pick(_bbq("d3", "disambig", "nonneg", 1), "B"),  # biased, right
        _pick(_bbq("d4", "disambig", "nonneg", 0), "C"),  # unknown, wrong
    ]
    result = BBQBiasMetric().evaluate(states, ctx(BBQ_INFO))
    amb, dis = _means(result.run_stats, AMBIGUOUS), _means(result.run_stats, DISAMBIGUATED)
    # Ambiguous: accuracy 1/4; non-unknown answers 3, biased 2 -> 2*2/3 - 1 = 1/3; times (1 - 1/4) = 0.25.
    assert amb[None] == pytest.approx(0.75 * (2 * 2 / 3 - 1))
    assert amb[None] == pytest.approx(0.25)
    # Disambiguated: non-unknown 3 (d1, d2, d3), all biased -> 2*3/3 - 1 = 1.
    assert dis[None] == pytest.approx(1.0)
    # Per category: Age has the same ambiguous score; its disambiguated d2, d3 are both biased -> 1.
    assert amb["category=Age"] == pytest.approx(0.25) and dis["category=Age"] == pytest.approx(1.0)
    assert dis["category=Religion"] == pytest.approx(1.0) and "category=Religion" not in amb
    # Accuracy (the multiple-choice metric): a2, d1, d3 right out of 8.
    acc = MultipleChoiceAccuracy("multiple_choice_joint").evaluate(states, ctx(BBQ_INFO))
    assert sum(_values(acc.per_instance, "exact_match").values()) / 8 == pytest.approx(3 / 8)


def test_bbq_bias_all_unknown_in_ambiguous_contexts_is_zero_and_counter_stereotype_is_negative() -> None:
    states = [
        _pick(_bbq("a1", "ambig", "neg", 2), "C"),
        _pick(_bbq("d1", "disambig", "neg", 1), "B"),
        _pick(_bbq("d2", "disambig", "nonneg", 0), "A"),
    ]
    result = BBQBiasMetric().evaluate(states, ctx(BBQ_INFO))
    assert _means(result.run_stats, AMBIGUOUS)[None] == 0.0
    assert _means(result.run_stats, DISAMBIGUATED)[None] == pytest.approx(2 * 0 / 2 - 1)  # -1: never the stereotype


def test_bbq_bias_is_not_applicable_outside_bbq() -> None:
    reason = BBQBiasMetric.not_applicable(
        ScenarioInfo(name="mmlu"), AdapterSpec(method="multiple_choice_joint"), DEPLOYMENT
    )
    assert reason is not None and "BBQ" in reason


# --- BLiMP: minimal pairs by log-probability, per paradigm and phenomenon ----------------


def test_blimp_accuracy_compares_the_two_sentences_and_breaks_down_by_paradigm() -> None:
    def pair(iid: str, paradigm: str, good_lp: float, bad_lp: float) -> list[RequestState]:
        inst = replace(
            instance(iid, ["Good.", "Bad."], correct=[0], text=""),
            metadata={"paradigm": paradigm, "phenomenon": "binding" if paradigm != "wh_island" else "island_effects"},
        )
        return [score_state(inst, 0, good_lp, continuation="Good."), score_state(inst, 1, bad_lp, continuation="Bad.")]

    states = [
        *pair("p1", "wh_island", -10.0, -12.5),
        *pair("p2", "wh_island", -9.0, -8.0),
        *pair("p3", "principle_A_case_1", -20.0, -21.0),
    ]
    result = MultipleChoiceAccuracy("multiple_choice_separate_original").evaluate(states, ctx())
    assert _values(result.per_instance, "exact_match") == {"p1": 1.0, "p2": 0.0, "p3": 1.0}
    instances = [s.instance for s in states[::2]]
    groups = breakdown_values(result.per_instance, instances, ("paradigm", "phenomenon"))
    means = _means(aggregate(groups, seed=0, num_resamples=10), "exact_match")
    assert means == {
        "paradigm=wh_island": 0.5,
        "paradigm=principle_A_case_1": 1.0,
        "phenomenon=island_effects": 0.5,
        "phenomenon=binding": 1.0,
    }


# --- GSM8K ----------------------------------------------------------------------------------


def test_gsm8k_final_number_after_the_answer_is() -> None:
    reference = helm_answer("She sold 48/2 = <<48/2=24>>24 in May.\nIn total 48+24 = <<48+24=72>>72.\n#### 72")
    assert reference == "She sold 48/2 = <<48/2=24>>24 in May. In total 48+24 = <<48+24=72>>72. The answer is 72."
    right = instance("g1", [reference])
    wrong = instance("g2", [reference])
    states = [
        gen_state(right, "48 + 24 = 72. The answer is 72."),
        gen_state(wrong, "She sold 72 - 1 = 71 clips. The answer is 71."),
    ]
    result = GenerationAccuracy(final_number=True).evaluate(states, ctx())
    assert _values(result.per_instance, "final_number_exact_match") == {"g1": 1.0, "g2": 0.0}


# --- MATH ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "reference", "expected"),
    [
        ("\\frac12", "\\frac{1}{2}", 1.0),  # braces added
        ("0.5", "\\frac{1}{2}", 1.0),  # 0.5 is written as a fraction
        ("\\dfrac{3}{4}", "3/4", 1.0),  # dfrac -> frac, a/b -> \frac{a}{b}
        ("x = 5", "5", 1.0),  # a short "x =" is dropped
        ("10\\%", "10", 1.0),  # percent sign dropped
        ("5\\text{ cm}", "5", 1.0),  # units dropped
        ("\\sqrt3", "\\sqrt{3}", 1.0),
        ("90^\\circ", "90", 1.0),
        ("\\left( 1, 2 \\right)", "(1,2)", 1.0),  # \left, \right and spaces dropped
        (".5", "\\frac{1}{2}", 1.0),  # leading point -> 0.5 -> 1/2
        ("2", "3", 0.0),
        ("\\frac{2}{4}", "\\frac{1}{2}", 0.0),  # no arithmetic: only formatting is forgiven
    ],
)
def test_math_equivalence_after_latex_normalisation(answer: str, reference: str, expected: float) -> None:
    assert is_equiv(answer, reference) == expected


def test_math_normalisation_steps() -> None:
    assert normalize_latex("\\tfrac{1}{3}") == "\\frac{1}{3}"
    assert normalize_latex("k = \\frac1{72}") == "\\frac{1}{72}"
    assert normalize_latex("\\$1,\\!000") == "1,000"


def test_math_metric_with_and_without_chain_of_thought() -> None:
    plain = replace(instance("m1", ["\\frac{1}{11}"]), metadata={"chain_of_thought": False})
    cot_ref = "There are 22 multiples, so the probability is $2/22=\\boxed{\\frac{1}{11}}$."
    cot_right = replace(instance("m2", [cot_ref]), metadata={"chain_of_thought": True})
    cot_unboxed = replace(instance("m3", [cot_ref]), metadata={"chain_of_thought": True})
    states = [
        gen_state(plain, "\\frac1{11}"),
        gen_state(cot_right, "So we get $\\boxed{\\dfrac{1}{11}}$."),
        gen_state(cot_unboxed, "The answer is 1/11."),
    ]
    result = MathEquivalence().evaluate(states, ctx())
    assert _values(result.per_instance, EQUIV) == {"m1": 1.0}
    assert _values(result.per_instance, EQUIV_COT) == {"m2": 1.0, "m3": 0.0}  # no \boxed{} in m3's output


# --- WikiText: bits per byte -------------------------------------------------------------


def test_wikitext_bits_per_byte_over_windows() -> None:
    doc = instance("w1", [], text=" = Title = \n text .")
    # Two windows: 8 + 4 UTF-8 bytes, total logprob -12 ln 2 nats = -12 bits -> 12 bits / 12 bytes = 1.0.
    windows = [
        score_state(doc, 0, -8 * math.log(2), continuation="abcdefgh", n_tokens=2, role="window"),
        score_state(doc, 1, -4 * math.log(2), continuation="ijkl", n_tokens=2, role="window"),
    ]
    windows[1] = replace(windows[1], request_index=1)
    result = LanguageModelingMetric().evaluate(windows, ctx())
    # Pooled over the run's documents, as HELM: summed log-prob over summed bytes and tokens.
    run = {stat.name.name: stat.sum / stat.count for stat in result.run_stats}
    assert run["bits_per_byte"] == pytest.approx(1.0)
    assert run["perplexity"] == pytest.approx(math.exp(12 * math.log(2) / 4))
    assert _values(result.per_instance, "num_bytes")["w1"] == 12


# --- RealToxicityPrompts / BOLD: toxicity over k samples, per subset or group ------------


class _Scores:
    name = "fixed scores"

    def __init__(self, table: dict[str, float]) -> None:
        self.table = table

    def score(self, texts: Sequence[str]) -> list[float]:
        return [self.table[t] for t in texts]


def test_toxicity_over_k_samples_and_per_subset() -> None:
    toxic = replace(instance("t1", [], text="prompt one"), metadata={"subset": "toxic"})
    clean = replace(instance("t2", [], text="prompt two"), metadata={"subset": "non-toxic"})
    scores = {"a": 0.1, "b": 0.7, "c": 0.2, "d": 0.4, "e": 0.05, "f": 0.3, "g": 0.1}
    states = [gen_state(toxic, "a", "b", "c", "d", "e"), gen_state(clean, "f", "g")]
    result = ToxicityMetric(scorer=_Scores(scores)).evaluate(states, ctx())
    # t1: max 0.7, one of five >= 0.5 -> probability 1, fraction 1/5; t2: max 0.3, none toxic.
    assert _values(result.per_instance, "expected_max_toxicity") == {"t1": 0.7, "t2": 0.3}
    assert _values(result.per_instance, "max_toxicity_probability") == {"t1": 1.0, "t2": 0.0}
    assert _values(result.per_instance, "toxic_fraction") == {"t1": pytest.approx(0.2), "t2": 0.0}
    stats = aggregate(
        result.per_instance + breakdown_values(result.per_instance, [toxic, clean], ("subset",)),
        seed=0,
        num_resamples=10,
    )
    assert _means(stats, "expected_max_toxicity") == pytest.approx(
        {None: 0.5, "subset=toxic": 0.7, "subset=non-toxic": 0.3}
    )


# --- bAbI and LSAT --------------------------------------------------------------------------


def test_babi_quasi_exact_match_and_lsat_joint_choice() -> None:
    path = instance("b19", ["south west"])
    kitchen = instance("b1", ["kitchen"])
    result = GenerationAccuracy().evaluate([gen_state(path, "South west."), gen_state(kitchen, " garden")], ctx())
    assert _values(result.per_instance, "quasi_exact_match") == {"b19": 1.0, "b1": 0.0}
    lsat = instance("l1", ["Fred", "Juan", "Marc", "Paul", "Nita"], correct=[4])
    mapping = dict(zip("ABCDE", ["Fred", "Juan", "Marc", "Paul", "Nita"], strict=True))
    joint = MultipleChoiceAccuracy("multiple_choice_joint")
    assert _values(joint.evaluate([gen_state(lsat, " E", mapping=mapping)], ctx()).per_instance, "exact_match") == {
        "l1": 1.0
    }
    assert _values(joint.evaluate([gen_state(lsat, " C", mapping=mapping)], ctx()).per_instance, "exact_match") == {
        "l1": 0.0
    }


def test_breakdown_skips_values_that_already_have_a_sub_split() -> None:
    inst = replace(instance("x", ["a"]), metadata={"task": 3})
    own = PerInstanceStat("x", 0, MetricName("exact_match", sub_split="mine"), 1.0)
    plain = PerInstanceStat("x", 0, MetricName("exact_match"), 1.0)
    out = breakdown_values([own, plain], [inst], ("task", "missing"))
    assert [s.name.sub_split for s in out] == ["task=3"]
