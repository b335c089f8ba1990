"""The metric registry: metric classes by name, every value name's facts, and the
choice of metrics for a run.

- :data:`METRICS` maps a metric name to its class (built-ins plus the
  ``holistic.metrics`` entry-point group of third-party packages).
- :func:`metric_info` answers, for any value name a metric produces
  (``exact_match``, ``ece_10_bin``...), its category, direction and needs.
- :func:`select_metrics` turns the categories (and/or metric or value names) a run
  asks for into configured metric instances, and says why each category that
  cannot be measured is not applicable. It is cheap: nothing heavy (torch,
  bert-score, rouge-score) is imported until a metric is evaluated.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from holistic.core.errors import UnknownNameError
from holistic.core.interfaces import METRIC_CATEGORIES, Metric, MetricInfo, ScenarioInfo
from holistic.core.registry import Registry
from holistic.core.types import AdapterSpec, ModelDeployment

METRICS: Registry[type[Metric]] = Registry("metric", group="holistic.metrics")

# Modules that register built-in metrics when imported, in a fixed order.
_BUILTIN_MODULES: tuple[str, ...] = (
    "holistic.metrics.accuracy",
    "holistic.metrics.overlap",
    "holistic.metrics.bertscore",
    "holistic.metrics.summarization",
    "holistic.metrics.calibration",
    "holistic.metrics.efficiency",
    "holistic.metrics.language_modeling",
    "holistic.metrics.ranking",
    "holistic.metrics.robustness",
    "holistic.metrics.group_fairness",
    "holistic.metrics.bias",
    "holistic.metrics.toxicity",
    "holistic.metrics.haystack",
    "holistic.metrics.bbq",
    "holistic.metrics.math_equiv",
    "holistic.metrics.copyright",
    "holistic.metrics.disinformation",
)
# Built-in modules maintained alongside this package; tolerated while absent from a checkout.
_loaded = False
_info_cache: tuple[tuple[str, ...], dict[str, MetricInfo]] | None = None


def load_builtin() -> None:
    """Import every built-in metric module (idempotent)."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    for module in _BUILTIN_MODULES:
        importlib.import_module(module)


def metric_class(name: str) -> type[Metric]:
    load_builtin()
    return METRICS.get(name)


def class_infos(cls: type[Any]) -> tuple[MetricInfo, ...]:
    """The value names a metric class declares (``INFOS``, else an instance's ``infos()``)."""
    declared = getattr(cls, "INFOS", None)
    if declared is not None:
        return tuple(declared)
    return tuple(cls().infos())


def _index() -> dict[str, MetricInfo]:
    global _info_cache
    load_builtin()
    names = tuple(METRICS.names())
    if _info_cache is not None and _info_cache[0] == names:
        return _info_cache[1]
    index: dict[str, MetricInfo] = {}
    for name in names:
        for item in class_infos(METRICS.get(name)):
            known = index.get(item.name)
            if known is not None and known.higher_is_better != item.higher_is_better:
                raise ValueError(
                    f"metric value {item.name!r} is declared both higher- and lower-is-better "
                    f"(by metric {name!r} and another)"
                )
            index.setdefault(item.name, item)
    _info_cache = (names, index)
    return index


def metric_info(value_name: str) -> MetricInfo:
    """Facts about one metric value name (category, direction, what it needs)."""
    index = _index()
    try:
        return index[value_name]
    except KeyError:
        raise UnknownNameError("metric value", value_name, index) from None


def all_infos() -> dict[str, MetricInfo]:
    """Every declared value name -> its :class:`MetricInfo`."""
    return dict(_index())


# ---------------------------------------------------------------------------
# selection
# ---------------------------------------------------------------------------


@dataclass
class Selection:
    """The metrics of one run and the categories that cannot be measured."""

    metrics: list[Metric] = field(default_factory=list)
    not_applicable: dict[str, str] = field(default_factory=dict)
    """Category (or requested metric name) -> why it is not measured."""

    @property
    def measured_categories(self) -> list[str]:
        return sorted({m.category for m in self.metrics})


# Families per category for built-in metrics, in order; a family is used when its class
# says it applies. Families of other categories (robustness, fairness, bias, toxicity,
# third-party) are every registered class of that category, except classes marked
# ``optional = True``: holistic's departures from HELM's definitions, measured only when
# a run names them in ``metrics:``.
_ACCURACY_FAMILIES: tuple[tuple[str, Callable[[ScenarioInfo, AdapterSpec], bool]], ...] = (
    ("multiple_choice_accuracy", lambda info, adapter: True),
    # long_context answers are id lists, scored as sets by the haystack metric, not as strings;
    # a memorization continuation is compared with the rest of a whole passage by the copyright metric;
    # disinformation samples have no right answer (their references are in-context headlines).
    (
        "generation_accuracy",
        lambda info, adapter: info.task not in ("long_context", "memorization", "disinformation"),
    ),
    ("rouge", lambda info, adapter: info.task in ("summarization", "generation")),
    ("bleu", lambda info, adapter: info.task == "generation"),
    ("summarization", lambda info, adapter: info.task == "summarization"),
    ("bertscore", lambda info, adapter: info.task == "summarization"),
    ("language_modeling", lambda info, adapter: True),
    ("ranking", lambda info, adapter: True),
)


