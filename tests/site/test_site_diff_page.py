"""The release diff reads as a person expects: runs by name, the main metric first, and a page
in the site's style with its navigation bar that fits a 1280 px window (headless Chromium)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from holistic.cli.diff import main as diff_main
from holistic.diff import diff_suites, read_side
from holistic.diff.compare import metric_rank, run_label
from holistic.diff.report import format_terminal
from tests.diff.test_diff_releases import releases, summarize_with_previous  # noqa: F401 (releases: a fixture)


def test_runs_are_named_by_groups_and_short_arguments() -> None:
    assert run_label("file", '{"path": "/data/deep/folder/reviews_ar.csv", "labels": ["a", "b"]}', [], "m/x") == (
        "file (labels=a,b path=reviews_ar.csv) · m/x"
    )
    assert (
        run_label("mmlu", {"subject": "anatomy"}, ["mmlu", "knowledge"], "m/x")
        == "mmlu/knowledge (subject=anatomy) · m/x"
    )
    assert [metric_rank(m, "exact_match") for m in ("exact_match", "f1_score", "platt_coef", "predicted_index")] == [
        0,
        1,
        2,
        2,
    ]


def test_terminal_diff_puts_each_runs_main_metric_first(releases: dict[str, object]) -> None:  # noqa: F811
    report = diff_suites(read_side(Path(str(releases["old"]))), read_side(Path(str(releases["new"]))))
    text = format_terminal(report)
    assert "{" not in text.split("-" * 20)[1].split("aligned runs")[0]  # no run named by raw JSON
    for run in report.runs:
        assert run.ordered[0].metric == run.main_metric
        block = text.split(run.label[:40], 1)[1].splitlines()[0]
        assert f"{run.main_metric} (main)" in block


@pytest.mark.browser
def test_diff_pages_use_the_site_style_and_navigation_and_fit_1280px(
    releases: dict[str, object],  # noqa: F811
    tmp_path: Path,
    page: Any,
) -> None:
    new = summarize_with_previous(releases)
    standalone = tmp_path / "diff.html"
    assert diff_main([str(releases["old"]), str(new), "--html", str(standalone)]) in (0, 1)
    page.set_viewport_size({"width": 1280, "height": 800})
    for url, nav_link in ((new / "site" / "diff.html", "Leaderboards"), (standalone, "Flipped instances")):
        page.goto(url.as_uri())
        assert page.locator("header.top nav a", has_text=nav_link).count() == 1
        header_bg = page.evaluate("getComputedStyle(document.querySelector('header.top')).backgroundColor")
        assert header_bg == "rgb(15, 41, 66)"  # the site's style sheet is applied
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280
        first = page.locator("table.diff tbody tr").first
        assert "(main)" in first.inner_text()
        assert not page.console_errors
