"""Robustness and fairness as worst cases over perturbed variants.

HELM (Liang et al., 2022, appendix C.3) scores an instance's robustness as its
*worst* value over the original and every perturbed variant, so a model is
robust on an instance only when it does well on all of them; fairness is the
same over the fairness (counterfactual) variants. The worst value is the
minimum for higher-is-better metrics and the **maximum** for lower-is-better
ones (error rates, calibration error, bits per byte) — HELM's own code always
takes the minimum, which rewards a lower-is-better metric for getting worse.

:func:`worst_case` does this on per-instance values; the aggregation in
:mod:`holistic.metrics.stats` calls it. The metric classes here
(``robustness``, ``fairness``) add what can be read from the request states
alone: how often a variant changes the model's prediction.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from holistic.core.interfaces import MetricContext, MetricResult, ScenarioInfo
from holistic.core.types import AdapterSpec, Instance, MetricName, ModelDeployment, PerInstanceStat, RequestState
from holistic.metrics.base import BaseMetric, info
from holistic.metrics.choices import MULTIPLE_CHOICE_METHODS, resolve
from holistic.metrics.registry import METRICS
from holistic.metrics.states import Unit, first_main, group_units, outputs
from holistic.metrics.text import normalize_quasi

ROBUSTNESS = "robustness"
FAIRNESS = "fairness"
WORST_CASE_FAMILIES = (ROBUSTNESS, FAIRNESS)
CONTRAST_SET = "contrast_set"


def _flags(instances: Sequence[Instance]) -> dict[str, tuple[bool, bool]]:
    """Perturbation name -> (counts for robustness, counts for fairness)."""
    out: dict[str, tuple[bool, bool]] = {}
    for inst in instances:
        p = inst.perturbation
        if p is not None:
            old = out.get(p.name, (False, False))
            out[p.name] = (old[0] or p.robustness, old[1] or p.fairness)
    return out


def worst_case(
    per_instance: Sequence[PerInstanceStat],
    instances: Sequence[Instance],
    higher_is_better: Callable[[str], bool],
) -> list[PerInstanceStat]:
    """Per (instance, trial, metric): the worst value over the original and its variants.

    ``instances`` are the run's instances (originals and variants); they say which
    perturbation names count toward robustness and which toward fairness. For each
    family present in the run (some variant carries its flag), every
    (instance id, trial, metric name, split, sub-split) gets one stat named with
    ``perturbation="robustness"`` / ``"fairness"``: the minimum of the original's and
    the family's variants' values when ``higher_is_better(name)``, else the maximum.
    An instance that has no variant of the family (a contrast set it lacks) keeps its
    original value; one whose original has no value (a value defined only on variants,
    such as ``prediction_changed``) gets no worst case. Values already named ``robustness``/``fairness`` and values of
    perturbations not among ``instances`` are ignored. Output is sorted.
    """
    flags = _flags(instances)
    present = [fam for i, fam in enumerate(WORST_CASE_FAMILIES) if any(f[i] for f in flags.values())]
    if not present:
        return []
    groups: dict[tuple[str, int, str, str, str], list[PerInstanceStat]] = {}
    for stat in per_instance:
        pert = stat.name.perturbation
        if pert in WORST_CASE_FAMILIES or (pert is not None and pert not in flags):
            continue
        key = (stat.instance_id, stat.trial, stat.name.name, stat.name.split, stat.name.sub_split or "")
        groups.setdefault(key, []).append(stat)
    out: list[PerInstanceStat] = []
    directions: dict[str, bool] = {}
    for key in sorted(groups):
        members = groups[key]
        if not any(s.name.perturbation is None for s in members):
            continue
        name = members[0].name
        if name.name not in directions:
            directions[name.name] = bool(higher_is_better(name.name))
        pick = min if directions[name.name] else max
        for family in present:
            index = WORST_CASE_FAMILIES.index(family)
            values = [s.value for s in members if s.name.perturbation is None or flags[s.name.perturbation][index]]
            if not values:
                continue
            out.append(
                PerInstanceStat(
                    instance_id=key[0],
                    trial=key[1],
                    name=MetricName(name.name, name.split, name.sub_split, family),
                    value=pick(values),
                )
            )
    return out


# ---------------------------------------------------------------------------
# prediction changes (invariance), read from the states
# ---------------------------------------------------------------------------


def _prediction(unit: Unit, method: str, length_normalization: str) -> str | None:
    """What the model answered, comparable across variants (choice index or normalised text)."""
    if method in MULTIPLE_CHOICE_METHODS:
        picked = resolve(unit, method, length_normalization).predicted
        return None if picked is None else f"choice:{picked}"
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

    family: ClassVar[str]
    value_name: ClassVar[str]

    def __init__(self, method: str = "generation", length_normalization: str = "none") -> None:
        self.method = method
        self.length_normalization = length_normalization

    @classmethod
    def not_applicable(cls, info: ScenarioInfo, adapter: AdapterSpec, deployment: ModelDeployment) -> str | None:
        if adapter.method not in ("generation", *MULTIPLE_CHOICE_METHODS):
            return f"{cls.family} perturbations apply to answers, not to the {adapter.method} method"
        return None

    @classmethod
    def configure(cls, info: ScenarioInfo, adapter: AdapterSpec, deployment: ModelDeployment) -> _PredictionChange:
        return cls(adapter.method, adapter.length_normalization)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.method!r}, {self.length_normalization!r})"

    def evaluate(self, states: Sequence[RequestState], ctx: MetricContext) -> MetricResult:
        result = MetricResult()
        units = group_units(states)
        originals = {(u.key.instance_id, u.key.trial): u for u in units if u.key.perturbation is None}
        index = WORST_CASE_FAMILIES.index(self.family)
        counts: dict[str, int] = {}
        for unit in units:
            pert = unit.instance.perturbation
            if pert is None or pert.name == CONTRAST_SET or not (pert.robustness, pert.fairness)[index]:
                continue
            original = originals.get((unit.key.instance_id, unit.key.trial))
            if original is None or original.instance.references != unit.instance.references:
                continue
            before = _prediction(original, self.method, self.length_normalization)
            after = _prediction(unit, self.method, self.length_normalization)
            if before is None and after is None:
                continue
            result.per_instance.append(unit.stat(self.value_name, float(before != after)))
            counts[pert.name] = counts.get(pert.name, 0) + 1
        result.artifacts[f"{self.family}_compared_variants"] = dict(sorted(counts.items()))
        return result


def _change_info(family: str, value_name: str) -> tuple:
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


@METRICS.register("robustness")
class RobustnessMetric(_PredictionChange):
    """Robustness category: prediction changes under robustness variants.

    The category's headline numbers — every metric's worst case over the original
    and its robustness variants — come from :func:`worst_case` during aggregation.
    """

    name = "robustness"
    category = ROBUSTNESS
    family = ROBUSTNESS
    value_name = "prediction_changed"
    INFOS = _change_info(ROBUSTNESS, value_name)


@METRICS.register("fairness")
class FairnessMetric(_PredictionChange):
    """Fairness category: prediction changes under counterfactual (fairness) variants.

    As for robustness, the worst case over fairness variants comes from
    :func:`worst_case`; accuracy gaps between annotated groups come from
    :mod:`holistic.metrics.group_fairness`.
    """

    name = "fairness"
    category = FAIRNESS
    family = FAIRNESS
    value_name = "counterfactual_prediction_changed"
    INFOS = _change_info(FAIRNESS, value_name)


__all__ = ["FairnessMetric", "RobustnessMetric", "worst_case"]
