"""Robustness and fairness as worst cases over perturbed variants, as HELM computes them.

HELM (Liang et al., 2022, appendix C.3; ``compute_worst_case_metrics`` in crfm-helm
0.5.16) scores an instance's robustness as its *worst* value over the original and
every perturbed variant, so a model is robust on an instance only when it does well
on all of them; fairness is the same over the fairness (counterfactual) variants.
:func:`worst_case` does this on per-instance values, for **every** metric value
(accuracy, calibration's ``max_prob``, efficiency...), per trial:

- ``robustness`` / ``fairness``: the minimum over the original and the family's
  variants (an instance without such variants keeps its original value);
- for each perturbation ``P`` of the run: ``P:worst``, the minimum of the original's
  and ``P``'s values, and ``P:original``, the original's value on the instances ``P``
  was applied to (HELM's "before" stats, its ``computed_on=original``).

As in HELM the worst value is always the minimum, even for lower-is-better values
(error rates, calibration error, runtime) — there it rewards getting worse. Holistic's
option ``worst_case_directional`` (name it in ``metrics:``) adds
``robustness_directional`` / ``fairness_directional`` rows that take the maximum for
lower-is-better values instead; HELM's rows are unchanged.

The aggregation in :mod:`holistic.metrics.stats` calls :func:`worst_case`. The metric
classes here (``robustness``, ``fairness``) add what can be read from the request
states alone: how often a variant changes the model's prediction.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from holistic.core.interfaces import MetricContext, MetricInfo, MetricResult, ScenarioInfo
from holistic.core.specs import GENERATION, MULTIPLE_CHOICE_METHODS, RANKING
from holistic.core.types import (
    AdapterSpec,
    Instance,
    MetricName,
    ModelDeployment,
    PerInstanceStat,
    RequestRole,
    RequestState,
)
from holistic.metrics.base import BaseMetric, info
from holistic.metrics.choices import pattern_repr, resolve
from holistic.metrics.states import Unit, first_main, group_units, outputs
from holistic.metrics.text import normalize_quasi

ROBUSTNESS = "robustness"
FAIRNESS = "fairness"
WORST_CASE_FAMILIES = (ROBUSTNESS, FAIRNESS)
DIRECTIONAL_SUFFIX = "_directional"
WORST = "worst"
ORIGINAL = "original"
CONTRAST_SET = "contrast_set"
REQUEST_MIN = "request_min"
"""``PerInstanceStat.details`` key: the smallest of the single requests' values behind a
per-instance mean (separate scoring under ``protocol: helm``), which worst cases take as HELM does."""


def worst_name(perturbation: str) -> str:
    """Perturbation field of the worst case over the original and ``perturbation``."""
    return f"{perturbation}:{WORST}"


def original_name(perturbation: str) -> str:
    """Perturbation field of the originals of the instances ``perturbation`` was applied to."""
    return f"{perturbation}:{ORIGINAL}"


def is_derived(perturbation: str | None) -> bool:
    """The perturbation field names a worst case or a "before" value, not a variant."""
    if perturbation is None:
        return False
    return (
        perturbation in WORST_CASE_FAMILIES
        or perturbation.removesuffix(DIRECTIONAL_SUFFIX) in WORST_CASE_FAMILIES
        or perturbation.endswith((f":{WORST}", f":{ORIGINAL}"))
    )


def _flags(instances: Sequence[Instance]) -> dict[str, tuple[bool, bool]]:
    """Perturbation name -> (counts for robustness, counts for fairness)."""
    out: dict[str, tuple[bool, bool]] = {}
    for inst in instances:
        p = inst.perturbation
        if p is not None:
            old = out.get(p.name, (False, False))
            out[p.name] = (old[0] or p.robustness, old[1] or p.fairness)
    return out


def _lowest(stat: PerInstanceStat) -> float:
    """The value a worst case takes of ``stat``: its single requests' minimum where it keeps one
    (:data:`REQUEST_MIN`), else the value itself."""
    if stat.details and REQUEST_MIN in stat.details:
        return float(stat.details[REQUEST_MIN])
    return stat.value


def worst_case(
    per_instance: Sequence[PerInstanceStat],
    instances: Sequence[Instance],
    higher_is_better: Callable[[str], bool] | None = None,
    *,
    directional: bool = False,
) -> list[PerInstanceStat]:
    """Per (instance, trial, metric value): HELM's worst cases over the original and its variants.

    ``instances`` are the run's instances (originals and variants); they say which
    perturbation names count toward robustness and which toward fairness. Every
    (instance id, trial, name, split, sub-split) gets ``robustness`` and ``fairness``
    rows, and ``P:worst`` / ``P:original`` rows for each perturbation ``P`` it has a
    variant of (see the module docstring). With ``directional`` (and
    ``higher_is_better``), ``robustness_directional`` / ``fairness_directional`` rows
    take the maximum for lower-is-better values. Values already derived and values of
    perturbations not among ``instances`` are ignored. Output is sorted.
    """
    if directional and higher_is_better is None:
        raise ValueError("directional worst cases need higher_is_better")
    flags = _flags(instances)
    groups: dict[tuple[str, int, str, str, str], list[PerInstanceStat]] = {}
    for stat in per_instance:
        pert = stat.name.perturbation
        if pert is not None and (is_derived(pert) or pert not in flags):
            continue
        key = (stat.instance_id, stat.trial, stat.name.name, stat.name.split, stat.name.sub_split or "")
        groups.setdefault(key, []).append(stat)
    out: list[PerInstanceStat] = []

    def emit(key: tuple[str, int, str, str, str], name: MetricName, perturbation: str, value: float) -> None:
        out.append(
            PerInstanceStat(key[0], key[1], MetricName(name.name, name.split, name.sub_split, perturbation), value)
        )

    for key in sorted(groups):
        members = groups[key]
        name = members[0].name
        originals = [s for s in members if s.name.perturbation is None]
        original = [s.value for s in originals]
        lowest = [_lowest(s) for s in originals]
        variants = sorted(
            (s for s in members if s.name.perturbation is not None), key=lambda s: str(s.name.perturbation)
        )
        for index, family in enumerate(WORST_CASE_FAMILIES):
            counted = [s for s in variants if flags[str(s.name.perturbation)][index]]
            values = original + [s.value for s in counted]
            if not values:
                continue
            emit(key, name, family, min(lowest + [_lowest(s) for s in counted]))
            if directional and higher_is_better is not None and not higher_is_better(name.name):
                emit(key, name, family + DIRECTIONAL_SUFFIX, max(values))
            elif directional:
                emit(key, name, family + DIRECTIONAL_SUFFIX, min(values))
        for variant in variants:
            pert = str(variant.name.perturbation)
            emit(key, name, worst_name(pert), min([_lowest(variant), *lowest]))
            if original:
                emit(key, name, original_name(pert), original[0])
    return sorted(
        out,
        key=lambda s: (
            s.instance_id,
            s.trial,
            s.name.name,
            s.name.split,
            s.name.sub_split or "",
            s.name.perturbation or "",
        ),
    )


# ---------------------------------------------------------------------------
# prediction changes (invariance), read from the states
# ---------------------------------------------------------------------------


def _prediction(unit: Unit, method: str, length_normalization: str, pattern: str | None = None) -> str | None:
    """What the model answered, comparable across variants (choice index or normalised text;
    for ranking, every passage's normalised answer in passage order)."""
    if method in MULTIPLE_CHOICE_METHODS:
        picked = resolve(unit, method, length_normalization, answer_pattern=pattern).predicted
        return None if picked is None else f"choice:{picked}"
    if method == RANKING:
        mains = sorted(unit.with_role(RequestRole.MAIN), key=lambda s: s.reference_index or 0)
        return "\x00".join(normalize_quasi(outputs(s)[0]) for s in mains) if mains else None
    state = first_main(unit)
    if state is None:
        return None
    return normalize_quasi(outputs(state)[0])


class _PredictionChange(BaseMetric):
    """Share of variants whose prediction differs from the original's (same trial).

    Only variants whose references equal the original's are compared (then the
    right answer did not move, so a different answer is instability); contrast
    sets and reference-rewriting counterfactuals are left to the worst case.
    """

    value_name: ClassVar[str]
    """The per-variant value; its category is the metric's (``robustness`` or ``fairness``)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.INFOS = _change_info(cls.category, cls.value_name)

    def __init__(
        self, method: str = "generation", length_normalization: str = "none", answer_pattern: str | None = None
    ) -> None:
        self.method = method
        self.length_normalization = length_normalization
        self.answer_pattern = answer_pattern

    @classmethod
    def not_applicable(cls, info: ScenarioInfo, adapter: AdapterSpec, deployment: ModelDeployment) -> str | None:
        if adapter.method not in (GENERATION, RANKING, *MULTIPLE_CHOICE_METHODS):
            return f"{cls.category} perturbations apply to answers, not to the {adapter.method} method"
        return None

    @classmethod
    def configure(cls, info: ScenarioInfo, adapter: AdapterSpec, deployment: ModelDeployment) -> _PredictionChange:
        return cls(adapter.method, adapter.length_normalization, adapter.answer_pattern)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.method!r}, {self.length_normalization!r}{pattern_repr(self.answer_pattern)})"
        )

    def evaluate(self, states: Sequence[RequestState], ctx: MetricContext) -> MetricResult:
        result = MetricResult()
        units = group_units(states)
        originals = {(u.key.instance_id, u.key.trial): u for u in units if u.key.perturbation is None}
        index = WORST_CASE_FAMILIES.index(self.category)
        counts: dict[str, int] = {}
        for unit in units:
            pert = unit.instance.perturbation
            if pert is None or pert.name == CONTRAST_SET or not (pert.robustness, pert.fairness)[index]:
                continue
            original = originals.get((unit.key.instance_id, unit.key.trial))
            if original is None or original.instance.references != unit.instance.references:
                continue
            before = _prediction(original, self.method, self.length_normalization, self.answer_pattern)
            after = _prediction(unit, self.method, self.length_normalization, self.answer_pattern)
            if before is None and after is None:
                continue
            result.per_instance.append(unit.stat(self.value_name, float(before != after)))
            counts[pert.name] = counts.get(pert.name, 0) + 1
        result.artifacts[f"{self.category}_compared_variants"] = dict(sorted(counts.items()))
        return result


def _change_info(family: str, value_name: str) -> tuple[MetricInfo, ...]:
    return (
        info(
            value_name,
            family,
            "Share of perturbed variants (same references as the original) whose answer differs from the "
            "original's; the metric's perturbation field names the perturbation.",
            higher_is_better=False,
            needs_references=False,
        ),
    )


class RobustnessMetric(_PredictionChange):
    """Robustness category: prediction changes under robustness variants.

    The category's headline numbers — every metric's worst case over the original
    and its robustness variants — come from :func:`worst_case` during aggregation.
    """

    name = "robustness"
    category = ROBUSTNESS
    value_name = "prediction_changed"


class FairnessMetric(_PredictionChange):
    """Fairness category: prediction changes under counterfactual (fairness) variants.

    As for robustness, the worst case over fairness variants comes from
    :func:`worst_case`; accuracy gaps between annotated groups come from
    :mod:`holistic.metrics.group_fairness`.
    """

    name = "fairness"
    category = FAIRNESS
    value_name = "counterfactual_prediction_changed"


class DirectionalWorstCase(BaseMetric):
    """Holistic's option: worst cases that respect each value's direction.

    HELM's worst case is always the minimum, which for a lower-is-better value (error
    rate, calibration error, runtime) picks the *best* variant. Naming this metric in
    ``metrics:`` adds ``robustness_directional`` / ``fairness_directional`` rows (the
    maximum for lower-is-better values, the minimum otherwise) beside HELM's rows. It
    scores nothing itself: the aggregation reads its presence.
    """

    name = "worst_case_directional"
    category = ROBUSTNESS
    optional = True
    directional_worst_case = True
    INFOS = ()

    def evaluate(self, states: Sequence[RequestState], ctx: MetricContext) -> MetricResult:
        return MetricResult()


__all__ = ["DirectionalWorstCase", "FairnessMetric", "RobustnessMetric", "worst_case"]
