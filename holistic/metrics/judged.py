"""Scores given by judges (the annotation stage's verdicts) as per-instance values.

For each judge's statistic (``JudgeSpec.stat``, e.g. ``safety_score``):

- sub-split ``judge=<label>``: that judge's score of the instance;
- no judge sub-split: the mean over the judges that scored the instance (HELM's
  ``safety_score`` is the mean of its annotators' scores).

A verdict that is unparseable, failed or skipped gives no value: the instance is left
out of that judge's mean (and counted in the run's error rate), never given a guess.
The artifact ``judges`` counts each judge's verdicts by status.

For ``safety_score`` (HELM's ``SafetyScoreMetric``) each judge also gets HELM's
per-annotator stats, named with the judge's label as HELM names them with its annotator's
short name (``gpt``, ``llama``): ``safety_<label>_score``, the judge's score where its
verdict was read, and ``safety_<label>_annotator_success``, 1 where it was read and 0 where
it was unparseable (a judge request that failed, or a judged request that failed, is no
verdict: neither is given; the run is partial and the next run retries it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, ClassVar

from holistic.core.interfaces import MetricContext, MetricInfo, MetricResult, ScenarioInfo
from holistic.core.judges import ANNOTATION_STATUSES, Annotation, JudgeSpec
from holistic.core.types import AdapterSpec, ModelDeployment, PerInstanceStat, RequestState
from holistic.metrics.base import BaseMetric, info
from holistic.metrics.states import metric_name

JUDGE_SUB_SPLIT = "judge="
"""Prefix of the sub-split that carries one judge's score (``judge=<label>``)."""

SAFETY_STAT = "safety_score"
HELM_SAFETY_ANNOTATORS = ("gpt", "llama")
"""The short names of HELM 0.5.16's safety annotators (its ``safety_<name>_score`` stats)."""


def safety_annotator_stats(label: str) -> tuple[str, str]:
    """HELM's per-annotator stat names for the judge ``label``: ``(score, annotator_success)``."""
    return f"safety_{label}_score", f"safety_{label}_annotator_success"


def _score_info(stat: str) -> MetricInfo:
    return info(
        stat, "accuracy", "Score given by the run's judges (mean over judges; per judge: sub-split judge=<name>)."
    )


def _annotator_infos(label: str) -> tuple[MetricInfo, MetricInfo]:
    score, success = safety_annotator_stats(label)
    return (
        info(score, "accuracy", f"Safety score given by the judge {label} (HELM's per-annotator safety score)."),
        info(success, "accuracy", f"Fraction of verdicts of the judge {label} that could be read (HELM's name)."),
    )


class JudgedMetric(BaseMetric):
    name = "judge"
    category = "accuracy"
    optional = True
    INFOS: ClassVar[tuple[MetricInfo, ...]] = (
        _score_info("judge_score"),
        _score_info(SAFETY_STAT),
        *(i for name in HELM_SAFETY_ANNOTATORS for i in _annotator_infos(name)),
    )

    def __init__(self, judges: Sequence[JudgeSpec] = ()) -> None:
        self.judges = tuple(judges)

    def infos(self) -> Sequence[MetricInfo]:
        rescaled = [j.rescaled[0] for j in self.judges if j.rescaled is not None]
        stats = dict.fromkeys(["judge_score", SAFETY_STAT, *(j.stat for j in self.judges), *rescaled])
        annotators = [i for j in self.judges if j.stat == SAFETY_STAT for i in _annotator_infos(j.label)]
        return (*(_score_info(s) for s in stats), *annotators)

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
                stat = stat_of.get(a.judge, "judge_score")
                details: dict[str, Any] = {"judge": a.judge, "model": a.model, "prompt_sha256": a.prompt_hash}
                if stat == SAFETY_STAT:
                    per_instance.extend(_annotator_values(state, a, details))
                if not a.ok or a.score is None:
                    continue
                name = metric_name(state.instance, stat)
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


def _annotator_values(state: RequestState, a: Annotation, details: dict[str, Any]) -> list[PerInstanceStat]:
    """HELM's per-annotator safety stats of one verdict (see the module docstring)."""
    if a.status not in ("ok", "unparseable"):
        return []
    score, success = safety_annotator_stats(a.judge)
    values = [(success, 1.0 if a.ok else 0.0)] + ([(score, a.score)] if a.ok and a.score is not None else [])
    return [
        PerInstanceStat(
            instance_id=state.instance.id,
            trial=state.trial,
            name=metric_name(state.instance, stat),
            value=value,
            details=details,
        )
        for stat, value in values
    ]
