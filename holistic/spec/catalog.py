"""The names a run spec may use: scenarios, models, metrics, perturbations.

A thin, lazy view over the registries of the other packages, so that the
compiler imports only what a spec actually needs (``--plan`` must stay fast:
nothing here imports torch or transformers). Each lookup raises
:class:`~holistic.core.errors.UnknownNameError` (with "did you mean") for an
unknown name; the compiler adds the file, line and document path.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from types import ModuleType
from typing import Any

from holistic.core.errors import SpecError, UnknownNameError
from holistic.core.interfaces import METRIC_CATEGORIES, ScenarioInfo
from holistic.core.types import AdapterSpec, ModelDeployment, PerturbationSpec
from holistic.models.registry import ModelRegistry

_SCORING_METHODS_FALLBACK = (
    "multiple_choice_separate_original",
    "multiple_choice_separate_calibrated",
    "language_modeling",
    "ranking_binary",
)


def _optional_module(name: str) -> ModuleType | None:
    """Import ``name`` if it exists (parts of holistic may be absent in a partial install)."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and name.startswith(exc.name):
            return None
        raise


class Catalog:
    """Lookups against the registries, with the model registry built from ``models_file``."""

    def __init__(self, models_file: Path | None = None, model_registry: ModelRegistry | None = None) -> None:
        self._models_file = models_file
        self._model_registry = model_registry

    # -- scenarios ---------------------------------------------------------

    @cached_property
    def _scenarios(self) -> ModuleType:
        module = importlib.import_module("holistic.scenarios.registry")
        module.load_builtin()
        return module

    def scenario_class(self, name: str) -> Any:
        """The registered scenario class (raises UnknownNameError)."""
        return self._scenarios.SCENARIOS.get(name)

    def scenario_info(self, name: str) -> ScenarioInfo:
        info: ScenarioInfo = self.scenario_class(name).info
        return info

    def estimate_num_instances(self, name: str, args: Mapping[str, Any]) -> int | None:
        """The scenario's cheap estimate of its eval instances, if it offers one.

        Optional protocol: a scenario class may define a classmethod
        ``estimate_num_instances(args) -> int | None`` that must not load data.
        """
        estimate: Callable[[dict[str, Any]], int | None] | None = getattr(
            self.scenario_class(name), "estimate_num_instances", None
        )
        if estimate is None:
            return None
        value = estimate(dict(args))
        return None if value is None else int(value)

    # -- models ------------------------------------------------------------

    @property
    def models(self) -> ModelRegistry:
        if self._model_registry is None:
            self._model_registry = ModelRegistry(self._models_file)
        return self._model_registry

    def model(self, name: str) -> ModelDeployment:
        """The deployment for ``name``, checked to be obtainable (a Hub id offline fails here)."""
        from holistic.models.registry import check_obtainable

        deployment = self.models.get(name)
        check_obtainable(deployment)
        return deployment

    # -- metrics -----------------------------------------------------------

    @cached_property
    def _metrics(self) -> ModuleType | None:
        return _optional_module("holistic.metrics.registry")

    def _metrics_loaded(self) -> ModuleType | None:
        module = self._metrics
        if module is None or not hasattr(module, "METRICS"):
            return None
        load = getattr(module, "load_builtin", None)
        if load is not None:
            load()
        return module

    def metric_names(self) -> list[str]:
        """Registered metric names (empty when the metrics registry is not installed)."""
        module = self._metrics_loaded()
        names: list[str] = module.METRICS.names() if module is not None else []
        return names

    def _value_infos(self) -> dict[str, Any]:
        module = self._metrics_loaded()
        fn = getattr(module, "all_infos", None) if module is not None else None
        return dict(fn()) if fn is not None else {}

    def check_metric(self, name: str) -> None:
        """A metric entry is a category, a registered metric, or a metric value name (``rouge_2``)."""
        if name in METRIC_CATEGORIES:
            return
        names = self.metric_names()
        if name in names:
            return
        values = self._value_infos()
        if name in values:
            return
        raise UnknownNameError("metric category or metric", name, [*METRIC_CATEGORIES, *names, *values])

    def metric_needs_logprobs(self, name: str) -> bool:
        """Whether the metric (or metric value) ``name`` cannot be computed without token log-probabilities.

        A metric whose every value needs logprobs needs them; a value name needs
        them when its :class:`~holistic.core.interfaces.MetricInfo` says so.
        Categories never do (they are marked not applicable instead).
        """
        if name in METRIC_CATEGORIES:
            return False
        module = self._metrics_loaded()
        if module is None:
            return False
        if name in module.METRICS:
            infos = list(module.class_infos(module.METRICS.get(name))) if hasattr(module, "class_infos") else []
            return bool(infos) and all(getattr(i, "needs_logprobs", False) for i in infos)
        info = self._value_infos().get(name)
        return bool(getattr(info, "needs_logprobs", False))

    def metric_category(self, name: str) -> str | None:
        """The category of a registered metric (``None`` if unknown)."""
        if name in METRIC_CATEGORIES:
            return name
        module = self._metrics_loaded()
        if module is not None and name in self.metric_names():
            category = getattr(module.METRICS.get(name), "category", None)
            return category if isinstance(category, str) else None
        info = self._value_infos().get(name)
        value_category = getattr(info, "category", None)
        return value_category if isinstance(value_category, str) else None

    def select_metrics(self) -> Callable[..., Any] | None:
        """``holistic.metrics.registry.select_metrics`` if it is available."""
        module = self._metrics_loaded()
        if module is None:
            return None
        fn: Callable[..., Any] | None = getattr(module, "select_metrics", None)
        return fn

    # -- adaptation --------------------------------------------------------

    def adapter_problem(self, adapter: AdapterSpec) -> SpecError | None:
        """The adaptation package's verdict on a finished AdapterSpec (``None`` = fine).

        Its errors carry ``path="adaptation.<field>"`` and no location; the compiler
        moves them to where the field was written.
        """
        module = _optional_module("holistic.adaptation.validation")
        check = getattr(module, "validate_adapter_spec", None) if module is not None else None
        if check is None:
            return None
        try:
            check(adapter)
        except SpecError as exc:
            return exc
        return None

    def scoring_methods(self) -> tuple[str, ...]:
        """Methods whose requests are log-likelihood scores (need prompt logprobs)."""
        module = _optional_module("holistic.adaptation.validation")
        methods = getattr(module, "SCORING_METHODS", None) if module is not None else None
        return tuple(methods) if methods else _SCORING_METHODS_FALLBACK

    # -- perturbations -----------------------------------------------------

    @cached_property
    def _perturbations(self) -> ModuleType | None:
        return _optional_module("holistic.perturbations.registry")

    def perturbation_names(self) -> list[str]:
        if self._perturbations is None or not hasattr(self._perturbations, "PERTURBATIONS"):
            return []
        names: list[str] = self._perturbations.PERTURBATIONS.names()
        return names

    def perturbation_problem(self, spec: PerturbationSpec) -> SpecError | None:
        """Whether the perturbation package accepts ``spec``'s arguments (``None`` = fine)."""
        package = _optional_module("holistic.perturbations.registry")
        create = getattr(package, "create_perturbation", None) if package is not None else None
        if create is None:
            return None
        try:
            create(spec)
        except SpecError as exc:
            return exc
        return None

    def perturbation(self, name: str) -> Any:
        """The registered perturbation (class or factory); raises UnknownNameError."""
        if self._perturbations is None or not hasattr(self._perturbations, "PERTURBATIONS"):
            raise UnknownNameError("perturbation", name, [])
        return self._perturbations.PERTURBATIONS.get(name)

    def perturbation_category(self, name: str) -> str | None:
        """``robustness`` or ``fairness`` for a registered perturbation (``None`` if unknown)."""
        try:
            registered = self.perturbation(name)
        except UnknownNameError:
            return None
        category = getattr(registered, "category", None)
        return category if isinstance(category, str) else None

    def default_perturbations(self, categories: Sequence[str]) -> list[PerturbationSpec] | None:
        """``holistic.perturbations.default_perturbations(categories)``, or ``None`` if unavailable."""
        package = _optional_module("holistic.perturbations")
        fn = getattr(package, "default_perturbations", None) if package is not None else None
        if fn is None:
            return None
        return list(fn(list(categories)))
