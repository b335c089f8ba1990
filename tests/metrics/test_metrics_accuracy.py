from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

import pytest

from holistic.core.interfaces import MetricResult
from holistic.core.types import MetricName
from holistic.metrics.accuracy import (
    GenerationAccuracy,
    MultipleChoiceAccuracy,
    exact_match,
    f1_score,
    final_number_exact_match,
    prefix_exact_match,
    quasi_exact_match,
    quasi_prefix_exact_match,
)
from holistic.metrics.text import final_number, normalize_quasi
from tests.metrics.metrics_testkit import ctx, gen_state, instance, score_state, tokens


def values(result: MetricResult, name: str) -> dict[tuple[str, int, str | None], float]:
    return {(s.instance_id, s.trial, s.name.perturbation): s.value for s in result.per_instance if s.name.name == name}


def test_quasi_normalisation_drops_case_punctuation_articles_and_spaces() -> None:
    assert normalize_quasi("  The  Eiffel-Tower, in PARIS!  ") == "eiffeltower in paris"
    assert normalize_quasi("An apple a day") == "apple day"


def test_exact_match_family_by_hand() -> None:
    assert exact_match(" Paris\n", "Paris") == 1.0
    assert exact_match("paris", "Paris") == 0.0
    assert quasi_exact_match("the Paris.", "Paris") == 1.0
    assert prefix_exact_match("Paris, France", "Paris") == 1.0
    assert prefix_exact_match("In Paris", "Paris") == 0.0
    assert quasi_prefix_exact_match("paris, france", "Paris") == 1.0


def test_f1_by_hand_and_edge_cases() -> None:
    # pred tokens: cat sat mat ; gold: cat sat on mat -> P=3/3, R=3/4 -> F1=6/7
    assert f1_score("The cat sat, mat", "the cat sat on the mat") == pytest.approx(6 / 7)
    assert f1_score("", "cat") == 0.0
    assert f1_score("", "") == 0.0  # HELM: an empty answer scores 0
    assert f1_score("dog", "cat") == 0.0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Natalia sold 48/2 = 24 clips.\n#### 72", Decimal(72)),
        ("So the answer is $1,080.00.", Decimal(1080)),
        ("It is -3.5 or maybe 4", Decimal(4)),
        ("no number here", None),
        ("#### 0", Decimal(0)),
    ],
)
def test_final_number(text: str, expected: Any) -> None:
    assert final_number(text) == expected


def test_final_number_match_uses_gsm8k_marker() -> None:
    assert final_number_exact_match("so she has 72 clips", "48 + 24 = 72\n#### 72") == 1.0
    assert final_number_exact_match("72 or 73", "#### 72") == 0.0
    assert final_number_exact_match("nothing", "#### 5") == 0.0


# (answer, HELM-style reference, what crfm-helm 0.5.16's final_number_exact_match returns).
# The cases marked "was 1" scored 1 when holistic compared the numbers' values.
HELM_FINAL_NUMBER_CASES = [
    ("3.50", "The answer is 3.5.", 0.0),  # was 1: HELM compares text
    ("5.0", "The answer is 5.", 0.0),  # was 1
    ("$1,080.00", "The answer is 1080.", 0.0),  # was 1
    (".5", "The answer is 0.5.", 0.0),  # was 1: the pattern needs a digit before the point
    ("- 3", "The answer is -3.", 0.0),  # was 1
    ("at 3:30", "The answer is 30.", 0.0),  # was 1: the unescaped '.' reads '3:30' as one number
    ("so 72", "The answer is 72.", 1.0),
    ("1,000", "The answer is 1000.", 1.0),
    ("1 000", "The answer is 1000.", 0.0),
    ("$5", "The answer is 5.", 1.0),
    ("-5", "The answer is 5.", 0.0),
    ("10 or 12", "The answer is 10.", 0.0),
    ("no number", "The answer is 12.", 0.0),
    ("1, 2, 3, 1", "The answer is 1.", 1.0),
    ("72", "48 + 24 = 72 The answer is 72.", 1.0),
    ("7 apples.", "The answer is 7.", 1.0),
]


