from __future__ import annotations

import pytest

from holistic.metrics.bertscore import DEFAULT_MODEL, BertScoreMetric, bertscore, default_model_path
from tests.metrics.metrics_testkit import ctx, gen_state, instance


def test_default_encoder_ships_in_the_wheel() -> None:
    path = default_model_path()
    assert (path / "config.json").is_file()


def test_empty_texts_score_zero_without_loading_the_model() -> None:
    assert bertscore([("", "a reference"), ("an answer", "  ")]) == [(0.0, 0.0, 0.0), (0.0, 0.0, 0.0)]


@pytest.mark.real_model
def test_bertscore_matches_the_reference_package_and_takes_best_reference() -> None:
    from bert_score import BERTScorer

    scorer = BERTScorer(model_type=str(default_model_path()), num_layers=6, lang="en")
    p, r, f = scorer.score(["the cat sat on the mat"], ["a cat was sitting on the mat"])
    a = instance("a", ["a cat was sitting on the mat", "stock prices fell sharply"])
    b = instance("b", ["anything"])
    result = BertScoreMetric().evaluate([gen_state(a, "the cat sat on the mat"), gen_state(b, "")], ctx())
    got = {(s.instance_id, s.name.name): s.value for s in result.per_instance}
    assert got[("a", "bertscore_precision")] == pytest.approx(float(p[0]), abs=1e-5)
    assert got[("a", "bertscore_recall")] == pytest.approx(float(r[0]), abs=1e-5)
    assert got[("a", "bertscore_f1")] == pytest.approx(float(f[0]), abs=1e-5)
    assert got[("b", "bertscore_f1")] == 0.0
    assert result.artifacts["bertscore"]["model"] == DEFAULT_MODEL
    same = bertscore([("the same words", "the same words")])[0]
    assert same[2] == pytest.approx(1.0, abs=1e-4)
