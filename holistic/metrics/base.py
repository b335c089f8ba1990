"""The complete contract of a metric class: :class:`BaseMetric`.

Every metric registered in :data:`holistic.metrics.registry.METRICS` (built-in or plugin)
subclasses :class:`BaseMetric`: it sets ``name``, ``category`` and ``INFOS`` and implements
``evaluate(states, ctx)``. Three class methods with defaults let
:func:`~holistic.metrics.registry.select_metrics` plan without running anything:

- ``selected_for(info, adapter) -> bool``: whether asking for the metric's category
  measures it on this scenario (an accuracy metric says which tasks it scores);
- ``not_applicable(info, adapter, deployment) -> str | None``: why the metric
  cannot be measured for this scenario, adaptation and model (``None``: it can);
- ``configure(info, adapter, deployment) -> BaseMetric``: an instance set up for the run
  (default: constructed with no arguments).

Built-ins declare their value names in the class attribute ``INFOS`` so the registry
can answer :func:`~holistic.metrics.registry.metric_info` without instantiating them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Mapping, Sequence
from typing import ClassVar, TypedDict, Unpack

from holistic.core.interfaces import MetricContext, MetricInfo, MetricResult, ScenarioInfo
from holistic.core.types import AdapterSpec, ModelDeployment, RequestState


class _EveryTask(frozenset[str]):
    def __contains__(self, item: object) -> bool:
        return True


EVERY_TASK: Collection[str] = _EveryTask()
"""``accuracy_tasks`` of a metric that measures the accuracy of every task."""


class BaseMetric(ABC):
    """Base class of the built-in metrics (subclasses set the class attributes)."""

    name: ClassVar[str]
    category: ClassVar[str]
    """``accuracy``, ``calibration``, ``robustness``... (one of :data:`~holistic.core.interfaces.METRIC_CATEGORIES`)."""
    INFOS: ClassVar[tuple[MetricInfo, ...]] = ()
    """Every value name the metric writes, declared so the registry knows them without an instance."""
    optional: ClassVar[bool] = False
    """Only measured when asked for by name, as the scenario's main metric or among its
    ``extra_metrics`` (never chosen for its category alone)."""
    directional_worst_case: ClassVar[bool] = False
    """Worst case over perturbed variants follows each value's direction (rather than the minimum)."""
    needs_extra: ClassVar[str | None] = None
    """The extra of ``pip install 'holistic[...]'`` it needs (``metrics`` for a model-based score),
    checked before a run writes anything (:mod:`holistic.core.extras`); ``None``: the core suffices."""

    def infos(self) -> Sequence[MetricInfo]:
        return self.INFOS

    accuracy_tasks: ClassVar[Collection[str]] = ()
    """An accuracy metric: the scenario tasks (``ScenarioInfo.task``) whose accuracy it measures
    (:data:`EVERY_TASK`: all of them)."""

    @classmethod
    def selected_for(cls, info: ScenarioInfo, adapter: AdapterSpec) -> bool:
        """Whether asking for this metric's category measures it on this scenario, unless it is
        ``optional`` (whether it can be measured is :meth:`not_applicable`'s question). A
        metric of another category is measured on every scenario; a scenario's accuracy is
        what the metrics of its task measure (``accuracy_tasks``, or an override of this
        method), the metric producing its ``main_metric`` and its ``extra_metrics``."""
        return cls.category != "accuracy" or info.task in cls.accuracy_tasks

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


class MetricFacts(TypedDict, total=False):
    """What a value declares beside its name, category and description (:class:`MetricInfo`'s
    defaults for those not given)."""

    higher_is_better: bool
    needs_logprobs: bool
    needs_references: bool
    needs_generation: bool


def info(name: str, category: str, description: str, **facts: Unpack[MetricFacts]) -> MetricInfo:
    """Shorthand for declaring a :class:`MetricInfo`."""
    return MetricInfo(name=name, category=category, description=description, **facts)


def infos(category: str, descriptions: Mapping[str, str], **facts: Unpack[MetricFacts]) -> tuple[MetricInfo, ...]:
    """One :class:`MetricInfo` per ``value name -> description``, all of ``category`` and with the
    same ``facts`` (``higher_is_better``, ``needs_logprobs``... as :func:`info` takes them)."""
    return tuple(info(name, category, text, **facts) for name, text in descriptions.items())


def scoring_problem(
    adapter: AdapterSpec, deployment: ModelDeployment, method: str, needs: str, scores: str
) -> str | None:
    """Why a metric of a scoring ``method`` cannot be measured: the run uses another method, or
    the model cannot score given text (``needs``: what needs the method; ``scores``: what the
    model would score)."""
    if adapter.method != method:
        return f"{needs} the {method} method, not {adapter.method}"
    if adapter.scores_loglikelihood and not deployment.capabilities.prompt_logprobs:
        return f"model {deployment.name} cannot score {scores} (no prompt logprobs)"
    return None
