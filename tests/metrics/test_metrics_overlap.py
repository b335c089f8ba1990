from __future__ import annotations

import pytest
from rouge_score import rouge_scorer

from holistic.metrics.overlap import BleuMetric, RougeMetric, bleu_scores, rouge_scores
from holistic.metrics.summarization import SummarizationMetric, extractive_fragments
from tests.metrics.metrics_testkit import ctx, gen_state, instance


def test_rouge_by_hand() -> None:
    # unigrams: pred {the, cat, sat} vs ref {the, cat, ran}: P=R=2/3 ; bigrams: "the cat" shared: 1/2
    scores = rouge_scores("the cat sat", ["the cat ran"])
    assert scores["rouge_1"] == pytest.approx(2 / 3)
    assert scores["rouge_2"] == pytest.approx(1 / 2)
    assert scores["rouge_l"] == pytest.approx(2 / 3)


def test_rouge_matches_the_reference_package_with_stemming_and_takes_best_reference() -> None:
    prediction = "The cats were running quickly through the gardens"
    refs = ["A cat runs through the garden", "Dogs sleep"]
    package = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
    expected = package.score(refs[0], prediction)
    scores = rouge_scores(prediction, refs)
    assert scores["rouge_1"] == pytest.approx(expected["rouge1"].fmeasure)
    assert scores["rouge_2"] == pytest.approx(expected["rouge2"].fmeasure)
    assert scores["rouge_l"] == pytest.approx(expected["rougeL"].fmeasure)
    assert scores["rouge_1"] > rouge_scorer.RougeScorer(["rouge1"]).score(refs[0], prediction)["rouge1"].fmeasure


def test_bleu_by_hand_and_edges() -> None:
    assert bleu_scores("the cat sat", ["the cat ate"])["bleu_1"] == pytest.approx(2 / 3)
    same = bleu_scores("a b c d e", ["a b c d e"])
    assert same["bleu_4"] == pytest.approx(1.0)
    assert bleu_scores("", ["a b"]) == {"bleu_1": 0.0, "bleu_4": 0.0}
    # brevity penalty: 2-word hypothesis vs 4-word reference -> exp(1 - 4/2)
    assert bleu_scores("a b", ["a b c d"])["bleu_1"] == pytest.approx(pytest.approx(0.36787944, rel=1e-6))


def test_overlap_metrics_over_states_skip_instances_without_references() -> None:
    a = instance("a", ["the cat ran"])
    b = instance("b", [])
    states = [gen_state(a, "the cat sat"), gen_state(b, "x")]
    rouge = RougeMetric().evaluate(states, ctx())
    assert {(s.instance_id, s.name.name) for s in rouge.per_instance} == {
        ("a", "rouge_1"),
        ("a", "rouge_2"),
        ("a", "rouge_l"),
    }
    bleu = BleuMetric().evaluate([gen_state(a, "")], ctx())
    assert {s.value for s in bleu.per_instance} == {0.0}


def test_extractive_fragments_by_hand() -> None:
    article = ["the", "quick", "brown", "fox", "jumps", "over", "the", "lazy", "dog"]
    summary = ["a", "quick", "brown", "fox", "is", "lazy", "dog"]
    stats = extractive_fragments(article, summary)
    assert stats.fragments == (("quick", "brown", "fox"), ("lazy", "dog"))
    assert stats.coverage == pytest.approx(5 / 7)
    assert stats.density == pytest.approx((9 + 4) / 7)
    assert stats.compression == pytest.approx(9 / 7)


def test_fragments_take_the_longest_match() -> None:
    article = ["x", "y", "z", "w", "x", "y"]
    assert extractive_fragments(article, ["x", "y", "z"]).fragments == (("x", "y", "z"),)


def test_summarization_metric_reads_the_input_article() -> None:
    inst = instance("doc", ["ref"], text="The quick brown fox jumps over the lazy dog.")
    result = SummarizationMetric().evaluate(
        [
            gen_state(inst, "Quick brown fox!"),
        ],
        ctx(),
    )
    got = {s.name.name: s.value for s in result.per_instance}
    assert got == pytest.approx(
        {"summarization_coverage": 1.0, "summarization_density": 3.0, "summarization_compression": 3.0}
    )
    empty = SummarizationMetric().evaluate([gen_state(inst, "")], ctx())
    assert empty.per_instance == []
