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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from holistic.core.code_execution import EXECUTES_CODE_TAG
from holistic.core.errors import UnknownNameError
from holistic.core.interfaces import METRIC_CATEGORIES, MetricInfo, ScenarioInfo
from holistic.core.registry import Registry
from holistic.core.types import AdapterSpec, ModelDeployment
from holistic.metrics.base import BaseMetric
from holistic.metrics.classification import HELM_SCENARIOS as HELM_CLASSIFICATION_SCENARIOS

BUILTIN_METRICS: dict[str, str] = {
    "bbq_bias": "holistic.metrics.bbq:BBQBiasMetric",
    "bertscore": "holistic.metrics.bertscore:BertScoreMetric",
    "bias": "holistic.metrics.bias:BiasMetric",
    "bleu": "holistic.metrics.overlap:BleuMetric",
    "calibration": "holistic.metrics.calibration:CalibrationMetric",
    "calibration_tie_aware": "holistic.metrics.calibration:TieAwareCalibrationMetric",
    "chain_of_thought": "holistic.metrics.chain_of_thought:ChainOfThoughtCorrectness",
    "classification": "holistic.metrics.classification:ClassificationMetric",
    "code": "holistic.metrics.code:CodeMetric",
    "copyright": "holistic.metrics.copyright:CopyrightMetric",
    "disinformation": "holistic.metrics.disinformation:DisinformationDiversityMetric",
    "efficiency": "holistic.metrics.efficiency:EfficiencyMetric",
    "f1_multiset": "holistic.metrics.accuracy:MultisetF1",
    "fairness": "holistic.metrics.robustness:FairnessMetric",
    "generation_accuracy": "holistic.metrics.accuracy:GenerationAccuracy",
    "group_fairness": "holistic.metrics.group_fairness:GroupFairness",
    "haystack": "holistic.metrics.haystack:HaystackMetric",
    "ifeval": "holistic.metrics.ifeval:IFEvalMetric",
    "judge": "holistic.metrics.judged:JudgedMetric",
    "language_modeling": "holistic.metrics.language_modeling:LanguageModelingMetric",
    "math_equiv": "holistic.metrics.math_equiv:MathEquivalence",
    "multiple_choice_accuracy": "holistic.metrics.accuracy:MultipleChoiceAccuracy",
    "ranking": "holistic.metrics.ranking:RankingMetric",
    "robustness": "holistic.metrics.robustness:RobustnessMetric",
    "rouge": "holistic.metrics.overlap:RougeMetric",
    "summarization": "holistic.metrics.summarization:SummarizationMetric",
    "toxicity": "holistic.metrics.toxicity:ToxicityMetric",
    "worst_case_directional": "holistic.metrics.robustness:DirectionalWorstCase",
}
"""The built-in metrics, declared like plugins' entry points: name -> ``"module:Class"``
(imported on first lookup; nothing heavy is imported until a metric is evaluated)."""

METRICS: Registry[type[BaseMetric]] = Registry(
    "metric", group="holistic.metrics", builtins=BUILTIN_METRICS, base=BaseMetric
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


# Families per category for built-in metrics, in order; a family is used when its class
# says it applies. Families of other categories (robustness, fairness, bias, toxicity,
# third-party) are every registered class of that category, except classes marked
# ``optional = True``: holistic's departures from HELM's definitions, measured only when
# a run names them in ``metrics:``.
HELM_OPEN_ENDED_SCENARIOS = ("narrative_qa",)
"""Question answering whose HELM run spec scores open-ended generation (``rouge_l``, ``bleu_1``,
``bleu_4`` beside the exact-match family and ``f1_score``)."""

_ACCURACY_FAMILIES: tuple[tuple[str, Callable[[ScenarioInfo, AdapterSpec], bool]], ...] = (
    # reasoned multiple choice is scored on the letter its reasoning ends with (chain_of_thought)
    ("multiple_choice_accuracy", lambda info, adapter: "chain_of_thought_mc" not in info.tags),
    # long_context answers are id lists, scored as sets by the haystack metric, not as strings;
    # a memorization continuation is compared with the rest of a whole passage by the copyright metric;
    # disinformation samples have no right answer (their references are in-context headlines);
    # an instruction-following response has no reference (its instructions are checked by program),
    # and a program is right when its tests pass (the code metric runs them in the sandbox), not
    # when it matches the reference solution's text.
    (
        "generation_accuracy",
        lambda info, adapter: (
            info.task not in ("long_context", "memorization", "disinformation", "instruction_following", "code")
        ),
    ),
    ("code", lambda info, adapter: EXECUTES_CODE_TAG in info.tags),
    # HELM's classification F1, on the scenarios whose HELM run specs measure it.
    ("classification", lambda info, adapter: info.name in HELM_CLASSIFICATION_SCENARIOS),
    (
        "rouge",
        lambda info, adapter: info.task in ("summarization", "generation") or info.name in HELM_OPEN_ENDED_SCENARIOS,
    ),
    ("bleu", lambda info, adapter: info.task == "generation" or info.name in HELM_OPEN_ENDED_SCENARIOS),
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
    selection = Selection()
    chosen: dict[str, BaseMetric] = {}
    for entry in categories:
        if entry in METRIC_CATEGORIES or _is_category(entry):
            _select_category(entry, info, adapter, deployment, chosen, selection)
        else:
            _select_named(entry, info, adapter, deployment, chosen, selection)
    selection.metrics = list(chosen.values())
    return selection


def _is_category(entry: str) -> bool:
    return any(METRICS.get(n).category == entry for n in METRICS.names())


def _select_category(
    category: str,
    info: ScenarioInfo,
    adapter: AdapterSpec,
    deployment: ModelDeployment,
    chosen: dict[str, BaseMetric],
    selection: Selection,
) -> None:
    if category in info.not_applicable_reasons:
        selection.not_applicable[category] = info.not_applicable_reasons[category]
        return
    if category == "accuracy":
        candidates = [name for name, wanted in _ACCURACY_FAMILIES if name in METRICS and wanted(info, adapter)]
        candidates += _producers(info.main_metric)
    else:
        candidates = [n for n in METRICS.names() if METRICS.get(n).category == category and not METRICS.get(n).optional]
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
            if chosen[name].category == category:
                del chosen[name]
        selection.not_applicable[category] = f"{info.name} does not list {category} among its categories"
        return
    if not added:
        if not candidates:
            reasons.append(f"no metric of category {category!r} is registered")
        selection.not_applicable[category] = "; ".join(dict.fromkeys(reasons))


def _producers(value_name: str) -> list[str]:
    """Registered metric names that produce ``value_name``."""
    return list(_producers_among(value_name, tuple(METRICS.names())))


@functools.lru_cache(maxsize=256)
def _producers_among(value_name: str, names: tuple[str, ...]) -> tuple[str, ...]:
    # keyed by the registered names too: a plugin registering a metric later is seen
    return tuple(n for n in names if any(i.name == value_name for i in class_infos(METRICS.get(n))))


def _select_named(
    entry: str,
    info: ScenarioInfo,
    adapter: AdapterSpec,
    deployment: ModelDeployment,
    chosen: dict[str, BaseMetric],
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


def _reason(cls: type[BaseMetric], info: ScenarioInfo, adapter: AdapterSpec, deployment: ModelDeployment) -> str | None:
    return cls.not_applicable(info, adapter, deployment)


def _configure(
    cls: type[BaseMetric], info: ScenarioInfo, adapter: AdapterSpec, deployment: ModelDeployment
) -> BaseMetric:
    return cls.configure(info, adapter, deployment)
