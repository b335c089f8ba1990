"""Judge governance on the site, in headless Chromium: agreement beside the judged scores,
and a flagged judge warned about on every page that shows its scores."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from holistic.cli.run import main as run_main
from holistic.cli.summarize import main as summarize_main
from tests.execution.judge_fixture import judge_entry, write_suite

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("judged_site")
    judges = [judge_entry("simple/echo"), judge_entry("simple/no-logprobs", template="Verdict: 1")]
    spec = write_suite(folder, judges)
    out = folder / "out"
    common = ["--output-dir", str(out), "--quiet", "--cache-dir", str(folder / "cache")]
    assert run_main([str(spec), *common, "--models-file", str(folder / "models.yaml")]) == 0
    assert summarize_main(["--suite", "judged", "--output-dir", str(out), "--judge-threshold", "0.5"]) == 0
    return out / "judged" / "site"


def _open(page: Any, path: Path) -> None:
    page.goto(path.resolve().as_uri())
    page.wait_for_load_state("load")


def test_the_scenario_page_shows_judge_agreement_beside_the_judged_scores(page: Any, site: Path) -> None:
    (scenario,) = site.glob("scenario_*.html")
    _open(page, scenario)
    tables = page.locator("table")
    texts = [tables.nth(i).inner_text() for i in range(tables.count())]
    assert any("judge_score" in t for t in texts)  # the scores
    agreement = next(t for t in texts if "Krippendorff" in t)  # and, on the same page, how far to trust them
    assert "simple/echo, simple/no-logprobs" in agreement and "below threshold" in agreement
    assert page.console_errors == []


def test_a_flagged_judge_is_warned_about_on_every_page_with_its_scores(page: Any, site: Path) -> None:
    pages = [
        site / "index.html",
        *site.glob("scenario_*.html"),
        *(site / "runs").glob("*.html"),
        *(site / "runs" / "browse").glob("*.html"),
        site / "judges.html",
    ]
    for path in pages:
        _open(page, path)
        flags = page.locator(".judge-flag")
        assert flags.count() == 2, path
        assert flags.first.is_visible()
        assert (
            "simple/echo" in flags.first.inner_text()
            and "below the agreement threshold 0.5" in flags.first.inner_text()
        )
    _open(page, site / "coverage.html")
    assert page.locator(".judge-flag").count() == 0
    _open(page, site / "index.html")
    page.click("text=Judges")
    page.wait_for_load_state("load")
    assert page.url.endswith("judges.html")
    assert page.locator("table").count() >= 1
