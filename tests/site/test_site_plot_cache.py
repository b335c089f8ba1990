"""A re-summarize takes the figures matplotlib drew for the same data from the output cache; a figure
whose data changed is drawn again."""

from __future__ import annotations

from pathlib import Path

import pytest

from holistic.results import SuiteReader
from holistic.results.output_cache import CACHE_FOLDER, OutputCache
from holistic.site import plots
from holistic.site.bundle import write_bundle
from tests.site.test_site_bundle import RUNS, _fresh_site, _summarize, _tree, suite_with_bundles
from tests.support.calls import record_calls
from tests.support.fake_suite import FakeRun, rewrite_run

TRIALS = [*RUNS[:2], FakeRun("sc", "model/2", skill=0.6, num_instances=40, num_trials=2, with_requests=True)]


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    return suite_with_bundles(tmp_path, TRIALS)


def test_unchanged_figures_are_taken_from_the_cache(
    suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    drawn = record_calls(monkeypatch, plots, "_save", lambda fig, path, *_: path.name)
    first = _tree(_summarize(suite))
    assert drawn == ["trials_sc.svg"]  # the correlations are written as SVG directly, not drawn
    drawn.clear()
    assert _tree(_summarize(suite)) == first
    assert drawn == []

    rewrite_run(tmp_path / "out", "s", TRIALS[2], seed=11)  # new trial means, new correlations
    write_bundle(SuiteReader(suite).run(TRIALS[2].run_id))
    site = _summarize(suite)
    assert drawn == ["trials_sc.svg"]  # the correlations are written as SVG directly, not drawn
    monkeypatch.undo()
    assert _tree(site) == _fresh_site(suite, tmp_path)


def test_a_resummarize_reads_every_runs_trial_means_from_one_record(
    suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _summarize(suite)
    assert len(list((suite / CACHE_FOLDER / plots.TRIALS_CACHE).iterdir())) == 1
    read = record_calls(monkeypatch, OutputCache, "get", lambda cache, kind, *_: kind)
    computed = record_calls(monkeypatch, plots, "_run_trial_means")
    _summarize(suite)
    assert read.count(plots.TRIALS_CACHE) == 1
    assert computed == []  # no run's file read for its trial means

    rewrite_run(tmp_path / "out", "s", TRIALS[2], seed=4)
    write_bundle(SuiteReader(suite).run(TRIALS[2].run_id))
    site = _summarize(suite)
    monkeypatch.undo()
    assert _tree(site) == _fresh_site(suite, tmp_path)
