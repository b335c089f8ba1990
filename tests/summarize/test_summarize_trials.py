"""Each run's per-trial means taken from the values the leaderboards read are those its own file gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from holistic.results import RunReader, SuiteReader
from holistic.site import plots
from holistic.summarize import load
from holistic.summarize.build import summarize_suite
from holistic.summarize.trials import trial_means_from
from tests.support.fake_suite import FakeRun, write_fake_suite

RUNS = [
    FakeRun("alpha", "model/0", num_instances=37, num_trials=3, perturbations=("typos",)),
    FakeRun("alpha", "model/1", skill=0.7, num_instances=37, num_trials=2, perturbations=("typos",)),
    FakeRun("beta", "model/0", num_instances=11, main_metric="quasi_exact_match"),
    FakeRun("gamma", "model/1", num_instances=5, num_trials=2),
]


@pytest.fixture
def suite(tmp_path: Path) -> SuiteReader:
    return SuiteReader(write_fake_suite(tmp_path / "out", "s", RUNS))


def test_means_from_the_suites_values_equal_each_runs_own(suite: SuiteReader) -> None:
    ids = [r.run_id for r in RUNS]
    table = load.per_instance_values(suite, ids, ["exact_match", "quasi_exact_match"])
    found = trial_means_from(table, ids, ["exact_match", "quasi_exact_match"], {r.run_id: r.main_metric for r in RUNS})
    assert set(found) == set(ids)
    for run in RUNS:
        own = plots._run_trial_means(suite.run(run.run_id), run.main_metric)
        assert found[run.run_id] == own  # the same trials, in the same order, the same floats
        assert len(own) == run.num_trials


def test_a_run_whose_main_metric_was_not_read_is_left_to_its_file(suite: SuiteReader) -> None:
    ids = [r.run_id for r in RUNS]
    table = load.per_instance_values(suite, ids, ["exact_match"])
    found = trial_means_from(table, ids, ["exact_match"], {r.run_id: r.main_metric for r in RUNS})
    assert RUNS[2].run_id not in found
    assert found[RUNS[0].run_id] == plots._run_trial_means(suite.run(RUNS[0].run_id), "exact_match")


def test_a_summary_reads_no_run_file_again_for_its_trial_plots(
    suite: SuiteReader, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = summarize_suite(suite, num_bootstrap=5, seed=0)
    assert summary.trial_means[RUNS[0].run_id] == plots._run_trial_means(suite.run(RUNS[0].run_id), "exact_match")
    read: list[str] = []
    real = plots._run_trial_means

    def reading(reader: RunReader, metric: str) -> list[list[float]]:
        read.append(reader.run_id)
        return real(reader, metric)

    monkeypatch.setattr(plots, "_run_trial_means", reading)
    means = plots._trial_means(suite, summary)
    assert read == [r.run_id for r in RUNS if r.run_id not in summary.trial_means]
    assert means  # every scenario of more than one trial has its spread
