"""N-gram overlap with the references: ROUGE and BLEU.

- ``rouge_1``, ``rouge_2``, ``rouge_l``: F-measure from the ``rouge-score``
  package with Porter stemming, maximum over the correct references.
- ``bleu_1``, ``bleu_4``: NLTK ``sentence_bleu`` (uniform weights up to 1 or 4
  grams) with Chen & Cherry smoothing method 1, on lower-cased word tokens (no
  NLTK data download is needed), maximum over the correct references. An empty
  answer scores 0.

Both packages are imported when a metric is evaluated, never at import time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from holistic.core.interfaces import MetricContext, MetricResult, ScenarioInfo
from holistic.core.types import AdapterSpec, ModelDeployment, RequestState
from holistic.metrics.base import BaseMetric, info
from holistic.metrics.registry import METRICS
from holistic.metrics.states import first_main, group_units, outputs, reference_texts
from holistic.metrics.text import word_tokens

_ROUGE_TYPES = {"rouge_1": "rouge1", "rouge_2": "rouge2", "rouge_l": "rougeL"}
_BLEU_WEIGHTS = {"bleu_1": (1.0,), "bleu_4": (0.25, 0.25, 0.25, 0.25)}


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
    """BLEU-1 and BLEU-4 (smoothed), each the maximum over ``references``."""
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    hypothesis = word_tokens(prediction)
    best = dict.fromkeys(_BLEU_WEIGHTS, 0.0)
    if not hypothesis:
        return best
    smoothing: Callable[..., Any] = SmoothingFunction().method1
    for reference in references:
        gold = word_tokens(reference)
        if not gold:
            continue
        for name, weights in _BLEU_WEIGHTS.items():
            score = sentence_bleu([gold], hypothesis, weights=weights, smoothing_function=smoothing)
            best[name] = max(best[name], float(score))
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
        for unit in group_units(states):
            state = first_main(unit)
            references = reference_texts(unit.instance)
            if state is None or not references:
                continue
            for name, value in score(outputs(state)[0], references).items():
                result.per_instance.append(unit.stat(name, value))
        return result


@METRICS.register("rouge")
class RougeMetric(_OverlapMetric):
    """ROUGE-1, ROUGE-2 and ROUGE-L F-measures (rouge-score, stemmed)."""

    name = "rouge"
    _score = staticmethod(rouge_scores)
    INFOS = (
        info("rouge_1", "accuracy", "ROUGE-1 F-measure (rouge-score, Porter stemming), best reference.",
             needs_generation=True),
        info("rouge_2", "accuracy", "ROUGE-2 F-measure (rouge-score, Porter stemming), best reference.",
             needs_generation=True),
        info("rouge_l", "accuracy", "ROUGE-L F-measure (rouge-score, Porter stemming), best reference.",
             needs_generation=True),
    )


@METRICS.register("bleu")
class BleuMetric(_OverlapMetric):
    """BLEU-1 and BLEU-4 (NLTK sentence BLEU, smoothing method 1)."""

    name = "bleu"
    _score = staticmethod(bleu_scores)
    INFOS = (
        info("bleu_1", "accuracy", "Sentence BLEU with unigrams (NLTK, smoothing 1), best reference.",
             needs_generation=True),
        info("bleu_4", "accuracy", "Sentence BLEU up to 4-grams (NLTK, smoothing 1), best reference.",
             needs_generation=True),
    )
