"""The names a run spec may use: scenarios, models, metrics, perturbations.

A thin view over the registries of the other packages. The registries are lazy tables
(name -> ``"module:Class"``), so the compiler imports only the extensions a spec
actually names (``--plan`` must stay fast: nothing here imports torch or
transformers). Each lookup raises :class:`~holistic.core.errors.UnknownNameError`
(with "did you mean") for an unknown name; the compiler adds the file, line and
document path.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from holistic.adaptation.validation import validate_adapter_spec
from holistic.core.errors import SpecError, UnknownNameError
from holistic.core.interfaces import METRIC_CATEGORIES, ScenarioInfo
from holistic.core.types import AdapterSpec, ModelDeployment, PerturbationSpec
from holistic.metrics.registry import METRICS, all_infos, class_infos
from holistic.models.registry import ModelRegistry, check_obtainable
from holistic.perturbations.base import BasePerturbation
from holistic.perturbations.defaults import default_perturbations
from holistic.perturbations.registry import PERTURBATIONS, create_perturbation
from holistic.scenarios.base import BaseScenario
from holistic.scenarios.registry import SCENARIOS


class Catalog:
    """Lookups against the registries, with the model registry built from ``models_file``."""

    def __init__(self, models_file: Path | None = None, model_registry: ModelRegistry | None = None) -> None:
        self._models_file = models_file
        self._model_registry = model_registry

    # -- scenarios ---------------------------------------------------------

    def scenario_class(self, name: str) -> type[BaseScenario]:
        """The registered scenario class (raises UnknownNameError)."""
        return SCENARIOS.get(name)

    def scenario_info(self, name: str) -> ScenarioInfo:
        return self.scenario_class(name).info

    # -- models ------------------------------------------------------------

    @property
    def models(self) -> ModelRegistry:
        if self._model_registry is None:
            self._model_registry = ModelRegistry(self._models_file)
        return self._model_registry

    def model(self, name: str) -> ModelDeployment:
        """The deployment for ``name``, checked to be obtainable (a Hub id offline fails here)."""
        deployment = self.models.get(name)
        check_obtainable(deployment)
        return deployment

    # -- metrics -----------------------------------------------------------

    def metric_names(self) -> list[str]:
        """Registered metric names."""
        return METRICS.names()

    def check_metric(self, name: str) -> None:
        """A metric entry is a category, a registered metric, or a metric value name (``rouge_2``)."""
        if name in METRIC_CATEGORIES or name in METRICS:
            return
        values = all_infos()
        if name in values:
            return
        raise UnknownNameError("metric category or metric", name, [*METRIC_CATEGORIES, *METRICS.names(), *values])

    def metric_needs_logprobs(self, name: str) -> bool:
        """Whether the metric (or metric value) ``name`` cannot be computed without token log-probabilities.

        A metric whose every value needs logprobs needs them; a value name needs
        them when its :class:`~holistic.core.interfaces.MetricInfo` says so.
        Categories never do (they are marked not applicable instead).
        """
        if name in METRIC_CATEGORIES:
            return False
        if name in METRICS:
            infos = class_infos(METRICS.get(name))
            return bool(infos) and all(i.needs_logprobs for i in infos)
        info = all_infos().get(name)
        return info is not None and info.needs_logprobs

    def metric_category(self, name: str) -> str | None:
        """The category of a metric, category or metric value name (``None`` if unknown)."""
        if name in METRIC_CATEGORIES:
            return name
        if name in METRICS:
            return METRICS.get(name).category
        info = all_infos().get(name)
        return info.category if info is not None else None

    # -- adaptation --------------------------------------------------------

    def adapter_problem(self, adapter: AdapterSpec) -> SpecError | None:
        """The adaptation package's verdict on a finished AdapterSpec (``None`` = fine).

        Its errors carry ``path="adaptation.<field>"`` and no location; the compiler
        moves them to where the field was written.
        """
        try:
            validate_adapter_spec(adapter)
        except SpecError as exc:
            return exc
        return None

    # -- perturbations -----------------------------------------------------

    def perturbation_names(self) -> list[str]:
        return PERTURBATIONS.names()

    def perturbation_problem(self, spec: PerturbationSpec, *, helm: bool = False) -> SpecError | None:
        """Whether the perturbation (HELM's algorithm with ``helm``) accepts ``spec``'s arguments (``None`` = fine)."""
        try:
            create_perturbation(spec, helm=helm)
        except SpecError as exc:
            return exc
        return None

    def perturbation(self, name: str) -> type[BasePerturbation]:
        """The registered perturbation class; raises UnknownNameError."""
        return PERTURBATIONS.get(name)

    def perturbation_category(self, name: str) -> str | None:
        """``robustness`` or ``fairness`` for a registered perturbation (``None`` if unknown)."""
        if name not in PERTURBATIONS:
            return None
        return PERTURBATIONS.get(name).category

    def default_perturbations(self, categories: Sequence[str]) -> list[PerturbationSpec]:
        """HELM's default perturbation specs for the metric categories of a run."""
        return default_perturbations(list(categories))
