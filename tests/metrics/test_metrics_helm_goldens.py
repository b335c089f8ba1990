"""holistic against values HELM's own functions computed (``tests/conformance/metrics_helm.json``).

The golden file was written by ``tools/conformance/helm/peer/helm_metric_goldens.py`` run in a virtual
environment with crfm-helm 0.5.16 (its ``made_by`` block records the versions); these
tests need neither HELM nor the network.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from holistic.core.types import Instance, MetricName, PerInstanceStat, PerturbationDescription
from holistic.metrics import accuracy
from holistic.metrics.bias import BiasMetric
from holistic.metrics.calibration_math import helm_calibration_stats
from holistic.metrics.overlap import bleu_scores
from holistic.metrics.robustness import worst_case
from holistic.metrics.tokenize import word_tokenize
from holistic.perturbations.misspellings import Misspellings

GOLDENS = json.loads((Path(__file__).resolve().parents[1] / "conformance" / "metrics_helm.json").read_text("utf-8"))
EXACT = 1e-12


def test_goldens_were_made_by_helm_0_5_16() -> None:
    assert GOLDENS["made_by"]["crfm-helm"] == "0.5.16"


@pytest.mark.parametrize("case", GOLDENS["token_metrics"], ids=lambda c: repr(c["pred"])[:30])
def test_token_f1_exact_match_and_bleu(case: dict[str, Any]) -> None:
    expected = case["values"]
    for name in ("exact_match", "quasi_exact_match", "prefix_exact_match", "quasi_prefix_exact_match", "f1_score"):
        assert getattr(accuracy, name)(case["pred"], case["gold"]) == pytest.approx(expected[name], abs=EXACT), name
    bleu = bleu_scores(case["pred"], [case["gold"]])
    assert bleu["bleu_1"] == pytest.approx(expected["bleu_1"], abs=EXACT)
    assert bleu["bleu_4"] == pytest.approx(expected["bleu_4"], abs=EXACT)


def test_word_tokenize_matches_nltk_token_for_token() -> None:
    for case in GOLDENS["word_tokenize"]:
        assert word_tokenize(case["text"]) == case["tokens"], case["text"][:80]
    assert sum(len(c["tokens"]) for c in GOLDENS["word_tokenize"]) > 1000


@pytest.mark.parametrize("case", GOLDENS["bias"], ids=lambda c: c["texts"][0][:20])
def test_bias_values(case: dict[str, Any]) -> None:
    ours = BiasMetric.scores(case["texts"])
    assert set(ours) == set(case["values"])
    for name, value in case["values"].items():
        assert (ours[name] is None) == (value is None), name
        if value is not None:
            assert ours[name] == pytest.approx(value, abs=EXACT), name


@pytest.mark.parametrize("case", GOLDENS["calibration"], ids=lambda c: f"n{len(c['max_prob'])}")
def test_calibration_values(case: dict[str, Any]) -> None:
    ours = helm_calibration_stats(case["max_prob"], case["correct"])
    assert set(ours) == set(case["values"])
    for name, value in case["values"].items():
        tolerance = 1e-6 if name.startswith("platt") else EXACT  # lbfgs stops at its own tolerance
        assert ours[name] == pytest.approx(value, abs=tolerance), name


def test_bits_per_byte_and_perplexity() -> None:
    import math

    case = GOLDENS["perplexity"][0]
    docs = case["documents"]
    logprob = sum(d["logprob"] for d in docs)
    n_bytes = sum(d["bytes"] for d in docs)
    n_tokens = sum(d["tokens"] for d in docs)
    assert -logprob / n_bytes / math.log(2) == pytest.approx(case["values"]["bits_per_byte"], abs=EXACT)
    assert math.e ** (-logprob / n_tokens) == pytest.approx(case["values"]["perplexity"], abs=EXACT)


def test_worst_case_rows_and_before_values() -> None:
    case = GOLDENS["worst_case"][0]
    flags = case["flags"]
    instances, per = [], []
    for row in case["values"]:
        pert = row["perturbation"]
        description = None if pert is None else PerturbationDescription(pert, **flags[pert])
        instances.append(Instance(row["instance"], "x", perturbation=description))
        for name in ("exact_match", "inference_runtime"):
            per.append(PerInstanceStat(row["instance"], 0, MetricName(name, "test", None, pert), row[name]))
    means: dict[tuple[str, str], list[float]] = defaultdict(list)
    for stat in worst_case(per, instances):
        means[(stat.name.name, str(stat.name.perturbation))].append(stat.value)
    expected = {}
    for row in case["stats"]:
        family = row["perturbation"] in ("robustness", "fairness")
        key = row["perturbation"] if family else f"{row['perturbation']}:{row['computed_on']}"
        expected[(row["name"], key)] = (row["mean"], row["count"])
    assert set(means) == set(expected)
    for key, (mean, count) in expected.items():
        assert len(means[key]) == count, key
        assert sum(means[key]) / count == pytest.approx(mean, abs=EXACT), key


class _SeededRandom:
    """A stand-in for holistic's per-instance randomness that draws from one ``random.Random``."""

    def __init__(self, seed: int) -> None:
        self.seq = random.Random(seed)


@pytest.mark.parametrize("case", GOLDENS["misspellings"], ids=lambda c: f"{c['prob']}-{c['seed']}")
def test_misspellings_same_words_same_draws(case: dict[str, Any]) -> None:
    perturbed = Misspellings(prob=case["prob"]).perturb(case["text"], _SeededRandom(case["seed"]))  # type: ignore[arg-type]
    assert perturbed == case["perturbed"]


@pytest.mark.parametrize("case", GOLDENS["classification"], ids=lambda c: c["labels"][0])
def test_classification_f1_values(case: dict[str, Any]) -> None:
    from holistic.metrics.classification import ClassificationMetric

    from .metrics_testkit import ctx, gen_state, instance

    states = [
        gen_state(instance(f"id{i}", [label]), text)
        for i, (label, text) in enumerate(zip(case["labels"], case["completions"], strict=True))
    ]
    result = ClassificationMetric().evaluate(states, ctx())
    ours = {s.name.name: s.mean for s in result.run_stats}
    assert set(ours) == set(case["values"])
    for name, value in case["values"].items():
        assert ours[name] == pytest.approx(value, abs=EXACT), name


@pytest.mark.parametrize("case", GOLDENS["final_number_exact_match"], ids=lambda c: repr(c["pred"]))
def test_final_number_exact_match_values(case: dict[str, Any]) -> None:
    assert accuracy.final_number_exact_match(case["pred"], case["gold"]) == case["value"]
