"""Everything a plugin needs, in one import: ``from holistic import plugin`` (or named imports).

A plugin adds scenarios, metrics, perturbations or model providers without touching holistic.
Import from here only: the modules behind these names are private and may move.

Register with the decorators below, which read the name the class declares (a scenario's
``info.name``, a metric's or perturbation's ``name``; a provider's is given to
``@register_provider``); the module is then loaded with ``helm-run --plugins MODULE|PATH``.
An installed package declares entry points instead, in the groups
``holistic.scenarios``, ``holistic.metrics``, ``holistic.perturbations`` and ``holistic.models``
(``name = "package.module:Class"``; a provider's entry point names its :class:`Provider` subclass).
``CONTRIBUTING.md`` walks through one complete example of each.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from holistic.core.arguments import arg
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
from holistic.core.registry import RegistrationError
from holistic.core.types import (
    CORRECT_TAG,
    TEST_SPLIT,
    TRAIN_SPLIT,
    VALID_SPLIT,
    AdapterDefaults,
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
from holistic.models.base_client import BaseClient
from holistic.models.provider import ClientFactory, Provider
from holistic.models.registry import PROVIDERS
from holistic.models.tokens import GgufModel, OwnTokenizer, TokenCounting
from holistic.perturbations.base import (
    FAIRNESS,
    ROBUSTNESS,
    BasePerturbation,
    PerturbRandom,
    TextPerturbation,
    check_probability,
)
from holistic.perturbations.registry import PERTURBATIONS
from holistic.scenarios.base import BaseScenario, PlanFacts
from holistic.scenarios.loading.common import FileScenario
from holistic.scenarios.loading.sources import DataFile, DataNeeds, Download, ResolvedData
from holistic.scenarios.registry import SCENARIOS

ScenarioT = TypeVar("ScenarioT", bound=type[BaseScenario])
MetricT = TypeVar("MetricT", bound=type[BaseMetric])
PerturbationT = TypeVar("PerturbationT", bound=type[BasePerturbation])
ProviderT = TypeVar("ProviderT", bound=type[Provider])


def register_scenario(cls: ScenarioT) -> ScenarioT:
    """Class decorator: the scenario a run spec names ``cls.info.name`` (``scenario: name``)."""
    SCENARIOS.add_declared(cls, "register_scenario")
    return cls


def register_metric(cls: MetricT) -> MetricT:
    """Class decorator: the metric a run spec names ``cls.name`` (``metrics: [name]``; its
    category also selects it)."""
    METRICS.add_declared(cls, "register_metric")
    return cls


def register_perturbation(cls: PerturbationT) -> PerturbationT:
    """Class decorator: the perturbation a run spec names ``cls.name`` (``perturbations: [name]``)."""
    PERTURBATIONS.add_declared(cls, "register_perturbation")
    return cls


def register_provider(name: str) -> Callable[[ProviderT], ProviderT]:
    """Class decorator: the :class:`Provider` of the models whose ``provider:`` is ``name`` in a
    models file (its class attributes declare its facts, its ``create_client`` builds clients)."""

    def decorator(obj: ProviderT) -> ProviderT:
        if not (isinstance(obj, type) and issubclass(obj, Provider)):
            raise RegistrationError(
                f"provider {name!r}: register_provider takes a Provider subclass, got {obj!r}; a bare client "
                "factory is no longer accepted: subclass Provider and return the client from create_client"
            )
        PROVIDERS.add(name, obj)
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
    "AdapterDefaults",
    "AdapterSpec",
    "BaseClient",
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
    "PlanFacts",
    "PromptFormat",
    "Provider",
    "Reference",
    "RegistrationError",
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
    "arg",
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
