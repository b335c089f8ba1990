from __future__ import annotations

import numpy as np
import pytest

from holistic.core.interfaces import MetricInfo
from holistic.core.types import MetricName, PerInstanceStat
from holistic.metrics.stats import aggregate, bootstrap_ci, bootstrap_means
from tests.metrics.metrics_testkit import instance

EM = MetricName("exact_match")
INFOS = {
    "exact_match": MetricInfo("exact_match", "accuracy"),
    "bits_per_byte": MetricInfo("bits_per_byte", "accuracy", higher_is_better=False),
}


def pis(iid: str, value: float, trial: int = 0, name: MetricName = EM) -> PerInstanceStat:
    return PerInstanceStat(instance_id=iid, trial=trial, name=name, value=value)


def test_count_mean_stddev_and_ci_over_instances() -> None:
    values = [1, 0, 1, 1, 0, 1, 1, 1]
    (stat,) = aggregate([pis(f"i{k}", v) for k, v in enumerate(values)], seed=0, infos=INFOS)
    assert stat.count == 8
    assert stat.mean == pytest.approx(0.75)
    assert stat.stddev == pytest.approx(np.std(values))
    assert stat.min == 0 and stat.max == 1
    assert stat.ci_low is not None and stat.ci_high is not None
    assert 0.0 <= stat.ci_low < 0.75 < stat.ci_high <= 1.0
    assert stat.num_trials == 1 and stat.trial_stddev is None


def test_trials_mean_of_trial_means_and_spread() -> None:
    rows = [pis("a", 1, 0), pis("b", 1, 0), pis("a", 0, 1), pis("b", 1, 1), pis("a", 0, 2), pis("b", 0, 2)]
    (stat,) = aggregate(rows, seed=0, infos=INFOS)
    trial_means = [1.0, 0.5, 0.0]
    assert stat.mean == pytest.approx(np.mean(trial_means))
    assert stat.count == 2  # instances, not instance-trials
    assert stat.num_trials == 3
    assert stat.trial_stddev == pytest.approx(np.std(trial_means))


def test_bootstrap_is_deterministic_from_seed_and_independent_of_input_order() -> None:
    rng = np.random.default_rng(1)
    rows = [pis(f"i{k}", float(v)) for k, v in enumerate(rng.uniform(size=50))]
    first = aggregate(rows, seed=7, infos=INFOS)
    again = aggregate(list(reversed(rows)), seed=7, infos=INFOS)
    other = aggregate(rows, seed=8, infos=INFOS)
    assert (first[0].ci_low, first[0].ci_high) == (again[0].ci_low, again[0].ci_high)
    assert (first[0].ci_low, first[0].ci_high) != (other[0].ci_low, other[0].ci_high)


def test_ci_does_not_depend_on_other_metrics_in_the_run() -> None:
    rows = [pis(f"i{k}", float(k % 3)) for k in range(30)]
    extra = [pis(f"i{k}", 1.0, name=MetricName("f1_score")) for k in range(30)]
    alone = aggregate(rows, seed=3, infos=INFOS)[0]
    together = next(s for s in aggregate(rows + extra, seed=3, infos=INFOS) if s.name == EM)
    assert (alone.ci_low, alone.ci_high) == (together.ci_low, together.ci_high)


def test_single_instance_has_a_degenerate_interval() -> None:
    (stat,) = aggregate([pis("only", 0.25)], seed=0, infos=INFOS)
    assert stat.count == 1
    assert stat.ci_low == pytest.approx(0.25) and stat.ci_high == pytest.approx(0.25)


@pytest.mark.parametrize("value", [0.1, 1 / 3, -2.5e-300, 7.0e300, 0.0])
def test_single_instance_interval_is_exactly_what_resampling_gives(value: float) -> None:
    (stat,) = aggregate([pis("only", value)], seed=0, infos=INFOS)
    low, high = bootstrap_ci([value], seed=0)
    assert (stat.ci_low, stat.ci_high) == (low, high) == (value, value)


def test_bad_confidence_is_an_error_even_for_one_instance() -> None:
    with pytest.raises(ValueError, match="confidence"):
        aggregate([pis("only", 0.5)], seed=0, infos=INFOS, confidence=1.5)


def test_bootstrap_matches_the_sampling_distribution() -> None:
    values = np.random.default_rng(0).normal(size=400)
    means = bootstrap_means(values, seed=0, num_resamples=2000)
    assert means.std() == pytest.approx(values.std() / np.sqrt(400), rel=0.1)
    low, high = bootstrap_ci(values, seed=0)
    assert low < values.mean() < high


def test_duplicate_values_and_non_finite_values_are_errors() -> None:
    with pytest.raises(ValueError, match="two values for instance 'a'"):
        aggregate([pis("a", 1), pis("a", 0)], seed=0, infos=INFOS)
    with pytest.raises(ValueError, match="non-finite"):
        aggregate([pis("a", float("nan"))], seed=0, infos=INFOS)


def test_worst_case_rows_pass_through_and_are_added_from_instances() -> None:
    orig = [instance("a", ["x"]), instance("b", ["x"])]
    typo = [instance("a", ["x"], perturbation="typos"), instance("b", ["x"], perturbation="typos")]
    rows = [
        pis("a", 1),
        pis("b", 1),
        pis("a", 0, name=EM.with_perturbation("typos")),
        pis("b", 1, name=EM.with_perturbation("typos")),
    ]
    stats = {s.name.perturbation: s for s in aggregate(rows, seed=0, infos=INFOS, instances=orig + typo)}
    assert stats[None].mean == 1.0
    assert stats["typos"].mean == 0.5
    assert stats["robustness"].mean == 0.5
    # rows already carrying the worst case are aggregated as given, not recomputed
    given = [*rows, pis("a", 1, name=EM.with_perturbation("robustness"))]
    passed = {s.name.perturbation: s for s in aggregate(given, seed=0, infos=INFOS, instances=orig + typo)}
    assert passed["robustness"].count == 1 and passed["robustness"].mean == 1.0


def test_worst_case_is_the_minimum_as_in_helm_even_for_lower_is_better_values() -> None:
    name = MetricName("bits_per_byte")
    rows = [pis("a", 1.0, name=name), pis("a", 3.0, name=name.with_perturbation("typos"))]
    insts = [instance("a", []), instance("a", [], perturbation="typos")]
    stats = {s.name.perturbation: s for s in aggregate(rows, seed=0, infos=INFOS, instances=insts)}
    assert stats["robustness"].mean == 1.0
    assert stats["typos:worst"].mean == 1.0 and stats["typos:original"].mean == 1.0
