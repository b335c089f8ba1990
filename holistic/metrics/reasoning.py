"""``reasoning_unfinished_rate``: the share of instances whose model's thought did not finish.

A reasoning model that reaches ``max_tokens`` (or is stopped by its server) while still thinking
gives no answer: its completion is empty and nothing is read from the thought
(:mod:`holistic.models.reasoning`), so it is scored as not answered by the accuracy metrics, and
this value says how often that happened, beside the run's accuracy. Measured on runs that send a
reasoning setting and on models that return thoughts (the models file's ``reasoning:``), one
value per instance: 1 when the first completion of its first main request is unfinished.
"""

from __future__ import annotations

from collections.abc import Sequence

from holistic.core.interfaces import MetricContext, MetricResult, ScenarioInfo
from holistic.core.types import AdapterSpec, ModelDeployment, ReasoningSupport, RequestState
from holistic.metrics.base import EVERY_TASK, BaseMetric, infos
from holistic.metrics.states import first_main, group_units

UNFINISHED = "reasoning_unfinished_rate"


def unfinished(state: RequestState) -> bool:
    """Whether ``state``'s answer never came because the thought did not finish."""
    result = state.result
    return bool(result is not None and result.completions and result.completions[0].reasoning_unfinished)


class ReasoningUnfinished(BaseMetric):
    """The share of instances whose thought did not finish (see the module docstring)."""

    name = "reasoning"
    category = "accuracy"
    accuracy_tasks = EVERY_TASK
    INFOS = infos(
        "accuracy",
        {UNFINISHED: "Share of instances whose reasoning did not finish before max_tokens (not answered)."},
        higher_is_better=False,
        needs_references=False,
        needs_generation=True,
    )

    @classmethod
    def not_applicable(cls, info: ScenarioInfo, adapter: AdapterSpec, deployment: ModelDeployment) -> str | None:
        if adapter.reasoning is None and deployment.reasoning == ReasoningSupport():
            return f"model {deployment.name} neither takes a reasoning setting nor returns thoughts"
        if adapter.scores_loglikelihood:
            return f"method {adapter.method} generates no thoughts"
        return None

    def evaluate(self, states: Sequence[RequestState], ctx: MetricContext) -> MetricResult:
        result = MetricResult()
        for unit in group_units(states):
            state = first_main(unit)
            if state is not None and state.request.kind == "generate":
                result.per_instance.append(unit.stat(UNFINISHED, 1.0 if unfinished(state) else 0.0))
        return result
