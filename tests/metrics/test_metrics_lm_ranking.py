from __future__ import annotations

import math

import pytest

from holistic.core.types import Instance, RequestState
from holistic.metrics.language_modeling import LanguageModelingMetric
from holistic.metrics.ranking import Candidate, RankingMetric, ndcg, reciprocal_rank
from tests.metrics.metrics_testkit import ctx, instance, score_state


def test_bits_per_byte_perplexity_over_windows() -> None:
    doc = instance("doc", [])
    text1, text2 = "héllo ", "world"  # 7 + 5 UTF-8 bytes
    states = [
        score_state(doc, 0, -6.0, continuation=text1, n_tokens=2, role="window"),
        score_state(doc, 1, -4.0, continuation=text2, n_tokens=3, role="window"),
    ]
    result = LanguageModelingMetric().evaluate(states, ctx())
    got = {s.name.name: s.value for s in result.per_instance}
    assert got == {"logprob": -10.0, "num_perplexity_tokens": 5, "num_bytes": 12}
    run = {s.name.name: s.mean for s in result.run_stats}
    assert run["bits_per_byte"] == pytest.approx(10 / math.log(2) / 12)
    assert run["perplexity"] == pytest.approx(math.exp(10 / 5))
    assert run["logprob_per_byte"] == pytest.approx(-10 / 12)


def test_language_modelling_skips_documents_with_a_failed_window() -> None:
    doc = instance("doc", [])
    states = [
        score_state(doc, 0, -1.0, continuation="a", role="window"),
        score_state(doc, 1, -1.0, continuation="b", role="window", success=False),
    ]
    result = LanguageModelingMetric().evaluate(states, ctx())
    assert result.per_instance == [] and result.run_stats == []


def _cands(grades: list[int], scores: list[float]) -> list[Candidate]:
    return [Candidate(i, s, g, None, g > 0) for i, (g, s) in enumerate(zip(grades, scores, strict=True))]


def test_rr_and_ndcg_by_hand() -> None:
    ranked = _cands([0, 2, 0, 1], [0.9, 0.8, 0.7, 0.6])
    assert reciprocal_rank(ranked) == 0.5
    dcg = 2 / math.log2(3) + 1 / math.log2(5)
    ideal = 2 / math.log2(2) + 1 / math.log2(3)
    assert ndcg(ranked, [0, 2, 0, 1]) == pytest.approx(dcg / ideal)
    assert reciprocal_rank(_cands([0] * 12 + [1], [1.0] * 13)) == 0.0  # relevant only at rank 13


def _ranking_states(inst: Instance, yes_no: list[tuple[float, float]]) -> list[RequestState]:
    states: list[RequestState] = []
    for j, (lp_yes, lp_no) in enumerate(yes_no):
        states.append(score_state(inst, j, lp_yes, continuation=" Yes", role="yes"))
        states.append(score_state(inst, j, lp_no, continuation=" No", role="no"))
    return states


def test_ranking_metric_vanilla_and_boosted() -> None:
    # passages 0,1 came from the first stage; 2 (grade 3) was only judged (boosted adds it)
    inst = instance(
        "q",
        ["p0", "p1", "p2"],
        correct=[1, 2],
        relevance=[0, 1, 3],
        first_stage_rank=[1, 2, None],
    )
    states = _ranking_states(inst, [(-0.1, -2.0), (-1.0, -1.5), (-0.2, -3.0)])
    got = {s.name.name: s.value for s in RankingMetric().evaluate(states, ctx()).per_instance}
    # P(yes): p0 = sig(1.9), p1 = sig(0.5), p2 = sig(2.8) -> boosted order 2,0,1 ; vanilla order 0,1
    ideal = 3 / math.log2(2) + 1 / math.log2(3)
    assert got["rr@10"] == 0.5
    assert got["ndcg@10"] == pytest.approx((1 / math.log2(3)) / ideal)
    assert got["rr@10_boosted"] == 1.0
    assert got["ndcg@10_boosted"] == pytest.approx((3 + 1 / math.log2(4)) / ideal)


def test_rr_uses_the_scenario_relevance_threshold_while_ndcg_uses_grades() -> None:
    # TREC style: grade 1 is judged but not relevant (correct needs grade >= 2)
    inst = instance("q", ["p0", "p1"], correct=[1], relevance=[1, 2])
    got = {
        s.name.name: s.value
        for s in RankingMetric().evaluate(_ranking_states(inst, [(0, -5), (-5, 0)]), ctx()).per_instance
    }
    assert got["rr@10"] == 0.5
    ideal = 2 + 1 / math.log2(3)
    assert got["ndcg@10"] == pytest.approx((1 + 2 / math.log2(3)) / ideal)


def test_ranking_skips_queries_without_relevant_passages() -> None:
    inst = instance("q", ["p0"], correct=[])
    assert RankingMetric().evaluate(_ranking_states(inst, [(-1, -1)]), ctx()).per_instance == []