@pytest.mark.parametrize(("answer", "reference", "helm"), HELM_FINAL_NUMBER_CASES)
def test_final_number_exact_match_is_helms(answer: str, reference: str, helm: float) -> None:
    assert final_number_exact_match(answer, reference) == helm
    assert final_number_exact_match(f"  {answer}\n", reference) == helm


def test_generation_accuracy_takes_best_reference_and_handles_edges() -> None:
    a = instance("a", ["Paris", "City of Paris"])
    b = instance("b", ["Rome"])
    c = instance("c", [])  # no references: not scored
    states = [
        gen_state(a, " the city of paris"),
        gen_state(b, ""),  # empty prediction
        gen_state(c, "anything"),
    ]
    result = GenerationAccuracy().evaluate(states, ctx())
    assert values(result, "exact_match") == {("a", 0, None): 0.0, ("b", 0, None): 0.0}
    assert values(result, "quasi_exact_match")[("a", 0, None)] == 1.0
    assert values(result, "f1_score")[("a", 0, None)] == 1.0
    assert values(result, "f1_score")[("b", 0, None)] == 0.0
    assert "final_number_exact_match" not in {s.name.name for s in result.per_instance}


def test_failed_request_counts_as_wrong_not_dropped() -> None:
    a = instance("a", ["yes"])
    result = GenerationAccuracy().evaluate([gen_state(a, "yes", success=False)], ctx())
    assert values(result, "exact_match") == {("a", 0, None): 0.0}


def test_post_processed_output_is_scored_and_names_carry_split_and_perturbation() -> None:
    orig = instance("q1", ["42"], split="valid", sub_split="algebra")
    typo = instance("q1", ["42"], split="valid", sub_split="algebra", perturbation="typos")
    states = [gen_state(orig, "The answer: 42", post_processed=("42",)), gen_state(typo, "41", trial=1)]
    result = GenerationAccuracy(final_number=True).evaluate(states, ctx())
    names = {s.name for s in result.per_instance if s.name.name == "exact_match"}
    assert names == {
        MetricName("exact_match", "valid", "algebra", None),
        MetricName("exact_match", "valid", "algebra", "typos"),
    }
    assert values(result, "exact_match") == {("q1", 0, None): 1.0, ("q1", 1, "typos"): 0.0}


def test_best_of_k_when_several_outputs() -> None:
    a = instance("a", ["blue"])
    result = GenerationAccuracy().evaluate([gen_state(a, "red", "blue", "green")], ctx())
    assert values(result, "exact_match")[("a", 0, None)] == 0.0
    assert values(result, "exact_match@k")[("a", 0, None)] == 1.0


def test_joint_multiple_choice_lenient_reading_has_its_own_stat() -> None:
    mapping = {"A": "red", "B": "blue", "C": "green"}
    insts = [instance(i, ["red", "blue", "green"], correct=[1]) for i in "pqrst"]
    states = [
        gen_state(insts[0], " B", mapping=mapping),
        gen_state(insts[1], "(B) blue", mapping=mapping),
        gen_state(insts[2], "A", mapping=mapping),
        gen_state(insts[3], "?", mapping=mapping, post_processed=("blue",)),  # letter_to_choice output
        gen_state(insts[4], "I am not sure", mapping=mapping),
    ]
    result = MultipleChoiceAccuracy("multiple_choice_joint", answer_parsing="lenient").evaluate(states, ctx())
    assert values(result, "exact_match_lenient") == {
        ("p", 0, None): 1.0,
        ("q", 0, None): 1.0,
        ("r", 0, None): 0.0,
        ("s", 0, None): 1.0,
        ("t", 0, None): 0.0,
    }
    # HELM's exact match is still reported beside it, under its own name
    assert values(result, "exact_match") == {
        ("p", 0, None): 1.0,
        ("q", 0, None): 0.0,
        ("r", 0, None): 0.0,
        ("s", 0, None): 0.0,
        ("t", 0, None): 0.0,
    }
    assert values(result, "invalid_answer")[("t", 0, None)] == 1.0
    assert values(result, "invalid_answer")[("p", 0, None)] == 0.0


