"""Calibration and selective classification of a run (HELM §4.4).

Each scored unit contributes a (confidence, correct) pair:

- multiple choice: see :mod:`holistic.metrics.choices` (probability of the pick
  normalised over the choices, or the letter's probability among the letters);
- generation (only for scenarios that list calibration, i.e. short checkable
  answers): the probability of the whole first completion, ``exp(sum of token
  logprobs)``; correct means the scenario's main metric when it is a 0/1 match
  (``exact_match``, ``quasi_exact_match``, the prefix variants,
  ``final_number_exact_match``), else ``exact_match``, against the correct references.

Per instance: ``max_prob`` (the confidence). Per run, for every group of units
sharing a split, sub-split and perturbation, and each trial separately (the run
stat's count is the number of trials, its mean their mean): ``ece_10_bin``,
``ece_1_bin``, ``platt_ece_10_bin``, ``selective_acc@10`` and
``selective_coverage_acc_area`` (arithmetic in :mod:`holistic.metrics.calibration_math`).
When sub-splits exist, an overall group (``sub_split=None``) is added. The
reliability diagram of each group and trial (per bin: confidence, accuracy, count)
and the fitted Platt parameters go to the artifacts under ``calibration``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from holistic.core.hashing import stable_seed
from holistic.core.interfaces import MetricContext, MetricResult, ScenarioInfo
from holistic.core.types import AdapterSpec, MetricName, ModelDeployment, RequestState, Stat
from holistic.metrics.accuracy import BINARY_SCORERS, best_over_references
from holistic.metrics.base import BaseMetric, info
from holistic.metrics.calibration_math import (
    coverage_accuracy_area,
    expected_calibration_error,
    fit_platt,
    reliability_bins,
    selective_accuracy,
)
from holistic.metrics.choices import MULTIPLE_CHOICE_METHODS, resolve
from holistic.metrics.registry import METRICS
from holistic.metrics.states import Unit, first_main, group_units, metric_name, outputs, reference_texts, succeeded

Pair = tuple[float, float]


def _no_logprobs_reason(adapter: AdapterSpec, deployment: ModelDeployment) -> str | None:
    scoring = adapter.method in ("multiple_choice_separate_original", "multiple_choice_separate_calibrated")
    has = deployment.capabilities.prompt_logprobs if scoring else deployment.capabilities.logprobs
    if not has:
        return f"model {deployment.name} returns no logprobs"
    return None


@METRICS.register("calibration")
class CalibrationMetric(BaseMetric):
    """ECE (10 bins, 1 bin, Platt-scaled), selective accuracy and coverage-accuracy area."""

    name = "calibration"
    category = "calibration"
    INFOS = (
        info("max_prob", "calibration", "The model's probability for its own answer (its confidence).",
             needs_logprobs=True),
        info("ece_10_bin", "calibration", "Expected calibration error, 10 equal-mass bins.",
             higher_is_better=False, needs_logprobs=True),
        info("ece_1_bin", "calibration", "Expected calibration error with one bin: |mean confidence - accuracy|.",
             higher_is_better=False, needs_logprobs=True),
        info("platt_ece_10_bin", "calibration", "ECE (10 equal-mass bins) after Platt scaling fitted on the run.",
             higher_is_better=False, needs_logprobs=True),
        info("selective_acc@10", "calibration", "Accuracy on the 10% most confident instances.",
             needs_logprobs=True),
        info("selective_coverage_acc_area", "calibration", "Area under the coverage-accuracy curve.",
             needs_logprobs=True),
    )

    def __init__(
        self, method: str = "multiple_choice_joint", length_normalization: str = "none", correctness: str = "exact_match",
        answer_parsing: str = "helm",
    ) -> None:
        if correctness not in BINARY_SCORERS:
            raise ValueError(f"correctness must be one of {', '.join(BINARY_SCORERS)}; got {correctness!r}")
        self.method = method
        self.length_normalization = length_normalization
        self.answer_parsing = answer_parsing
        self.correctness = correctness

    @classmethod
    def not_applicable(cls, info: ScenarioInfo, adapter: AdapterSpec, deployment: ModelDeployment) -> str | None:
        if adapter.method in ("language_modeling", "ranking_binary"):
            return f"no answer to be confident about with the {adapter.method} method"
        if adapter.method == "generation" and "calibration" not in info.metric_categories:
            return "generation task without choices"
        return _no_logprobs_reason(adapter, deployment)

    @classmethod
    def configure(cls, info: ScenarioInfo, adapter: AdapterSpec, deployment: ModelDeployment) -> CalibrationMetric:
        correctness = info.main_metric if info.main_metric in BINARY_SCORERS else "exact_match"
        return cls(adapter.method, adapter.length_normalization, correctness, adapter.answer_parsing)

    def __repr__(self) -> str:
        return f"CalibrationMetric({self.method!r}, {self.length_normalization!r}, {self.correctness!r})"

    def evaluate(self, states: Sequence[RequestState], ctx: MetricContext) -> MetricResult:
        result = MetricResult()
        pairs: dict[MetricName, dict[int, list[Pair]]] = {}
        for unit in group_units(states):
            pair = self._pair(unit)
            if pair is None:
                continue
            result.per_instance.append(unit.stat("max_prob", pair[0]))
            base = metric_name(unit.instance, "")
            groups = [base] if base.sub_split is None else [base, replace(base, sub_split=None)]
            for group in groups:
                pairs.setdefault(group, {}).setdefault(unit.key.trial, []).append(pair)
        diagrams = []
        for group in sorted(pairs, key=_group_sort):
            by_trial = pairs[group]
            values: dict[str, list[float]] = {}
            for trial in sorted(by_trial):
                conf = [c for c, _ in by_trial[trial]]
                hits = [h for _, h in by_trial[trial]]
                platt = fit_platt(conf, hits)
                for stat_name, compute in _RUN_VALUES.items():
                    values.setdefault(stat_name, []).append(compute(conf, hits))
                values.setdefault("platt_ece_10_bin", []).append(expected_calibration_error(platt(conf), hits, 10))
                diagrams.append({
                    "split": group.split,
                    "sub_split": group.sub_split,
                    "perturbation": group.perturbation,
                    "trial": trial,
                    "bins": [{"confidence": b.confidence, "accuracy": b.accuracy, "count": b.count}
                             for b in reliability_bins(conf, hits, 10)],
                    "platt": {"slope": platt.slope, "intercept": platt.intercept},
                })
            intervals = _bootstrap_intervals(by_trial, stable_seed(ctx.seed, "calibration", repr(group)))
            for stat_name, trial_values in values.items():
                stat = Stat.of(replace(group, name=stat_name), trial_values)
                low, high = intervals.get(stat_name, (None, None))
                result.run_stats.append(replace(stat, ci_low=low, ci_high=high))
        result.artifacts["calibration"] = {
            "method": self.method,
            "correctness": self.correctness if self.method not in MULTIPLE_CHOICE_METHODS else "picked choice is correct",
            "reliability": diagrams,
        }
        return result

    def _pair(self, unit: Unit) -> Pair | None:
        if self.method in MULTIPLE_CHOICE_METHODS:
            outcome = resolve(unit, self.method, self.length_normalization, self.answer_parsing)
            if outcome.confidence is None:
                return None
            return outcome.confidence, float(outcome.correct)
        state = first_main(unit)
        references = reference_texts(unit.instance)
        if state is None or not references or not succeeded(state):
            return None
        assert state.result is not None
        if not state.result.has_logprobs or not state.result.completions:
            return None
        completion = state.result.completions[0]
        logprob = sum(t.logprob for t in completion.tokens) if completion.tokens else completion.logprob
        correct = best_over_references(BINARY_SCORERS[self.correctness], outputs(state)[0], references)
        return min(math.exp(logprob), 1.0), correct


def _group_sort(name: MetricName) -> tuple[str, str, str]:
    return (name.split, name.sub_split or "", name.perturbation or "")


BOOTSTRAP_RESAMPLES = 200
"""Resamples for the intervals of the run-level calibration values (each one recomputes them)."""


def _bootstrap_intervals(
    by_trial: dict[int, list[Pair]], seed: int, resamples: int = BOOTSTRAP_RESAMPLES
) -> dict[str, tuple[float, float]]:
    """95% intervals of the run-level values (mean over trials) by resampling instances.

    Each resample draws the instances of every trial with replacement and recomputes
    ECE, selective accuracy and the coverage-accuracy area. Platt-scaled ECE is left
    without an interval: refitting the scaling per resample costs far more than it tells.
    """
    if sum(len(p) for p in by_trial.values()) < 2:
        return {}
    rng = np.random.default_rng(seed)
    draws: dict[str, list[float]] = {name: [] for name in _RUN_VALUES}
    arrays = {t: (np.array([c for c, _ in p]), np.array([h for _, h in p])) for t, p in by_trial.items()}
    for _ in range(resamples):
        per_trial: dict[str, list[float]] = {name: [] for name in _RUN_VALUES}
        for conf, hits in arrays.values():
            idx = rng.integers(0, len(conf), len(conf))
            for name, compute in _RUN_VALUES.items():
                per_trial[name].append(compute(conf[idx].tolist(), hits[idx].tolist()))
        for name, trial_values in per_trial.items():
            draws[name].append(float(np.mean(trial_values)))
    return {name: (float(np.percentile(v, 2.5)), float(np.percentile(v, 97.5))) for name, v in draws.items()}


_RUN_VALUES: dict[str, Callable[[list[float], list[float]], float]] = {
    "ece_10_bin": lambda c, h: expected_calibration_error(c, h, 10),
    "ece_1_bin": lambda c, h: expected_calibration_error(c, h, 1),
    "selective_acc@10": lambda c, h: selective_accuracy(c, h, 0.1),
    "selective_coverage_acc_area": coverage_accuracy_area,
}
