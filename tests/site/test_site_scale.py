"""A 100,000-instance run: the browser's first page renders from disk."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from holistic.site import render_site
from holistic.summarize import summarize_suite
from tests.support.fake_suite import FakeRun, write_fake_suite

pytestmark = pytest.mark.browser


def test_hundred_thousand_instances_first_page_renders(tmp_path: Path, page: Any) -> None:
    suite_dir = write_fake_suite(tmp_path, "big", [FakeRun("big", "m/a", num_instances=100_000, with_requests=True)])
    summary = summarize_suite(suite_dir, num_bootstrap=20)
    index = render_site(suite_dir, summary)
    data = next((index.parent / "data").iterdir())
    chunks = sorted(data.glob("chunk_*.js"))
    assert len(chunks) == 400  # 250 instances per chunk
    browse = next((index.parent / "runs" / "browse").glob("*.html"))
    page.goto(browse.as_uri())
    page.wait_for_selector("article.record")
    assert page.locator("article.record").count() == 20
    assert "100000 instances match" in page.inner_text("#browser-status")
    # only the index and the first chunk were loaded
    loaded = page.evaluate("Array.from(document.scripts).map(s => s.src).filter(s => s.includes('/data/'))")
    assert len(loaded) == 2
    assert page.console_errors == []
