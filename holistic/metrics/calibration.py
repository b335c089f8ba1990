"""Calibration and selective classification of a run (HELM §4.4), as HELM computes it.

Each scored unit contributes a (confidence, correct) pair, as in crfm-helm 0.5.16:

- generation and joint multiple choice: ``max_prob`` is the probability of the
  whole first completion, ``exp(sum of its token logprobs)`` (for joint multiple
  choice, the letter the model wrote); correct means ``exact_match`` (for joint
  multiple choice, the picked choice is a correct one). An answer that names no
  choice stays in, as a wrong answer with its probability;
- separate-choice methods: the softmax of the choice scores at the pick (see
  :mod:`holistic.metrics.choices`). HELM reports only ``max_prob`` there; holistic
  also computes the run values below.

Per instance: ``max_prob``. Per run, for every group of units sharing a split,
sub-split and perturbation, and each trial separately (the run stat's count is the
number of trials, its mean their mean), HELM's values under HELM's names
(arithmetic in :func:`holistic.metrics.calibration_math.helm_calibration_stats`):
``ece_10_bin`` (equal-mass bins cut with ``np.array_split``), ``ece_1_bin``,
``selective_cov_acc_area``, ``selective_acc@10`` (running accuracy at index
``int(0.1 N)``), ``platt_ece_10_bin``, ``platt_ece_1_bin``, ``platt_coef`` and
``platt_intercept`` (scikit-learn logistic regression, ``C=1e10``; when every answer
is right or every one wrong, the Platt ECEs are 0 and there are no coefficients). A
group whose completions all have logprob 0 (a model that returns no real logprobs)
gets no run values, as in HELM. When sub-splits exist, an overall group
(``sub_split=None``) is added. The reliability diagram of each group and trial and
the Platt parameters go to the artifacts under ``calibration``.

Holistic's tie-aware definitions (:mod:`holistic.metrics.calibration_math`) are an
option: name ``calibration_tie_aware`` in ``metrics:`` to add ``ece_10_bin_tie_aware``,
``selective_acc@10_tie_aware``, ``selective_cov_acc_area_tie_aware`` and
``platt_ece_10_bin_tie_aware``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from holistic.core.hashing import stable_seed
from holistic.core.interfaces import MetricContext, MetricInfo, MetricResult, ScenarioInfo
from holistic.core.specs import CALIBRATED, JOINT, MULTIPLE_CHOICE_METHODS, SEPARATE
from holistic.core.types import AdapterSpec, MetricName, ModelDeployment, RequestState, Stat
from holistic.metrics.accuracy import BINARY_SCORERS, best_over_references
from holistic.metrics.base import BaseMetric, infos
from holistic.metrics.calibration_math import (
    coverage_accuracy_area,
    expected_calibration_error,
    fit_platt,
    helm_calibration_stats,
    helm_ece,
    helm_ece_equal_width,
    helm_fit_platt,
    helm_selective_stats,
    reliability_bins,
    selective_accuracy,
)
from holistic.metrics.choices import pattern_repr, resolve
from holistic.metrics.states import Unit, first_main, group_units, metric_name, outputs, reference_texts, succeeded

Pair = tuple[float, float]
SEPARATE_METHODS = (SEPARATE, CALIBRATED)


def _no_logprobs_reason(adapter: AdapterSpec, deployment: ModelDeployment) -> str | None:
    scoring = adapter.method in ("multiple_choice_separate_original", "multiple_choice_separate_calibrated")
    has = deployment.capabilities.prompt_logprobs if scoring else deployment.capabilities.logprobs
    if not has:
        return f"model {deployment.name} returns no logprobs"
    return None


_HELM_INFOS: tuple[MetricInfo, ...] = (
    infos(
        "calibration",
        {
            "max_prob": "The model's probability for its own answer (its confidence).",
        },
        needs_logprobs=True,
    )
    + infos(
        "calibration",
        {
            "ece_10_bin": "Expected calibration error, 10 equal-mass bins (as HELM).",
            "ece_1_bin": "Expected calibration error with one bin: |mean confidence - accuracy|.",
            "platt_ece_10_bin": "ECE (10 equal-mass bins) after Platt scaling fitted on the run.",
            "platt_ece_1_bin": "1-bin ECE after Platt scaling fitted on the run.",
        },
        higher_is_better=False,
        needs_logprobs=True,
    )
    + infos(
        "calibration",
        {
            "platt_coef": "Slope of the Platt scaling fitted on the run (on the logit of max_prob).",
            "platt_intercept": "Intercept of the Platt scaling fitted on the run.",
            "selective_acc@10": "Accuracy on the 10% most confident instances (as HELM).",
            "selective_cov_acc_area": "Area under the coverage-accuracy curve (as HELM).",
        },
        needs_logprobs=True,
    )
)


class CalibrationMetric(BaseMetric):
    """ECE (10 bins, 1 bin, Platt-scaled), selective accuracy and coverage-accuracy area, as HELM."""

    name = "calibration"
    category = "calibration"
    INFOS = _HELM_INFOS

    def __init__(
        self,
        method: str = "multiple_choice_joint",
        length_normalization: str = "none",
        correctness: str = "exact_match",
        answer_parsing: str = "helm",
        answer_pattern: str | None = None,
    ) -> None:
        if correctness not in BINARY_SCORERS:
            raise ValueError(f"correctness must be one of {', '.join(BINARY_SCORERS)}; got {correctness!r}")
        self.method = method
        self.length_normalization = length_normalization
        self.answer_parsing = answer_parsing
        self.correctness = correctness
        self.answer_pattern = answer_pattern

    @classmethod
    def not_applicable(cls, info: ScenarioInfo, adapter: AdapterSpec, deployment: ModelDeployment) -> str | None:
        if adapter.method in ("language_modeling", "ranking_binary"):
            return f"no answer to be confident about with the {adapter.method} method"
        if adapter.method == "generation" and "calibration" not in info.metric_categories:
            return "generation task without choices"
        return _no_logprobs_reason(adapter, deployment)

    @classmethod
    def configure(cls, info: ScenarioInfo, adapter: AdapterSpec, deployment: ModelDeployment) -> CalibrationMetric:
        return cls(
            adapter.method, adapter.length_normalization, "exact_match", adapter.answer_parsing, adapter.answer_pattern
        )

    def __repr__(self) -> str:
        pattern = pattern_repr(self.answer_pattern)
        return f"{type(self).__name__}({self.method!r}, {self.length_normalization!r}, {self.correctness!r}{pattern})"

    def run_values(self, conf: list[float], hits: list[float]) -> dict[str, float]:
        """The run-level values of one group and trial."""
        return helm_calibration_stats(conf, hits)

    def evaluate(self, states: Sequence[RequestState], ctx: MetricContext) -> MetricResult:
        result = MetricResult()
        pairs: dict[MetricName, dict[int, list[Pair]]] = {}
        real_logprobs: set[MetricName] = set()
        for unit in group_units(states):
            pair = self._pair(unit)
            if pair is None:
                continue
            result.per_instance.append(unit.stat("max_prob", pair[0]))
            base = metric_name(unit.instance, "")
            groups = [base] if base.sub_split is None else [base, replace(base, sub_split=None)]
            for group in groups:
                pairs.setdefault(group, {}).setdefault(unit.key.trial, []).append(pair)
                if pair[0] < 1.0 or self.method in SEPARATE_METHODS:
                    real_logprobs.add(group)
        diagrams = []
        for group in sorted(pairs, key=_group_sort):
            if group not in real_logprobs:
                continue
            by_trial = pairs[group]
            values: dict[str, list[float]] = {}
            for trial in sorted(by_trial):
                conf = [c for c, _ in by_trial[trial]]
                hits = [h for _, h in by_trial[trial]]
                for stat_name, value in self.run_values(conf, hits).items():
                    values.setdefault(stat_name, []).append(value)
                platt = helm_fit_platt(conf, [float(int(h)) for h in hits])
                diagrams.append(
                    {
                        "split": group.split,
                        "sub_split": group.sub_split,
                        "perturbation": group.perturbation,
                        "trial": trial,
                        "bins": [
                            {"confidence": b.confidence, "accuracy": b.accuracy, "count": b.count}
                            for b in reliability_bins(conf, hits, 10)
                        ],
                        "platt": None if platt is None else {"slope": platt.coef, "intercept": platt.intercept},
                    }
                )
            intervals = _bootstrap_intervals(
                by_trial, stable_seed(ctx.seed, "calibration", repr(group)), self._interval_values()
            )
            for stat_name, trial_values in values.items():
                stat = Stat.of(replace(group, name=stat_name), trial_values)
                low, high = intervals.get(stat_name, (None, None))
                result.run_stats.append(replace(stat, ci_low=low, ci_high=high))
        result.artifacts[self.name] = {
            "method": self.method,
            "correctness": self.correctness
            if self.method not in MULTIPLE_CHOICE_METHODS
            else "picked choice is correct",
            "reliability": diagrams,
        }
        return result

    def _interval_values(self) -> dict[str, Callable[[list[float], list[float]], float]]:
        return _HELM_INTERVAL_VALUES

    def _pair(self, unit: Unit) -> Pair | None:
        if self.method in SEPARATE_METHODS:
            outcome = resolve(unit, self.method, self.length_normalization, self.answer_parsing, self.answer_pattern)
            if outcome.confidence is None:
                return None
            return outcome.confidence, float(outcome.correct)
        state = first_main(unit)
        if state is None or not succeeded(state):
            return None
        assert state.result is not None
        if not state.result.has_logprobs or not state.result.completions:
            return None
        completion = state.result.completions[0]
        logprob = sum(t.logprob for t in completion.tokens) if completion.tokens else completion.logprob
        if self.method == JOINT:
            outcome = resolve(unit, self.method, self.length_normalization, self.answer_parsing, self.answer_pattern)
            correct = float(outcome.correct)
        else:
            references = reference_texts(unit.instance)
            if not references:
                return None
            correct = best_over_references(BINARY_SCORERS[self.correctness], outputs(state)[0], references)
        return min(math.exp(logprob), 1.0), correct


class TieAwareCalibrationMetric(CalibrationMetric):
    """Holistic's option: calibration values that do not depend on the order of tied confidences.

    ECE bins never split a group of equal confidences, selective accuracy counts a tie
    cut by the coverage with the tie's mean correctness and takes ``ceil(0.1 N)``
    instances, and Platt scaling has a small ridge towards the identity so it stays
    finite when every answer is right (see :mod:`holistic.metrics.calibration_math`).
    The values carry a ``_tie_aware`` suffix, never HELM's names.
    """

    name = "calibration_tie_aware"
    optional = True
    INFOS = infos(
        "calibration",
        {
            "ece_10_bin_tie_aware": "ECE, 10 equal-mass bins that never split tied confidences.",
            "platt_ece_10_bin_tie_aware": "Tie-aware ECE after ridge-regularised Platt scaling.",
        },
        higher_is_better=False,
        needs_logprobs=True,
    ) + infos(
        "calibration",
        {
            "selective_acc@10_tie_aware": "Accuracy on the ceil(10%) most confident instances, ties averaged.",
            "selective_cov_acc_area_tie_aware": "Area under the coverage-accuracy curve, ties averaged.",
        },
        needs_logprobs=True,
    )

    def run_values(self, conf: list[float], hits: list[float]) -> dict[str, float]:
        values = {name: compute(conf, hits) for name, compute in _TIE_AWARE_VALUES.items()}
        values["platt_ece_10_bin_tie_aware"] = expected_calibration_error(fit_platt(conf, hits)(conf), hits, 10)
        return values

    def evaluate(self, states: Sequence[RequestState], ctx: MetricContext) -> MetricResult:
        result = super().evaluate(states, ctx)
        result.per_instance = []  # max_prob comes from the calibration metric
        return result

    def _interval_values(self) -> dict[str, Callable[[list[float], list[float]], float]]:
        return _TIE_AWARE_VALUES


def _group_sort(name: MetricName) -> tuple[str, str, str]:
    return (name.split, name.sub_split or "", name.perturbation or "")


BOOTSTRAP_RESAMPLES = 200
"""Resamples for the intervals of the run-level calibration values (each one recomputes them)."""


def _bootstrap_intervals(
    by_trial: dict[int, list[Pair]],
    seed: int,
    computations: dict[str, Callable[[list[float], list[float]], float]],
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> dict[str, tuple[float, float]]:
    """95% intervals of the run-level values (mean over trials) by resampling instances.

    Each resample draws the instances of every trial with replacement and recomputes
    ECE, selective accuracy and the coverage-accuracy area. Platt-scaled values are left
    without an interval: refitting the scaling per resample costs far more than it tells.
    """
    if sum(len(p) for p in by_trial.values()) < 2:
        return {}
    rng = np.random.default_rng(seed)
    draws: dict[str, list[float]] = {name: [] for name in computations}
    arrays = {t: (np.array([c for c, _ in p]), np.array([h for _, h in p])) for t, p in by_trial.items()}
    for _ in range(resamples):
        per_trial: dict[str, list[float]] = {name: [] for name in computations}
        for conf, hits in arrays.values():
            idx = rng.integers(0, len(conf), len(conf))
            for name, compute in computations.items():
                per_trial[name].append(compute(conf[idx].tolist(), hits[idx].tolist()))
        for name, trial_values in per_trial.items():
            draws[name].append(float(np.mean(trial_values)))
    return {name: (float(np.percentile(v, 2.5)), float(np.percentile(v, 97.5))) for name, v in draws.items()}


def _helm_truncated(hits: list[float]) -> list[float]:
    return [float(int(h)) for h in hits]


_HELM_INTERVAL_VALUES: dict[str, Callable[[list[float], list[float]], float]] = {
    "ece_10_bin": lambda c, h: helm_ece(c, _helm_truncated(h), 10),
    "ece_1_bin": lambda c, h: helm_ece_equal_width(c, _helm_truncated(h), 1),
    "selective_acc@10": lambda c, h: helm_selective_stats(c, _helm_truncated(h))[1],
    "selective_cov_acc_area": lambda c, h: helm_selective_stats(c, _helm_truncated(h))[0],
}

_TIE_AWARE_VALUES: dict[str, Callable[[list[float], list[float]], float]] = {
    "ece_10_bin_tie_aware": lambda c, h: expected_calibration_error(c, h, 10),
    "selective_acc@10_tie_aware": lambda c, h: selective_accuracy(c, h, 0.1),
    "selective_cov_acc_area_tie_aware": coverage_accuracy_area,
}