@pytest.mark.parametrize("answer", ["b", "(B)", "B.", "The answer is B", "blue", " B cat is", "B\nC"])
def test_joint_multiple_choice_helm_reading_accepts_only_the_bare_letter(answer: str) -> None:
    """HELM maps ``completion.strip()`` through the letters; anything else is wrong
    (issue 14, finding 2: before, all of these were read as B)."""
    mapping = {"A": "red", "B": "blue", "C": "green"}
    inst = instance("x", ["red", "blue", "green"], correct=[1])
    result = MultipleChoiceAccuracy("multiple_choice_joint").evaluate([gen_state(inst, answer, mapping=mapping)], ctx())
    assert values(result, "exact_match")[("x", 0, None)] == 0.0
    assert values(result, "invalid_answer")[("x", 0, None)] == 1.0
    assert "exact_match_lenient" not in {s.name.name for s in result.per_instance}
    ok = MultipleChoiceAccuracy("multiple_choice_joint").evaluate([gen_state(inst, " B ", mapping=mapping)], ctx())
    assert values(ok, "exact_match")[("x", 0, None)] == 1.0


def test_joint_unreadable_answer_keeps_its_probability_for_calibration() -> None:
    """HELM's ``max_prob`` is the completion's probability, kept when the answer names no
    letter: calibration counts it as a confident wrong answer instead of dropping it."""
    from holistic.metrics.choices import resolve
    from holistic.metrics.states import group_units

    inst = instance("x", ["red", "blue"], correct=[0])
    state = gen_state(inst, " The", mapping={"A": "red", "B": "blue"}, logprob_tokens=tokens((" The", math.log(0.9))))
    outcome = resolve(group_units([state])[0], "multiple_choice_joint")
    assert outcome.predicted is None and not outcome.correct
    assert outcome.confidence == pytest.approx(0.9)
    assert resolve(group_units([state])[0], "multiple_choice_joint", answer_parsing="lenient").confidence is None


@pytest.mark.parametrize("headline", ["none", "char", "token", "byte"])
def test_separate_multiple_choice_reports_every_normalisation_from_one_set_of_requests(headline: str) -> None:
    # choice 0 "ab" (1 token) logprob -2.1; choice 1 "abcd" (4 tokens) logprob -4.0; the correct one is 1.
    # sum: -2.1 > -4.0 -> 0; per char of the choice text (lm-eval acc_norm): -1.05 < -1.0 -> 1;
    # per token (HELM): -2.1 < -1.0 -> 1. Dividing by the continuation with its leading
    # space (the old `char`) would give -0.7 > -0.8 -> 0.
    inst = instance("x", ["ab", "abcd"], correct=[1])
    states = [
        score_state(inst, 0, -2.1, continuation=" ab", n_tokens=1),
        score_state(inst, 1, -4.0, continuation=" abcd", n_tokens=4),
    ]
    result = MultipleChoiceAccuracy("multiple_choice_separate_original", headline).evaluate(states, ctx())
    got = {
        name: values(result, name)[("x", 0, None)]
        for name in (
            "exact_match",
            "exact_match_per_char",
            "exact_match_per_token",
            "exact_match_per_byte",
            "predicted_index",
        )
    }
    assert got == {
        "exact_match": 0.0,
        "exact_match_per_char": 1.0,
        "exact_match_per_token": 1.0,
        "exact_match_per_byte": 1.0,
        "predicted_index": 0.0 if headline == "none" else 1.0,
    }
    (row,) = [p for p in result.per_instance if p.name.name == "exact_match"]
    assert row.details == {
        "choice_logprobs": [-2.1, -4.0],
        "choice_chars": [2, 4],
        "choice_tokens": [1, 4],
        "choice_bytes": [2, 4],
        "calibrated": False,
        "chosen_index": {"none": 0, "char": 1, "token": 1, "byte": 1},
    }


