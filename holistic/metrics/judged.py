"""Scores given by judges (the annotation stage's verdicts) as per-instance values.

For each judge's statistic (``JudgeSpec.stat``, e.g. ``safety_score``):

- sub-split ``judge=<label>``: that judge's score of the instance;
- no judge sub-split: the mean over the judges that scored the instance (HELM's
  ``safety_score`` is the mean of its annotators' scores).

A verdict that is unparseable, failed or skipped gives no value: the instance is left
out of that judge's mean (and counted in the run's error rate), never given a guess.
The artifact ``judges`` counts each judge's verdicts by status.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, ClassVar

from holistic.core.interfaces import MetricContext, MetricInfo, MetricResult, ScenarioInfo
from holistic.core.judges import ANNOTATION_STATUSES, JudgeSpec
from holistic.core.types import AdapterSpec, ModelDeployment, PerInstanceStat, RequestState
from holistic.metrics.base import BaseMetric, info
from holistic.metrics.states import metric_name

JUDGE_SUB_SPLIT = "judge="
"""Prefix of the sub-split that carries one judge's score (``judge=<label>``)."""


def _score_info(stat: str) -> MetricInfo:
    return info(
        stat, "accuracy", "Score given by the run's judges (mean over judges; per judge: sub-split judge=<name>)."
    )


class JudgedMetric(BaseMetric):
    name = "judge"
    category = "accuracy"
    optional = True
    INFOS: ClassVar[tuple[MetricInfo, ...]] = (_score_info("judge_score"), _score_info("safety_score"))

    def __init__(self, judges: Sequence[JudgeSpec] = ()) -> None:
        self.judges = tuple(judges)

    def infos(self) -> Sequence[MetricInfo]:
        rescaled = [j.rescaled[0] for j in self.judges if j.rescaled is not None]
        stats = dict.fromkeys(["judge_score", "safety_score", *(j.stat for j in self.judges), *rescaled])
        return tuple(_score_info(s) for s in stats)

    @classmethod
    def not_applicable(cls, info: ScenarioInfo, adapter: AdapterSpec, deployment: ModelDeployment) -> str | None:
        return "measured only for runs that name judges (judges: in the run spec)"

    def evaluate(self, states: Sequence[RequestState], ctx: MetricContext) -> MetricResult:
        stat_of = {j.label: j.stat for j in self.judges}
        rescale_of: dict[str, tuple[str, float, float]] = {
            j.stat: j.rescaled for j in self.judges if j.rescaled is not None
        }
        counts: dict[str, dict[str, int]] = {j.label: dict.fromkeys(ANNOTATION_STATUSES, 0) for j in self.judges}
        per_instance: list[PerInstanceStat] = []
        for state in states:
            by_stat: dict[str, list[float]] = {}
            for a in state.annotations:
                counts.setdefault(a.judge, dict.fromkeys(ANNOTATION_STATUSES, 0))[a.status] += 1
                if not a.ok or a.score is None:
                    continue
                stat = stat_of.get(a.judge, "judge_score")
                name = metric_name(state.instance, stat)
                details: dict[str, Any] = {"judge": a.judge, "model": a.model, "prompt_sha256": a.prompt_hash}
                per_instance.append(
                    PerInstanceStat(
                        instance_id=state.instance.id,
                        trial=state.trial,
                        name=replace(name, sub_split=f"{JUDGE_SUB_SPLIT}{a.judge}"),
                        value=a.score,
                        details=details,
                    )
                )
                by_stat.setdefault(stat, []).append(a.score)
            for stat, scores in by_stat.items():
                mean = sum(scores) / len(scores)
                values = [(stat, mean)]
                if stat in rescale_of:
                    target, low, high = rescale_of[stat]
                    values.append((target, (mean - low) / (high - low)))
                per_instance.extend(
                    PerInstanceStat(
                        instance_id=state.instance.id,
                        trial=state.trial,
                        name=metric_name(state.instance, name),
                        value=value,
                        details={"judges": len(scores)},
                    )
                    for name, value in values
                )
        return MetricResult(per_instance=per_instance, artifacts={"judges": counts})
