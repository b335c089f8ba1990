"""HELM's disinformation diversity metrics, against values worked out by hand."""

from __future__ import annotations

import math

import pytest

from holistic.core.types import Completion
from holistic.metrics.disinformation import (
    ENTROPY,
    SELF_BLEU,
    DisinformationDiversityMetric,
    monte_carlo_entropy,
    self_bleu,
    sentence_bleu,
    tokenize_13a,
)
from holistic.scenarios.registry import scenario_info
from tests.metrics.metrics_testkit import ctx, gen_state, instance, tokens


def test_13a_tokenisation_splits_punctuation_but_not_numbers() -> None:
    assert tokenize_13a("Vote now, friends.") == ["Vote", "now", ",", "friends", "."]
    assert tokenize_13a("3.5 million&amp;more 2-1") == ["3.5", "million", "&", "more", "2", "-", "1"]


def test_sentence_bleu_with_exp_smoothing_and_effective_order() -> None:
    # a b c d against a b c e: 1-grams 3/4, 2-grams 2/3, 3-grams 1/2, 4-grams 0/1 -> smoothed to
    # 1 / (2 * 1); equal lengths, no brevity penalty: 100 * (3/4 * 2/3 * 1/2 * 1/2) ** (1/4).
    expected = 100 * (0.75 * (2 / 3) * 0.5 * 0.5) ** 0.25
    assert sentence_bleu("a b c d", ["a b c e"]) == pytest.approx(expected)
    # Two tokens: only orders 1 and 2 exist (effective order 2); "x y" vs "x z": 1/2 and 0/1 -> 1/2;
    # brevity: hypothesis 2 vs reference 3 -> exp(1 - 3/2).
    assert sentence_bleu("x y", ["x z w"]) == pytest.approx(math.exp(1 - 1.5) * 100 * (0.5 * 0.5) ** 0.5)
    assert sentence_bleu("p q", ["r s"]) == 0.0  # no n-gram in common at all


def test_self_bleu_over_the_samples() -> None:
    assert self_bleu(["the cat sat", " the cat sat\n"]) == pytest.approx(100.0)
    assert self_bleu(["a b c d", "a b c e"]) == pytest.approx(100 * (0.75 * (2 / 3) * 0.5 * 0.5) ** 0.25)
    assert self_bleu(["only one", "  ", ""]) == 0.0


def test_monte_carlo_entropy_in_nats() -> None:
    first = Completion("This is a test", -1.0, tokens(("This", -0.25), ("is", -0.25), ("a", -0.25), ("test", -0.25)))
    second = Completion("x", -1.25, tokens(("This", -0.25), ("is", -0.25), ("another", -0.5), ("test", -0.25)))
    assert monte_carlo_entropy([first, second]) == pytest.approx((1.0 + 1.25) / 2)
    assert monte_carlo_entropy([Completion("no tokens", 0.0)]) is None


def test_metric_gives_each_instance_both_values() -> None:
    inst = instance("reiteration-3", text="Thesis")
    state = gen_state(inst, "a b c d", "a b c e", logprob_tokens=tokens(("a", -0.5), ("b", -1.5)))
    result = DisinformationDiversityMetric().evaluate([state], ctx(scenario_info("disinformation")))
    values = {s.name.name: s.value for s in result.per_instance}
    assert values[SELF_BLEU] == pytest.approx(100 * (0.75 * (2 / 3) * 0.5 * 0.5) ** 0.25)
    assert values[ENTROPY] == pytest.approx(2.0)
    failed = gen_state(inst, success=False)
    assert DisinformationDiversityMetric().evaluate([failed], ctx()).per_instance == []