def test_per_byte_and_per_char_differ_on_non_ascii_choices() -> None:
    inst = instance("x", ["éé", "abc"], correct=[1])  # 2 chars / 4 bytes against 3 / 3
    states = [
        score_state(inst, 0, -2.2, continuation=" éé", n_tokens=2),
        score_state(inst, 1, -3.0, continuation=" abc", n_tokens=2),
    ]
    result = MultipleChoiceAccuracy("multiple_choice_separate_original", "char").evaluate(states, ctx())
    assert values(result, "exact_match_per_char")[("x", 0, None)] == 1.0  # -1.1 < -1.0
    assert values(result, "exact_match_per_byte")[("x", 0, None)] == 0.0  # -0.55 > -1.0


def test_calibrated_multiple_choice_subtracts_neutral_context() -> None:
    inst = instance("x", ["yes", "no"], correct=[1])
    states = [
        score_state(inst, 0, -1.0, continuation=" yes"),
        score_state(inst, 1, -2.0, continuation=" no"),
        score_state(inst, 0, -0.5, continuation=" yes", role="calibration"),  # diff -0.5
        score_state(inst, 1, -3.0, continuation=" no", role="calibration"),  # diff +1.0
    ]
    original = MultipleChoiceAccuracy("multiple_choice_separate_original").evaluate(states, ctx())
    calibrated = MultipleChoiceAccuracy("multiple_choice_separate_calibrated").evaluate(states, ctx())
    assert values(original, "exact_match")[("x", 0, None)] == 0.0
    assert values(calibrated, "exact_match")[("x", 0, None)] == 1.0


def test_separate_with_a_failed_choice_is_wrong() -> None:
    inst = instance("x", ["a", "b"], correct=[0])
    states = [score_state(inst, 0, -0.1, continuation=" a"), score_state(inst, 1, -5, continuation=" b", success=False)]
    result = MultipleChoiceAccuracy("multiple_choice_separate_original").evaluate(states, ctx())
    assert values(result, "exact_match")[("x", 0, None)] == 0.0


def test_joint_confidence_from_top_logprobs() -> None:
    from holistic.metrics.choices import resolve
    from holistic.metrics.states import group_units

    inst = instance("x", ["red", "blue"], correct=[0])
    toks = tokens(("A", math.log(0.6)), top={"A": math.log(0.6), " A": math.log(0.1), "B": math.log(0.1), "X": -1.0})
    state = gen_state(inst, "A", mapping={"A": "red", "B": "blue"}, logprob_tokens=toks)
    outcome = resolve(group_units([state])[0], "multiple_choice_joint", answer_parsing="lenient")
    assert outcome.correct
    assert outcome.confidence == pytest.approx(0.7 / 0.8)
    # HELM's max_prob: the completion's own probability
    assert resolve(group_units([state])[0], "multiple_choice_joint").confidence == pytest.approx(0.6)
    # without top-k: the letter token's own probability
    plain = gen_state(inst, "A", mapping={"A": "red", "B": "blue"}, logprob_tokens=tokens(("A", math.log(0.6))))
    assert resolve(
        group_units([plain])[0], "multiple_choice_joint", answer_parsing="lenient"
    ).confidence == pytest.approx(0.6)


def test_unknown_length_normalisation_is_a_clear_error() -> None:
    inst = instance("x", ["a"], correct=[0])
    with pytest.raises(ValueError, match="length_normalization must be one of none, char, token"):
        MultipleChoiceAccuracy("multiple_choice_separate_original", "bytes").evaluate(
            [score_state(inst, 0, -1, continuation="a")], ctx()
        )
