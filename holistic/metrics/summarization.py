"""How extractive a summary is: coverage, density and compression (Grusky et al., 2018).

The summary ``S`` and the article ``A`` (the instance's input) are split into
lower-cased word tokens. Extractive fragments are found greedily: from each
summary position, the longest run of tokens shared with any article position is
a fragment, and the scan resumes after it. With ``F`` the fragments:

- ``summarization_coverage`` = sum |f| / |S|: share of summary words copied from the article;
- ``summarization_density`` = sum |f|^2 / |S|: mean length of the copied fragment
  each word belongs to (long copied spans score high);
- ``summarization_compression`` = |A| / |S|.

These describe the summaries (abstractive vs extractive); they are not quality
scores, so their direction in :func:`~holistic.metrics.registry.metric_info` is
nominal. The summary quality metric is ROUGE-2 (:mod:`holistic.metrics.overlap`).
An empty summary gets no values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from holistic.core.interfaces import MetricContext, MetricResult, ScenarioInfo
from holistic.core.types import AdapterSpec, ModelDeployment, RequestState
from holistic.metrics.base import BaseMetric, info
from holistic.metrics.states import first_main, group_units, outputs
from holistic.metrics.text import word_tokens


@dataclass(frozen=True)
class Fragments:
    """Extractive fragments of a summary (token lists) and the two text lengths."""

    fragments: tuple[tuple[str, ...], ...]
    summary_length: int
    article_length: int

    @property
    def coverage(self) -> float:
        return sum(len(f) for f in self.fragments) / self.summary_length

    @property
    def density(self) -> float:
        return sum(len(f) ** 2 for f in self.fragments) / self.summary_length

    @property
    def compression(self) -> float:
        return self.article_length / self.summary_length


def extractive_fragments(article: Sequence[str], summary: Sequence[str]) -> Fragments:
    """Greedy longest shared fragments of ``summary`` in ``article`` (token sequences)."""
    positions: dict[str, list[int]] = {}
    for j, token in enumerate(article):
        positions.setdefault(token, []).append(j)
    found: list[tuple[str, ...]] = []
    i = 0
    while i < len(summary):
        longest = 0
        for j in positions.get(summary[i], ()):
            length = 0
            while (
                i + length < len(summary) and j + length < len(article) and summary[i + length] == article[j + length]
            ):
                length += 1
            longest = max(longest, length)
        if longest:
            found.append(tuple(summary[i : i + longest]))
            i += longest
        else:
            i += 1
    return Fragments(tuple(found), len(summary), len(article))


class SummarizationMetric(BaseMetric):
    """Coverage, density and compression of generated summaries against their articles."""

    name = "summarization"
    category = "accuracy"
    accuracy_tasks = ("summarization",)
    INFOS = (
        info(
            "summarization_coverage",
            "accuracy",
            "Share of summary words inside fragments copied from the article (Grusky et al.); descriptive.",
            higher_is_better=False,
            needs_references=False,
            needs_generation=True,
        ),
        info(
            "summarization_density",
            "accuracy",
            "Mean squared length of copied fragments per summary word (Grusky et al.); descriptive.",
            higher_is_better=False,
            needs_references=False,
            needs_generation=True,
        ),
        info(
            "summarization_compression",
            "accuracy",
            "Article words per summary word; descriptive.",
            needs_references=False,
            needs_generation=True,
        ),
    )

    @classmethod
    def not_applicable(cls, info: ScenarioInfo, adapter: AdapterSpec, deployment: ModelDeployment) -> str | None:
        if adapter.method != "generation":
            return f"summary statistics need generated summaries (method is {adapter.method})"
        return None

    def evaluate(self, states: Sequence[RequestState], ctx: MetricContext) -> MetricResult:
        result = MetricResult()
        for unit in group_units(states):
            state = first_main(unit)
            if state is None:
                continue
            summary = word_tokens(outputs(state)[0])
            if not summary:
                continue
            stats = extractive_fragments(word_tokens(unit.instance.input), summary)
            result.per_instance.append(unit.stat("summarization_coverage", stats.coverage))
            result.per_instance.append(unit.stat("summarization_density", stats.density))
            result.per_instance.append(unit.stat("summarization_compression", stats.compression))
        return result
