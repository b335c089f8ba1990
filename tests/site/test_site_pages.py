"""The static site in a real headless Chromium: pages, sorting, search, paging, XSS."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from holistic.results.layout import COMPLETE_MARKER
from holistic.results.manifest import build_manifest
from holistic.site import render_site
from holistic.summarize import summarize_suite, write_summary
from tests.support.fake_suite import FakeRun, write_fake_suite

pytestmark = pytest.mark.browser

XSS_COMPLETION = '<script>window.__xss = 1</script>"><img src=x onerror="window.__xss = 2">'
XSS_REFERENCE = '"><img src=x onerror="window.__xss = 3"><script>window.__xss = 4</script>'


def _plant_payload(run_dir: Path) -> str:
    """Put XSS payloads into the first instance's completion and reference; returns its id."""
    req = pq.read_table(run_dir / "requests.parquet")
    rows = req.to_pylist()
    target = str(rows[0]["instance_id"])
    for r in rows:
        if r["instance_id"] == target:
            r["completion"] = XSS_COMPLETION
            r["completions"] = [{**r["completions"][0], "text": XSS_COMPLETION}]
    pq.write_table(type(req).from_pylist(rows, schema=req.schema), run_dir / "requests.parquet")
    inst = pq.read_table(run_dir / "instances.parquet")
    irows = inst.to_pylist()
    for r in irows:
        if r["instance_id"] == target:
            r["references"] = [{"output": XSS_REFERENCE, "tags": ["correct"]}]
    pq.write_table(type(inst).from_pylist(irows, schema=inst.schema), run_dir / "instances.parquet")
    _reseal(run_dir)
    return target


def _reseal(run_dir: Path) -> None:
    """Rewrite the run's manifest for the edited files (as a run that wrote them would have)."""
    marker = run_dir / COMPLETE_MARKER
    old = json.loads(marker.read_text(encoding="utf-8"))
    new = build_manifest(
        run_dir,
        [f["name"] for f in old["files"]],
        written=old["written"],
        requests=old["requests"],
        failed_requests=old["failed_requests"],
    )
    marker.write_text(json.dumps(new.to_json()), encoding="utf-8")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("site")
    runs = [
        FakeRun(
            "mmlu",
            model,
            {"subject": subject},
            method="multiple_choice_joint",
            skill=skill,
            num_instances=300,
            num_trials=2,
            perturbations=("typos",),
            with_requests=True,
        )
        for model, skill in (("vendor/strong", 0.85), ("vendor/medium", 0.6), ("vendor/weak", 0.3))
        for subject in ("anatomy", "astronomy")
    ]
    suite_dir = write_fake_suite(out, "demo", runs)
    first = sorted((suite_dir / "runs").iterdir())[0]
    target = _plant_payload(first)
    summary = summarize_suite(suite_dir, num_bootstrap=50)
    write_summary(summary, suite_dir / "summary")
    index = render_site(suite_dir, summary)
    return {"index": index, "suite_dir": suite_dir, "xss_run": first.name, "xss_instance": target}


def _open(page: Any, path: Path) -> None:
    page.goto(path.resolve().as_uri())
    page.wait_for_load_state("load")


def test_every_page_type_loads_from_disk_without_errors(page: Any, site: dict[str, Any]) -> None:
    site_dir = site["index"].parent
    pages = [
        site_dir / n
        for n in (
            "index.html",
            "groups.html",
            "scenarios.html",
            "runs.html",
            "coverage.html",
            "models.html",
            "plots.html",
            "scenario_mmlu.html",
            "group_core.html",
        )
    ]
    pages.append(site_dir / "runs" / f"{site['xss_run']}.html")
    pages.append(site_dir / "runs" / "browse" / f"{site['xss_run']}.html")
    for p in pages:
        assert p.exists(), p
        _open(page, p)
        assert page.title(), p
    assert page.console_errors == []
    assert all(u.startswith("file://") for u in page.requested_urls), "the site fetched something off disk"


def test_clicking_a_header_sorts_the_leaderboard(page: Any, site: dict[str, Any]) -> None:
    _open(page, site["index"])
    table = page.locator("#group_accuracy")
    models = table.locator("tbody tr td:nth-child(2) a").all_inner_texts()
    assert models[0] == "vendor/strong"
    header = table.locator("thead th").nth(2).locator("button")
    header.click()  # descending by win rate
    header.click()  # ascending
    after = table.locator("tbody tr td:nth-child(2) a").all_inner_texts()
    assert after[0] == "vendor/weak" and after[-1] == "vendor/strong"
    assert table.locator("thead th").nth(2).get_attribute("aria-sort") == "ascending"
    # keyboard: focus the header button and press Enter
    header.focus()
    page.keyboard.press("Enter")
    assert table.locator("tbody tr td:nth-child(2) a").all_inner_texts()[0] == "vendor/strong"


def test_search_finds_a_known_completion_and_paging_loads_the_next_chunk(page: Any, site: dict[str, Any]) -> None:
    run_id = site["xss_run"]
    browse = site["index"].parent / "runs" / "browse" / f"{run_id}.html"
    _open(page, browse)
    page.wait_for_selector("article.record")
    assert page.locator("article.record").count() == 20
    first_ids = page.locator("article.record").evaluate_all("els => els.map(e => e.dataset.id)")
    page.click("#next")
    page.wait_for_function(f"document.querySelector('article.record').dataset.id !== {first_ids[0]!r}")
    second_ids = page.locator("article.record").evaluate_all("els => els.map(e => e.dataset.id)")
    assert not set(first_ids) & set(second_ids)
    # jump to a page in the second chunk (250 instances per chunk): it is loaded on demand
    scripts_before = page.evaluate("document.querySelectorAll('script[src*=chunk_]').length")
    for _ in range(11):
        page.click("#next")
    page.wait_for_function(
        "document.querySelectorAll('script[src*=chunk_0001]').length > 0 || "
        "document.getElementById('browser-status').textContent.includes('page 13')"
    )
    assert page.evaluate("document.querySelectorAll('script[src*=chunk_]').length") >= scripts_before
    # search: a word of one instance's input
    inputs = pq.read_table(site["suite_dir"] / "runs" / run_id / "instances.parquet").to_pylist()
    needle = inputs[37]["input"].split("#")[-1]
    page.fill("#f-query", f"#{needle}")
    page.click("#f-search button")
    page.wait_for_function("document.getElementById('browser-status').textContent.includes('contain')")
    ids = page.locator("article.record").evaluate_all("els => els.map(e => e.dataset.id)")
    assert inputs[37]["instance_id"] in ids


def test_planted_xss_payloads_show_as_text_and_never_run(page: Any, site: dict[str, Any]) -> None:
    browse = site["index"].parent / "runs" / "browse" / f"{site['xss_run']}.html"
    _open(page, browse)
    page.wait_for_selector(f"article.record[data-id='{site['xss_instance']}']")
    record = page.locator(f"article.record[data-id='{site['xss_instance']}']")
    record.locator("details").first.evaluate("d => d.open = true")
    assert XSS_COMPLETION in record.inner_text()
    assert XSS_REFERENCE in record.inner_text()
    page.wait_for_timeout(300)
    assert page.evaluate("window.__xss === undefined")
    assert record.locator("img").count() == 0
