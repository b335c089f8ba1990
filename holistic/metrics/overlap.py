"""N-gram overlap with the references: ROUGE and BLEU.

- ``rouge_1``, ``rouge_2``, ``rouge_l``: F-measure from the ``rouge-score``
  package with Porter stemming, maximum over the correct references.
- ``bleu_1``, ``bleu_4``: as HELM computes them: NLTK ``sentence_bleu`` of the
  ``word_tokenize`` tokens (case kept; :mod:`holistic.metrics.tokenize`, offline)
  with weights ``(1, 0, 0, 0)`` and ``(0, 0, 0, 1)`` — BLEU-4 is the 4-gram precision
  alone, times the brevity penalty — and no smoothing, maximum over the correct
  references. An answer with no n-gram match scores 0 (or NLTK's underflow value).

Both packages are imported when a metric is evaluated, never at import time.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from holistic.core.interfaces import MetricContext, MetricResult, ScenarioInfo
from holistic.core.types import AdapterSpec, ModelDeployment, RequestState
from holistic.metrics.base import BaseMetric, info
from holistic.metrics.states import outputs, scorable_units
from holistic.metrics.tokenize import word_tokenize

_ROUGE_TYPES = {"rouge_1": "rouge1", "rouge_2": "rouge2", "rouge_l": "rougeL"}
_BLEU_WEIGHTS = {"bleu_1": (1.0, 0.0, 0.0, 0.0), "bleu_4": (0.0, 0.0, 0.0, 1.0)}


def _needs_generation(adapter: AdapterSpec) -> str | None:
    if adapter.method != "generation":
        return f"overlap with references needs generated text (method is {adapter.method})"
    return None


@lru_cache(maxsize=1)
def _rouge_scorer() -> Any:
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(list(_ROUGE_TYPES.values()), use_stemmer=True)


def rouge_scores(prediction: str, references: Sequence[str]) -> dict[str, float]:
    """ROUGE-1/2/L F-measures, each the maximum over ``references``."""
    scorer = _rouge_scorer()
    best = dict.fromkeys(_ROUGE_TYPES, 0.0)
    for reference in references:
        scores = scorer.score(reference, prediction)
        for name, key in _ROUGE_TYPES.items():
            best[name] = max(best[name], float(scores[key].fmeasure))
    return best


def bleu_scores(prediction: str, references: Sequence[str]) -> dict[str, float]:
    """HELM's BLEU-1 and BLEU-4 (unsmoothed), each the maximum over ``references``."""
    from nltk.translate.bleu_score import sentence_bleu

    hypothesis = word_tokenize(prediction.strip())
    best = dict.fromkeys(_BLEU_WEIGHTS, 0.0)
    with warnings.catch_warnings():  # NLTK warns on every zero n-gram count
        warnings.simplefilter("ignore")
        for reference in references:
            gold = word_tokenize(reference)
            for name, weights in _BLEU_WEIGHTS.items():
                best[name] = max(best[name], float(sentence_bleu([gold], hypothesis, weights=weights)))
    return best


class _OverlapMetric(BaseMetric):
    category = "accuracy"
    _score: Callable[[str, Sequence[str]], dict[str, float]]

    @classmethod
    def not_applicable(cls, info: ScenarioInfo, adapter: AdapterSpec, deployment: ModelDeployment) -> str | None:
        return _needs_generation(adapter)

    def evaluate(self, states: Sequence[RequestState], ctx: MetricContext) -> MetricResult:
        result = MetricResult()
        score = type(self)._score
        for unit, state, references in scorable_units(states):
            for name, value in score(outputs(state)[0], references).items():
                result.per_instance.append(unit.stat(name, value))
        return result


class RougeMetric(_OverlapMetric):
    """ROUGE-1, ROUGE-2 and ROUGE-L F-measures (rouge-score, stemmed)."""

    name = "rouge"
    _score = staticmethod(rouge_scores)
    accuracy_tasks = ("summarization", "generation")

    INFOS = (
        info(
            "rouge_1",
            "accuracy",
            "ROUGE-1 F-measure (rouge-score, Porter stemming), best reference.",
            needs_generation=True,
        ),
        info(
            "rouge_2",
            "accuracy",
            "ROUGE-2 F-measure (rouge-score, Porter stemming), best reference.",
            needs_generation=True,
        ),
        info(
            "rouge_l",
            "accuracy",
            "ROUGE-L F-measure (rouge-score, Porter stemming), best reference.",
            needs_generation=True,
        ),
    )


class BleuMetric(_OverlapMetric):
    """BLEU-1 and BLEU-4 as HELM computes them (NLTK sentence BLEU, word_tokenize, no smoothing)."""

    name = "bleu"
    _score = staticmethod(bleu_scores)
    accuracy_tasks = ("generation",)

    INFOS = (
        info(
            "bleu_1",
            "accuracy",
            "Sentence BLEU, unigram precision (NLTK, no smoothing, as HELM), best reference.",
            needs_generation=True,
        ),
        info(
            "bleu_4",
            "accuracy",
            "Sentence BLEU, 4-gram precision only (weights 0,0,0,1, no smoothing, as HELM), best reference.",
            needs_generation=True,
        ),
    )
