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

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from holistic.core.errors import UnknownNameError
from holistic.core.interfaces import METRIC_CATEGORIES, MetricInfo, ScenarioInfo
from holistic.core.registry import Registry
from holistic.core.types import AdapterSpec, ModelDeployment
from holistic.metrics.base import BaseMetric

BUILTIN_METRICS_BY_CATEGORY: dict[str, dict[str, str]] = {
    # In the order a run asking for accuracy measures them (the families of HELM's tasks first).
    "accuracy": {
        "multiple_choice_accuracy": "holistic.metrics.accuracy:MultipleChoiceAccuracy",
        "generation_accuracy": "holistic.metrics.accuracy:GenerationAccuracy",
        "code": "holistic.metrics.code:CodeMetric",
        "classification": "holistic.metrics.classification:ClassificationMetric",
        "rouge": "holistic.metrics.overlap:RougeMetric",
        "bleu": "holistic.metrics.overlap:BleuMetric",
        "summarization": "holistic.metrics.summarization:SummarizationMetric",
        "bertscore": "holistic.metrics.bertscore:BertScoreMetric",
        "language_modeling": "holistic.metrics.language_modeling:LanguageModelingMetric",
        "ranking": "holistic.metrics.ranking:RankingMetric",
        "chain_of_thought": "holistic.metrics.chain_of_thought:ChainOfThoughtCorrectness",
        "copyright": "holistic.metrics.copyright:CopyrightMetric",
        "disinformation": "holistic.metrics.disinformation:DisinformationDiversityMetric",
        "f1_multiset": "holistic.metrics.accuracy:MultisetF1",
        "haystack": "holistic.metrics.haystack:HaystackMetric",
        "ifeval": "holistic.metrics.ifeval:IFEvalMetric",
        "judge": "holistic.metrics.judged:JudgedMetric",
        "math_equiv": "holistic.metrics.math_equiv:MathEquivalence",
        "reasoning": "holistic.metrics.reasoning:ReasoningUnfinished",
    },
    "calibration": {
        "calibration": "holistic.metrics.calibration:CalibrationMetric",
        "calibration_tie_aware": "holistic.metrics.calibration:TieAwareCalibrationMetric",
    },
    "robustness": {
        "robustness": "holistic.metrics.robustness:RobustnessMetric",
        "worst_case_directional": "holistic.metrics.robustness:DirectionalWorstCase",
    },
    "fairness": {
        "fairness": "holistic.metrics.robustness:FairnessMetric",
        "group_fairness": "holistic.metrics.group_fairness:GroupFairness",
    },
    "efficiency": {"efficiency": "holistic.metrics.efficiency:EfficiencyMetric"},
    "bias": {
        "bbq_bias": "holistic.metrics.bbq:BBQBiasMetric",
        "bias": "holistic.metrics.bias:BiasMetric",
    },
    "toxicity": {"toxicity": "holistic.metrics.toxicity:ToxicityMetric"},
}
"""The built-in metrics by category, declared like plugins' entry points: name ->
``"module:Class"`` (imported on first lookup; nothing heavy is imported until a metric is
evaluated). The category is declared here so that choosing a category's metrics imports
only that category's modules; each class says the same in its ``category``."""

BUILTIN_METRICS: dict[str, str] = {
    name: target for table in BUILTIN_METRICS_BY_CATEGORY.values() for name, target in table.items()
}
_BUILTIN_CATEGORY: dict[str, str] = {
    name: category for category, table in BUILTIN_METRICS_BY_CATEGORY.items() for name in table
}

METRICS: Registry[type[BaseMetric]] = Registry.of_extensions(
    "metric", BaseMetric, BUILTIN_METRICS, name_of=lambda cls: getattr(cls, "name", None)
)
_info_cache: tuple[tuple[str, ...], dict[str, MetricInfo]] | None = None


def metric_class(name: str) -> type[BaseMetric]:
    return METRICS.get(name)


def class_infos(cls: type[BaseMetric]) -> tuple[MetricInfo, ...]:
    """The value names a metric class declares (``INFOS``, else an instance's ``infos()``)."""
    if cls.INFOS:
        return tuple(cls.INFOS)
    return tuple(cls().infos())


