"""What a new user sees first, in headless Chromium at 1280 px: systems and baselines on the
leaderboard, readable run titles, and each instance's prediction without a click."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from holistic.site import render_site
from holistic.summarize import summarize_suite, write_summary
from tests.support.fake_suite import FakeRun, write_fake_suite

pytestmark = pytest.mark.browser
WIDTH, HEIGHT = 1280, 800
MODEL = "vendor/model-with-a-rather-long-deployment-name-v2"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("first_sight")
    labels = ("entailment", "neutral", "contradiction")
    runs = [
        FakeRun(
            "raft",
            MODEL,
            {"subject": "terms_of_service", "path": "/data/sets/" + "x" * 90},
            adapter={"prompt_format": fmt, "instructions": "Label the sentence. " * 12},
            skill=skill,
            num_instances=45,
            labels=labels,
            with_requests=True,
            main_metric="quasi_exact_match",
        )
        for fmt, skill in (("plain", 0.7), ("chat", 0.45))
    ] + [
        FakeRun(
            "narrative_qa",
            MODEL,
            adapter={"prompt_format": fmt, "instructions": "Answer. " * 20},
            skill=skill,
            num_instances=30,
            with_requests=True,
        )
        for fmt, skill in (("plain", 0.5), ("chat", 0.6))
    ]
    suite_dir = write_fake_suite(out, "first_sight", runs)
    summary = summarize_suite(suite_dir, num_bootstrap=40)
    write_summary(summary, suite_dir / "summary")
    return render_site(suite_dir, summary)


def _open(page: Any, path: Path, name: str) -> None:
    page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
    page.goto(path.resolve().as_uri())
    page.wait_for_load_state("load")
    shots = os.environ.get("HOLISTIC_SCREENSHOTS")
    if shots:  # for a person to look at: HOLISTIC_SCREENSHOTS=DIR pytest tests/site/test_site_first_sight.py
        Path(shots).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(shots) / f"{name}.png"), full_page=False)


def _no_horizontal_scroll(page: Any) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= WIDTH, f"page is {width}px wide at a {WIDTH}px window"


def test_leaderboard_ranks_two_systems_and_labels_the_baselines(page: Any, site: Path) -> None:
    _open(page, site, "leaderboard")
    _no_horizontal_scroll(page)
    board = page.locator("#group_accuracy")
    systems = board.locator("tbody tr:not(.baseline)")
    assert systems.count() == 2
    texts = [systems.nth(i).inner_text() for i in range(2)]
    assert any("[prompt_format=plain" in t for t in texts) and any("[prompt_format=chat" in t for t in texts)
    rates = [systems.nth(i).locator("td").nth(2).get_attribute("data-sort") for i in range(2)]
    assert all(r not in (None, "") for r in rates)  # win rates, not "–"
    baselines = board.locator("tbody tr.baseline")
    assert baselines.count() == 2
    assert baselines.nth(0).locator("td").nth(1).inner_text() == "chance (baseline)"
    assert baselines.nth(1).locator("td").nth(1).inner_text() == "majority (baseline)"
    assert "not ranked" in baselines.nth(0).inner_text()
    assert page.console_errors == []


def test_run_page_title_is_short_and_the_full_name_is_folded(page: Any, site: Path) -> None:
    run_page = next(p for p in sorted((site.parent / "runs").glob("*.html")) if "raft" in p.name)
    _open(page, run_page, "run_page")
    _no_horizontal_scroll(page)
    title = page.inner_text("h1")
    assert title.startswith("Run: raft (subject=terms_of_service") and len(title) < 140
    folded = page.locator("details.runname")
    assert folded.count() == 1 and folded.get_attribute("open") is None
    assert page.console_errors == []


def test_instance_browser_shows_prediction_references_and_main_metric_first(page: Any, site: Path) -> None:
    browse = next(p for p in sorted((site.parent / "runs" / "browse").glob("*.html")) if "raft" in p.name)
    _open(page, browse, "instance_browser")
    page.wait_for_selector("article.record")
    _no_horizontal_scroll(page)
    first = page.locator("article.record").first
    state = "correct" if "correct" in (first.get_attribute("class") or "").split() else "wrong"
    assert state in (first.get_attribute("class") or "")
    prediction = first.locator("section.variant pre.completion").first
    assert prediction.is_visible()
    box = prediction.bounding_box()
    assert box is not None and box["y"] + box["height"] <= HEIGHT, "the first prediction is below the fold"
    assert state in (prediction.get_attribute("class") or "")  # coloured by correctness
    refs = first.locator("ol.refs li")
    assert refs.count() == 3 and first.locator("ol.refs li.correct").count() == 1
    assert refs.first.is_visible()
    assert first.locator(".metric-main").first.inner_text().startswith("quasi_exact_match: ")
    folded = first.locator("details.metrics").first
    assert folded.get_attribute("open") is None and "Other metrics" in folded.inner_text()
    prompt = first.locator("details.trial").first
    assert prompt.get_attribute("open") is None and not first.locator("pre.prompt").first.is_visible()
    assert page.console_errors == []


def test_compare_view_puts_every_systems_answer_side_by_side(page: Any, site: Path) -> None:
    compare = sorted((site.parent / "compare").glob("*.html"))
    assert len(compare) == 2  # raft and narrative_qa, each run by both systems
    page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
    raft = next(p for p in compare if "raft" in p.read_text(encoding="utf-8"))
    _open(page, raft, "compare")
    page.wait_for_selector("article.compare-record")
    _no_horizontal_scroll(page)
    first = page.locator("article.compare-record").first
    cards = first.locator("section.system")
    assert cards.count() == 2
    boxes = [cards.nth(i).bounding_box() for i in range(2)]
    assert boxes[0] and boxes[1] and abs(boxes[0]["y"] - boxes[1]["y"]) < 1  # side by side, not stacked
    assert "[prompt_format=" in cards.nth(0).inner_text()
    page.select_option("#c-filter", "split")
    page.wait_for_function("document.getElementById('compare-status').textContent.indexOf(' of ') > 0")
    shown = page.locator("article.compare-record")
    for i in range(shown.count()):
        verdicts = {shown.nth(i).locator("section.system").nth(k).get_attribute("class") for k in range(2)}
        assert verdicts == {"system correct", "system wrong"}
    assert page.console_errors == []
