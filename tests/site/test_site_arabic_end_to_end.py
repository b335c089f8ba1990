"""runspecs/arabic.yaml's LLMeBench sarcasm and QA runs on the embedded model (one instance a run;
the whole suite runs in tests/scenarios/test_scenarios_arabic_runspec.py), then the site in
headless Chromium: Arabic inputs, predictions and references laid out right to left in the
instance browser, an Arabic group name isolated in the leaderboard and in the diff page, with
screenshots in the test's output folder."""

from __future__ import annotations

import glob
import json
from pathlib import Path
from typing import Any

import pyarrow.dataset as ds
import pytest

from holistic.cli.diff import main as helm_diff
from holistic.cli.run import main as helm_run
from holistic.cli.summarize import main as helm_summarize

pytestmark = [pytest.mark.slow, pytest.mark.real_model, pytest.mark.needs_data, pytest.mark.browser]
ROOT = Path(__file__).resolve().parents[2]
GROUP = "سخرية: ArSarcasm, v2"
"""An Arabic run-group name mixing scripts and punctuation, given to the sarcasm runs."""

# The x positions of a text node's first and last characters, and of the node's box, in the page.
_CHAR_BOXES = """(node) => {
  const walker = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
  const text = walker.nextNode();
  const range = document.createRange();
  const box = (i) => { range.setStart(text, i); range.setEnd(text, i + 1); return range.getBoundingClientRect(); };
  const line = text.data.split("\\n")[0].trimEnd();
  return {first: box(0).left, last: box(line.length - 1).left, style: getComputedStyle(node).direction,
          bidi: getComputedStyle(node).unicodeBidi, right: node.getBoundingClientRect().right};
}"""


def _run_and_summarize(tmp_path: Path, data_root: Path) -> Path:
    text = (ROOT / "runspecs" / "arabic.yaml").read_text(encoding="utf-8")
    assert "groups: [llmebench_sarcasm]" in text
    spec = tmp_path / "arabic.yaml"
    spec.write_text(text.replace("groups: [llmebench_sarcasm]", f'groups: ["{GROUP}"]'), encoding="utf-8")
    out = tmp_path / "out"
    args = [str(spec), "--output-dir", str(out), "--data-root", str(data_root), "--max-eval-instances", "1"]
    assert helm_run([*args, "--scenarios", "llmebench_sarcasm,llmebench_qa", "--quiet"]) == 0
    runs = json.loads((out / "arabic" / "suite.json").read_text(encoding="utf-8"))["runs"]
    assert len(runs) == 5 and all(r["status"] == "complete" for r in runs)
    stats = ds.dataset(glob.glob(str(out / "arabic" / "runs" / "*" / "stats.parquet"))).to_table().to_pylist()
    assert {"classification_macro_f1", "f1_score", "quasi_exact_match"} <= {s["metric"] for s in stats}
    assert helm_summarize(["--suite", "arabic", "--output-dir", str(out), "--num-bootstrap", "20"]) == 0
    return out / "arabic"


def _assert_right_to_left(page: Any, selector: str) -> None:
    node = page.locator(selector).first
    facts = node.evaluate(_CHAR_BOXES)
    assert facts["style"] == "rtl", (selector, facts)
    assert facts["first"] > facts["last"], (selector, facts)  # the first letter is at the right


def test_arabic_suite_runs_and_reads_right_to_left_in_the_browser_leaderboard_and_diff(
    data_root: Path, tmp_path: Path, page: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = _run_and_summarize(tmp_path, data_root)
    site = suite / "site"
    page.set_viewport_size({"width": 1280, "height": 900})

    # Leaderboard: the Arabic group name is isolated and laid out right to left inside it.
    page.goto((site / "index.html").as_uri())
    header = page.locator("table thead th bdi", has_text="سخرية").first
    assert header.count() == 1
    facts = header.evaluate(_CHAR_BOXES)
    assert facts["bidi"] == "isolate" and facts["style"] == "rtl", facts
    page.screenshot(path=str(tmp_path / "leaderboard.png"), full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280

    # Instance browser: a sarcasm tweet, and a QA run's Arabic answer and references.
    runs = {p.name: p for p in (site / "runs" / "browse").glob("*.html")}
    sarcasm = next(p for name, p in runs.items() if name.startswith("llmebench_sarcasm"))
    page.goto(sarcasm.as_uri())
    page.wait_for_selector("article.record pre.input")
    _assert_right_to_left(page, "article.record pre.input")
    assert page.locator("article.record pre.input").first.evaluate("n => getComputedStyle(n).unicodeBidi") == (
        "plaintext"
    )
    page.screenshot(path=str(tmp_path / "browser_sarcasm.png"), full_page=True)
    qa = next(p for name, p in runs.items() if name.startswith("llmebench_qa"))
    page.goto(qa.as_uri())
    page.wait_for_selector("article.record bdi.ref")
    _assert_right_to_left(page, "article.record pre.input")
    ref = page.locator("article.record ol.refs bdi.ref").first
    facts = ref.evaluate(_CHAR_BOXES)
    assert facts["bidi"] == "isolate" and facts["style"] == "rtl", facts
    # The prediction block takes the direction of its own first letter (Arabic or not).
    completion = page.locator("article.record pre.completion").first
    assert completion.get_attribute("dir") == "auto"
    page.screenshot(path=str(tmp_path / "browser_qa.png"), full_page=True)
    assert page.console_errors == []

    # Diff page (the suite against itself): the run label with the Arabic group is isolated.
    diff_page = tmp_path / "diff.html"
    assert helm_diff([str(suite), str(suite), "--html", str(diff_page)]) in (0, 1)
    page.goto(diff_page.as_uri())
    label = page.locator("table.diff td bdi", has_text="سخرية").first
    facts = label.evaluate(_CHAR_BOXES)
    assert facts["bidi"] == "isolate", facts
    page.screenshot(path=str(tmp_path / "diff.png"), full_page=True)
    for name in ("leaderboard.png", "browser_sarcasm.png", "browser_qa.png", "diff.png"):
        assert (tmp_path / name).stat().st_size > 1000
