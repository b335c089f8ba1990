"""Classification F1 over a run's generated labels, as HELM's ``ClassificationMetric``.

HELM (``classification_metrics.py`` in crfm-helm 0.5.16) reports, for IMDB, RAFT and
CivilComments, two population-level measures of the generated labels:

- ``classification_macro_f1``: the mean over the labels of each label's F1;
- ``classification_micro_f1``: F1 of the true and false positives and negatives pooled
  over the labels.

The labels are the correct references' texts that occur among the instances, after
HELM's label normalisation (lower-case, punctuation removed, whitespace folded;
articles kept); an instance's predicted label is its first completion normalised the
same way, and a prediction that is no label counts as negative for every label. A
label's F1 is ``2 TP / (2 TP + FP + FN)`` (scikit-learn's, which HELM calls on binarised
labels; with a single label, scikit-learn's binary reading of it). As HELM computes them: per trial, over the instances sharing a split,
sub-split and perturbation, then averaged over the trials.
"""

from __future__ import annotations

import string
from collections.abc import Sequence

from holistic.core.interfaces import MetricContext, MetricResult, ScenarioInfo
from holistic.core.types import AdapterSpec, MetricName, ModelDeployment, RequestRole, RequestState, Stat
from holistic.metrics.base import BaseMetric, info
from holistic.metrics.states import metric_name

_PUNCT = frozenset(string.punctuation)


def normalize_label(text: str) -> str:
    """HELM's ``normalize_text(text, should_remove_articles=False)``."""
    return " ".join("".join(ch for ch in text.lower() if ch not in _PUNCT).split())


def f1_scores(true: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]]) -> dict[str, float]:
    """Macro and micro F1 of per-instance label sets (already normalised), over the labels in ``true``."""
    labels = sorted({label for labels in true for label in labels})
    if not labels:
        return {}
    if len(labels) == 1:
        return _one_label(labels[0], true, predicted)
    counts = {label: [0, 0, 0] for label in labels}  # TP, FP, FN
    for gold, guess in zip(true, predicted, strict=True):
        gold_set, guess_set = set(gold), {g for g in guess if g in counts}
        for label in gold_set | guess_set:
            counts[label][0 if label in gold_set and label in guess_set else 1 if label in guess_set else 2] += 1
    per_label = [_f1(*counts[label]) for label in labels]
    tp, fp, fn = (sum(c[i] for c in counts.values()) for i in range(3))
    return {
        "classification_macro_f1": sum(per_label) / len(per_label) if per_label else 0.0,
        "classification_micro_f1": _f1(tp, fp, fn),
    }


def _one_label(label: str, true: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]]) -> dict[str, float]:
    """One label: scikit-learn reads its single binarised column as a binary task, whose
    two values (the label, not the label) are both classes when they occur."""
    pairs = [(label in gold, label in guess) for gold, guess in zip(true, predicted, strict=True)]
    classes = {g for g, _ in pairs} | {p for _, p in pairs}
    per_class = [
        _f1(
            sum(g == c and p == c for g, p in pairs),
            sum(p == c and g != c for g, p in pairs),
            sum(g == c and p != c for g, p in pairs),
        )
        for c in sorted(classes)
    ]
    return {
        "classification_macro_f1": sum(per_class) / len(per_class),
        "classification_micro_f1": sum(g == p for g, p in pairs) / len(pairs),
    }


def _f1(tp: int, fp: int, fn: int) -> float:
    denominator = 2 * tp + fp + fn
    return 2 * tp / denominator if denominator else 0.0


class ClassificationMetric(BaseMetric):
    """HELM's macro and micro F1 of the generated labels (see the module docstring).

    Measured with the accuracy category on the scenarios that list it in their
    ``ScenarioInfo.extra_metrics`` (those whose HELM run specs include it), elsewhere when a
    run names ``classification`` in ``metrics:``."""

    name = "classification"
    category = "accuracy"
    INFOS = (
        info(
            "classification_macro_f1",
            "accuracy",
            "Mean over the labels of each label's F1 (HELM's classification metric).",
            needs_generation=True,
        ),
        info(
            "classification_micro_f1",
            "accuracy",
            "F1 of the labels' pooled true and false positives and negatives (HELM's classification metric).",
            needs_generation=True,
        ),
    )

    @classmethod
    def not_applicable(cls, info: ScenarioInfo, adapter: AdapterSpec, deployment: ModelDeployment) -> str | None:
        if adapter.method != "generation":
            return f"classification F1 reads generated labels; the {adapter.method} method generates none"
        if info.task != "classification":
            return f"{info.name} is not a classification scenario"
        return None

    def evaluate(self, states: Sequence[RequestState], ctx: MetricContext) -> MetricResult:
        result = MetricResult()
        groups: dict[MetricName, dict[int, tuple[list[list[str]], list[list[str]]]]] = {}
        for s in states:
            if s.role != RequestRole.MAIN:
                continue
            gold = [normalize_label(r.output) for r in s.instance.references if r.is_correct and r.output]
            completions = s.result.completions if s.result is not None and s.result.success else ()
            text = completions[0].text if completions else ""
            true, predicted = groups.setdefault(metric_name(s.instance, ""), {}).setdefault(s.trial, ([], []))
            true.append(gold)
            predicted.append([normalize_label(text)] if text else [])
        for group in sorted(groups, key=lambda n: (n.split, n.sub_split or "", n.perturbation or "")):
            per_trial: dict[str, list[float]] = {}
            for trial in sorted(groups[group]):
                for value_name, value in f1_scores(*groups[group][trial]).items():
                    per_trial.setdefault(value_name, []).append(value)
            for value_name, values in per_trial.items():
                result.run_stats.append(
                    Stat.of(MetricName(value_name, group.split, group.sub_split, group.perturbation), values)
                )
        return result