def _index() -> dict[str, MetricInfo]:
    global _info_cache
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

    metrics: list[BaseMetric] = field(default_factory=list)
    not_applicable: dict[str, str] = field(default_factory=dict)
    """Category (or requested metric name) -> why it is not measured."""

    @property
    def measured_categories(self) -> list[str]:
        return sorted({m.category for m in self.metrics})


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
    selector = _Selector(info, adapter, deployment)
    for entry in categories:
        if entry in METRIC_CATEGORIES or _is_category(entry):
            selector.category(entry)
        else:
            selector.named(entry)
    return Selection(list(selector.chosen.values()), selector.not_applicable)


def metric_category(name: str) -> str:
    """The category of a registered metric; a built-in one not yet imported is not imported."""
    target = METRICS.pending(name)
    if target is not None and target == BUILTIN_METRICS.get(name):
        return _BUILTIN_CATEGORY[name]
    return METRICS.get(name).category


def metrics_of(category: str) -> list[str]:
    """The registered metric names of ``category``: the built-ins in their declared order, then
    the others by name."""
    builtin = BUILTIN_METRICS_BY_CATEGORY.get(category, {})
    names = [n for n in builtin if n in METRICS and metric_category(n) == category]
    return names + [n for n in METRICS.names() if n not in builtin and metric_category(n) == category]


def _is_category(entry: str) -> bool:
    return any(metric_category(n) == entry for n in METRICS.names())


@dataclass
class _Selector:
    """The metrics chosen so far for one scenario, adaptation and model, and why the entries
    that cannot be measured are not."""

    info: ScenarioInfo
    adapter: AdapterSpec
    deployment: ModelDeployment
    chosen: dict[str, BaseMetric] = field(default_factory=dict)
    not_applicable: dict[str, str] = field(default_factory=dict)

    def _choose(self, name: str) -> str | None:
        """Add the metric ``name`` configured for the run, or say why it cannot be measured."""
        cls = METRICS.get(name)
        reason = cls.not_applicable(self.info, self.adapter, self.deployment)
        if reason is None:
            self.chosen.setdefault(name, cls.configure(self.info, self.adapter, self.deployment))
        return reason

    def category(self, category: str) -> None:
        """A category's metrics: those that say they measure it on the scenario
        (``selected_for``), its ``extra_metrics`` and the one producing its ``main_metric``,
        where they apply."""
        info = self.info
        if category in info.not_applicable_reasons:
            self.not_applicable[category] = info.not_applicable_reasons[category]
            return
        names = metrics_of(category)
        candidates = [n for n in names if n in info.extra_metrics or _selected(METRICS.get(n), info, self.adapter)]
        candidates += _producers_among(info.main_metric, tuple(sorted(names)))
        outcomes = [self._choose(name) for name in dict.fromkeys(candidates)]
        reasons = [reason for reason in outcomes if reason is not None]
        added = len(outcomes) - len(reasons)
        if added and category not in info.metric_categories:
            # Measurable, but the scenario does not list the category: follow the scenario.
            for name in list(self.chosen):
                if self.chosen[name].category == category:
                    del self.chosen[name]
            self.not_applicable[category] = f"{info.name} does not list {category} among its categories"
            return
        if not added:
            if not candidates:
                reasons.append(f"no metric of category {category!r} is registered")
            self.not_applicable[category] = "; ".join(dict.fromkeys(reasons))

    def named(self, entry: str) -> None:
        """A metric by its name, or the first that can be measured of those producing a value name."""
        if entry in METRICS:
            names = [entry]
        else:
            names = _producers(entry)
            if not names:
                known: Iterable[str] = [*METRIC_CATEGORIES, *METRICS.names(), *all_infos()]
                raise UnknownNameError("metric", entry, known)
        reasons = []
        for name in names:
            reason = self._choose(name)
            if reason is None:
                return
            reasons.append(reason)
        self.not_applicable[entry] = "; ".join(reasons)


def _selected(cls: type[BaseMetric], info: ScenarioInfo, adapter: AdapterSpec) -> bool:
    return not cls.optional and cls.selected_for(info, adapter)


def _producers(value_name: str) -> list[str]:
    """Registered metric names that produce ``value_name``."""
    return list(_producers_among(value_name, tuple(METRICS.names())))


@functools.lru_cache(maxsize=256)
def _producers_among(value_name: str, names: tuple[str, ...]) -> tuple[str, ...]:
    # keyed by the registered names too: a plugin registering a metric later is seen
    return tuple(n for n in names if any(i.name == value_name for i in class_infos(METRICS.get(n))))
