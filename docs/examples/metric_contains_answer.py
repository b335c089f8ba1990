"""Example plugin: a metric that says whether the answer appears anywhere in the output.

Load it with ``helm-run SPEC --plugins docs/examples/metric_contains_answer.py``; a run then
asks for it by name (``metrics: [accuracy, contains_answer]``). Its ``accuracy_tasks`` are
empty (the default): the ``accuracy`` category alone never selects it.
"""

from __future__ import annotations

from collections.abc import Sequence

from holistic.plugin import (
    BaseMetric,
    MetricContext,
    MetricResult,
    RequestState,
    info,
    normalize_quasi,
    outputs,
    register_metric,
    scorable_units,
)

CONTAINS_ANSWER = "contains_answer"


@register_metric
class ContainsAnswer(BaseMetric):
    """1 when a correct reference occurs in the output (after HELM's quasi-exact normalisation)."""

    name = CONTAINS_ANSWER  # what a spec's `metrics:` names; here also its one value's name
    category = "accuracy"
    INFOS = (
        info(
            CONTAINS_ANSWER,
            "accuracy",
            "A correct reference occurs somewhere in the output (lower-cased, punctuation and articles removed).",
            needs_generation=True,
        ),
    )

    def evaluate(self, states: Sequence[RequestState], ctx: MetricContext) -> MetricResult:
        result = MetricResult()
        for unit, state, references in scorable_units(states):
            output = normalize_quasi(outputs(state)[0])
            hit = any(normalize_quasi(ref) and normalize_quasi(ref) in output for ref in references)
            result.per_instance.append(unit.stat(CONTAINS_ANSWER, 1.0 if hit else 0.0))
        return result
