"""Everything a plugin needs, in one import: ``from holistic import plugin`` (or named imports).

A plugin adds scenarios, metrics, perturbations or model providers without touching holistic.
Import from here only: the modules behind these names are private and may move.

Register with the decorators below (the module is then loaded with ``helm-run --plugins
MODULE|PATH``), or, for an installed package, with entry points in the groups
``holistic.scenarios``, ``holistic.metrics``, ``holistic.perturbations`` and ``holistic.models``
(``name = "package.module:Class"``; a provider's entry point names its :class:`Provider` subclass).
``CONTRIBUTING.md`` walks through one complete example of each.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar, cast

from holistic.core.errors import ModelError, ScenarioArgError
from holistic.core.interfaces import (
    METRIC_CATEGORIES,
    Client,
    MetricContext,
    MetricInfo,
    MetricResult,
    ScenarioContext,
    ScenarioInfo,
    Tokenizer,
)
from holistic.core.types import (
    CORRECT_TAG,
    TEST_SPLIT,
    TRAIN_SPLIT,
    VALID_SPLIT,
    AdapterSpec,
    Completion,
    Instance,
    Message,
    MetricName,
    ModelDeployment,
    PerInstanceStat,
    PerturbationDescription,
    PromptFormat,
    Reference,
    Request,
    RequestResult,
    RequestRole,
    RequestState,
    Stat,
    Token,
)
from holistic.metrics.base import EVERY_TASK, BaseMetric, info, infos
from holistic.metrics.registry import METRICS
from holistic.metrics.states import group_units, metric_name, outputs, reference_texts, scorable_units, succeeded
from holistic.metrics.text import normalize_quasi
from holistic.models.provider import ClientFactory, Provider, declared_provider
from holistic.models.registry import PROVIDERS
from holistic.models.tokens import API_TOKENS, GgufModel, OwnTokenizer, TokenCounting
from holistic.perturbations.base import (
    FAIRNESS,
    ROBUSTNESS,
    BasePerturbation,
    PerturbRandom,
    TextPerturbation,
    check_probability,
)
from holistic.perturbations.registry import PERTURBATIONS
from holistic.scenarios.base import BaseScenario
from holistic.scenarios.loading.common import FileScenario
from holistic.scenarios.loading.sources import DataFile, DataNeeds, Download, ResolvedData
from holistic.scenarios.registry import SCENARIOS

ScenarioT = TypeVar("ScenarioT", bound=type[BaseScenario])
MetricT = TypeVar("MetricT", bound=type[BaseMetric])
PerturbationT = TypeVar("PerturbationT", bound=type[BasePerturbation])
ProviderT = TypeVar("ProviderT", bound=Callable[..., object])
"""A :class:`Provider` subclass, or (the earlier form) a client factory."""


def register_scenario(name: str) -> Callable[[ScenarioT], ScenarioT]:
    """Class decorator: the scenario a run spec names ``name`` (``scenario: name``)."""

    def decorator(cls: ScenarioT) -> ScenarioT:
        SCENARIOS.add(name, cls)
        return cls

    return decorator


def register_metric(name: str) -> Callable[[MetricT], MetricT]:
    """Class decorator: the metric a run spec names ``name`` (``metrics: [name]``; its category
    also selects it)."""

    def decorator(cls: MetricT) -> MetricT:
        METRICS.add(name, cls)
        return cls

    return decorator


def register_perturbation(name: str) -> Callable[[PerturbationT], PerturbationT]:
    """Class decorator: the perturbation a run spec names ``name`` (``perturbations: [name]``)."""

    def decorator(cls: PerturbationT) -> PerturbationT:
        PERTURBATIONS.add(name, cls)
        return cls

    return decorator


def register_provider(name: str, *, tokens: TokenCounting | None = None) -> Callable[[ProviderT], ProviderT]:
    """Class decorator: the :class:`Provider` of the models whose ``provider:`` is ``name`` in a
    models file (its class attributes declare its facts, its ``create_client`` builds clients).

    A plain client factory ``(ModelDeployment) -> Client`` is accepted too (the form of earlier
    versions): it becomes a remote provider whose models count tokens with ``tokens`` (e.g.
    ``OwnTokenizer(lambda deployment: MyTokenizer())``), else by the registry entry's
    ``tokenizer`` field."""

    def decorator(obj: ProviderT) -> ProviderT:
        if isinstance(obj, type) and issubclass(obj, Provider):
            if tokens is not None:
                raise TypeError(f"provider {name!r}: declare tokens as the class's `tokens` attribute")
            PROVIDERS.add(name, obj)
        else:
            PROVIDERS.add(
                name,
                declared_provider(name, cast(ClientFactory, obj), tokens=tokens if tokens is not None else API_TOKENS),
            )
        return obj

    return decorator


__all__ = [
    "CORRECT_TAG",
    "EVERY_TASK",
    "FAIRNESS",
    "METRIC_CATEGORIES",
    "ROBUSTNESS",
    "TEST_SPLIT",
    "TRAIN_SPLIT",
    "VALID_SPLIT",
    "AdapterSpec",
    "BaseMetric",
    "BasePerturbation",
    "BaseScenario",
    "Client",
    "ClientFactory",
    "Completion",
    "DataFile",
    "DataNeeds",
    "Download",
    "FileScenario",
    "GgufModel",
    "Instance",
    "Message",
    "MetricContext",
    "MetricInfo",
    "MetricName",
    "MetricResult",
    "ModelDeployment",
    "ModelError",
    "OwnTokenizer",
    "PerInstanceStat",
    "PerturbRandom",
    "PerturbationDescription",
    "PromptFormat",
    "Provider",
    "Reference",
    "Request",
    "RequestResult",
    "RequestRole",
    "RequestState",
    "ResolvedData",
    "ScenarioArgError",
    "ScenarioContext",
    "ScenarioInfo",
    "Stat",
    "TextPerturbation",
    "Token",
    "TokenCounting",
    "Tokenizer",
    "check_probability",
    "group_units",
    "info",
    "infos",
    "metric_name",
    "normalize_quasi",
    "outputs",
    "reference_texts",
    "register_metric",
    "register_perturbation",
    "register_provider",
    "register_scenario",
    "scorable_units",
    "succeeded",
]
