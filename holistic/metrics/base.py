"""What built-in metric classes share: declared value names and applicability.

A metric class registered in :data:`holistic.metrics.registry.METRICS` needs
``name``, ``category``, ``infos()`` and ``evaluate(states, ctx)`` (the
:class:`~holistic.core.interfaces.Metric` protocol). Two optional class methods
let :func:`~holistic.metrics.registry.select_metrics` plan without running anything:

- ``not_applicable(info, adapter, deployment) -> str | None``: why the metric
  cannot be measured for this scenario, adaptation and model (``None``: it can);
- ``configure(info, adapter, deployment) -> Metric``: an instance set up for the run
  (third-party classes without it are constructed with no arguments).

Built-ins declare their value names in the class attribute ``INFOS`` so the registry
can answer :func:`~holistic.metrics.registry.metric_info` without instantiating them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import ClassVar

from holistic.core.interfaces import MetricContext, MetricInfo, MetricResult, ScenarioInfo
from holistic.core.types import AdapterSpec, ModelDeployment, RequestState


class BaseMetric(ABC):
    """Base class of the built-in metrics (subclasses set the class attributes)."""

    name: str
    category: str
    INFOS: ClassVar[tuple[MetricInfo, ...]] = ()

    def infos(self) -> Sequence[MetricInfo]:
        return self.INFOS

    @classmethod
    def not_applicable(cls, info: ScenarioInfo, adapter: AdapterSpec, deployment: ModelDeployment) -> str | None:
        return None

    @classmethod
    def configure(cls, info: ScenarioInfo, adapter: AdapterSpec, deployment: ModelDeployment) -> BaseMetric:
        return cls()

    @abstractmethod
    def evaluate(self, states: Sequence[RequestState], ctx: MetricContext) -> MetricResult:
        """Score every unit of the run (all trials and perturbed variants)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def info(
    name: str,
    category: str,
    description: str,
    *,
    higher_is_better: bool = True,
    needs_logprobs: bool = False,
    needs_references: bool = True,
    needs_generation: bool = False,
) -> MetricInfo:
    """Shorthand for declaring a :class:`MetricInfo`."""
    return MetricInfo(
        name=name,
        category=category,
        higher_is_better=higher_is_better,
        needs_logprobs=needs_logprobs,
        needs_references=needs_references,
        needs_generation=needs_generation,
        description=description,
    )