def select_metrics(
    categories: Sequence[str], info: ScenarioInfo, adapter: AdapterSpec, deployment: ModelDeployment
) -> Selection:
    """Configured metrics for a run asking for ``categories``.

    Each entry is a category (``accuracy``, ``calibration``...), a registered metric
    name (``bertscore``) or a value name (``rouge_2``: its metric is added). A
    category is not applicable when the scenario says so (its
    ``not_applicable_reasons`` or ``metric_categories``), or when no metric of that
    category fits the adaptation method and the model (e.g. calibration without
    logprobs); the reason is kept for the coverage table.
    """
    load_builtin()
    selection = Selection()
    chosen: dict[str, Metric] = {}
    for entry in categories:
        if entry in METRIC_CATEGORIES or _is_category(entry):
            _select_category(entry, info, adapter, deployment, chosen, selection)
        else:
            _select_named(entry, info, adapter, deployment, chosen, selection)
    selection.metrics = list(chosen.values())
    return selection


def _is_category(entry: str) -> bool:
    return any(getattr(METRICS.get(n), "category", None) == entry for n in METRICS.names())


def _select_category(
    category: str,
    info: ScenarioInfo,
    adapter: AdapterSpec,
    deployment: ModelDeployment,
    chosen: dict[str, Metric],
    selection: Selection,
) -> None:
    if category in info.not_applicable_reasons:
        selection.not_applicable[category] = info.not_applicable_reasons[category]
        return
    if category == "accuracy":
        candidates = [name for name, wanted in _ACCURACY_FAMILIES if name in METRICS and wanted(info, adapter)]
        candidates += _producers(info.main_metric)
    else:
        candidates = [
            n
            for n in METRICS.names()
            if getattr(METRICS.get(n), "category", None) == category and not getattr(METRICS.get(n), "optional", False)
        ]
    reasons: list[str] = []
    added = 0
    for name in dict.fromkeys(candidates):
        cls = METRICS.get(name)
        reason = _reason(cls, info, adapter, deployment)
        if reason is None:
            chosen.setdefault(name, _configure(cls, info, adapter, deployment))
            added += 1
        else:
            reasons.append(reason)
    if added and category not in info.metric_categories:
        # Measurable, but the scenario does not list the category: follow the scenario.
        for name in list(chosen):
            if getattr(chosen[name], "category", None) == category:
                del chosen[name]
        selection.not_applicable[category] = f"{info.name} does not list {category} among its categories"
        return
    if not added:
        if not candidates:
            reasons.append(f"no metric of category {category!r} is registered")
        selection.not_applicable[category] = "; ".join(dict.fromkeys(reasons))


def _producers(value_name: str) -> list[str]:
    """Registered metric names that produce ``value_name``."""
    return [n for n in METRICS.names() if any(i.name == value_name for i in class_infos(METRICS.get(n)))]


def _select_named(
    entry: str,
    info: ScenarioInfo,
    adapter: AdapterSpec,
    deployment: ModelDeployment,
    chosen: dict[str, Metric],
    selection: Selection,
) -> None:
    if entry in METRICS:
        names = [entry]
    else:
        names = _producers(entry)
        if not names:
            known: Iterable[str] = [*METRIC_CATEGORIES, *METRICS.names(), *all_infos()]
            raise UnknownNameError("metric", entry, known)
    reasons = []
    for name in names:
        cls = METRICS.get(name)
        reason = _reason(cls, info, adapter, deployment)
        if reason is None:
            chosen.setdefault(name, _configure(cls, info, adapter, deployment))
            return
        reasons.append(reason)
    selection.not_applicable[entry] = "; ".join(reasons)


def _reason(cls: Any, info: ScenarioInfo, adapter: AdapterSpec, deployment: ModelDeployment) -> str | None:
    check = getattr(cls, "not_applicable", None)
    return check(info, adapter, deployment) if check is not None else None


def _configure(cls: Any, info: ScenarioInfo, adapter: AdapterSpec, deployment: ModelDeployment) -> Metric:
    configure = getattr(cls, "configure", None)
    metric: Metric = configure(info, adapter, deployment) if configure is not None else cls()
    return metric
