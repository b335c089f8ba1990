"""Group fairness: the scenario's main metric per annotated group, and the largest gap.

HELM (Liang et al., 2022, §4.6 and C.4) compares accuracy across groups where a
scenario annotates them: CivilComments' identity groups, the speaker's or the
subject's gender, race, religion... Groups come from:

- ``Instance.sub_split`` (attribute ``sub_split``; CivilComments identities), and
- values of these metadata keys: :data:`GROUP_KEYS` — a string (one group) or a
  list of strings (the instance belongs to each; CivilComments' ``identities``).

For each attribute with at least two groups, ``group_score`` (sub-split
``"<attribute>=<group>"``) is the main metric's mean within the group over the
unperturbed instances (all trials), and ``group_gap`` (sub-split ``<attribute>``)
is the largest minus the smallest group mean — 0 means parity, lower is better.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from holistic.core.interfaces import MetricContext, MetricResult, ScenarioInfo
from holistic.core.types import TEST_SPLIT, AdapterSpec, MetricName, ModelDeployment, RequestState, Stat
from holistic.metrics.base import BaseMetric, info
from holistic.metrics.registry import METRICS, class_infos

GROUP_KEYS: tuple[str, ...] = (
    "gender",
    "speaker_gender",
    "subject_gender",
    "race",
    "subject_race",
    "religion",
    "nationality",
    "disability",
    "sexual_orientation",
    "dialect",
    "identities",
)
SUB_SPLIT = "sub_split"


def groups_of(instance: Any) -> list[tuple[str, str]]:
    """The (attribute, group) pairs one instance belongs to."""
    out: list[tuple[str, str]] = []
    if instance.sub_split:
        out.append((SUB_SPLIT, instance.sub_split))
    for key in GROUP_KEYS:
        value = instance.metadata.get(key)
        if isinstance(value, str) and value:
            out.append((key, value))
        elif isinstance(value, (list, tuple)):
            out.extend((key, v) for v in dict.fromkeys(value) if isinstance(v, str) and v)
    return out


def _base_metric(info_: ScenarioInfo, adapter: AdapterSpec, deployment: ModelDeployment) -> BaseMetric | None:
    """The configured metric that produces the scenario's main metric, if any applies."""
    for name in METRICS.names():
        cls = METRICS.get(name)
        if cls.category != "accuracy":
            continue
        if not any(i.name == info_.main_metric for i in class_infos(cls)):
            continue
        if cls.not_applicable(info_, adapter, deployment) is not None:
            continue
        return cls.configure(info_, adapter, deployment)
    return None


class GroupFairness(BaseMetric):
    """Main-metric means per annotated group and the largest gap between groups."""

    name = "group_fairness"
    category = "fairness"
    INFOS = (
        info("group_score", "fairness", "The scenario's main metric averaged within one annotated group."),
        info(
            "group_gap",
            "fairness",
            "Largest difference of the main metric's group means for one attribute (0 = parity).",
            higher_is_better=False,
        ),
    )

    def __init__(self, base: BaseMetric | None = None, main_metric: str = "exact_match") -> None:
        self.base = base
        self.main_metric = main_metric

    @classmethod
    def not_applicable(cls, info: ScenarioInfo, adapter: AdapterSpec, deployment: ModelDeployment) -> str | None:
        if _base_metric(info, adapter, deployment) is None:
            return f"no applicable metric produces the main metric {info.main_metric!r} for group comparison"
        return None

    @classmethod
    def configure(cls, info: ScenarioInfo, adapter: AdapterSpec, deployment: ModelDeployment) -> GroupFairness:
        return cls(_base_metric(info, adapter, deployment), info.main_metric)

    def __repr__(self) -> str:
        return f"GroupFairness({self.base!r}, {self.main_metric!r})"

    def evaluate(self, states: Sequence[RequestState], ctx: MetricContext) -> MetricResult:
        result = MetricResult()
        if self.base is None:
            return result
        originals = [s for s in states if s.instance.perturbation is None]
        groups_by_id = {s.instance.id: groups_of(s.instance) for s in originals}
        values = [
            p
            for p in self.base.evaluate(originals, ctx).per_instance
            if p.name.name == self.main_metric and p.name.perturbation is None
        ]
        result.run_stats = group_stats(values, groups_by_id)
        attributes = sorted({a for pairs in groups_by_id.values() for a, _ in pairs})
        result.artifacts["group_fairness"] = {"base_metric": self.main_metric, "attributes": attributes}
        return result


def group_stats(values: Sequence[Any], groups_by_id: dict[str, list[tuple[str, str]]]) -> list[Stat]:
    """``group_score`` per (split, attribute, group) and ``group_gap`` per (split, attribute)."""
    buckets: dict[tuple[str, str, str], list[float]] = {}
    for v in values:
        for attribute, group in groups_by_id.get(v.instance_id, ()):
            buckets.setdefault((v.name.split or TEST_SPLIT, attribute, group), []).append(v.value)
    out: list[Stat] = []
    by_attribute: dict[tuple[str, str], list[float]] = {}
    for (split, attribute, group), vals in sorted(buckets.items()):
        stat = Stat.of(MetricName("group_score", split, f"{attribute}={group}"), vals)
        out.append(stat)
        assert stat.mean is not None
        by_attribute.setdefault((split, attribute), []).append(stat.mean)
    for (split, attribute), means in sorted(by_attribute.items()):
        if len(means) >= 2:
            out.append(Stat.of(MetricName("group_gap", split, attribute), [max(means) - min(means)]))
    return out
