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

# In the first line of a node's text that has a letter: whether that letter is Arabic, and on which
# side of the node it is laid out (``first`` and ``last``: the letter's centre and the node's, so
# an Arabic line has first > last); the node's computed direction and bidi.
_CHAR_BOXES = r"""(node) => {
  const walker = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
  const text = walker.nextNode();
  const data = text.data;
  const range = document.createRange();
  const box = (i) => { range.setStart(text, i); range.setEnd(text, i + 1); return range.getBoundingClientRect(); };
  let start = 0;
  for (const line of data.split("\n")) {
    const letters = [...line.matchAll(/\p{L}/gu)];
    if (letters.length) {
      const b = box(start + letters[0].index), n = node.getBoundingClientRect();
      if (letters.length < 2 || !b.width) break;  // a lone letter, or text not rendered (closed details)
      return {arabic: /\p{Script=Arabic}/u.test(letters[0][0]), first: (b.left + b.right) / 2, last: (n.left + n.right) / 2,
              style: getComputedStyle(node).direction, bidi: getComputedStyle(node).unicodeBidi};
    }
    start += line.length + 1;
  }
  return {arabic: false, first: 0, last: 0, style: getComputedStyle(node).direction,
          bidi: getComputedStyle(node).unicodeBidi};
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


def _assert_direction_follows_the_text(page: Any, selector: str) -> int:
    """Every block of ``selector`` takes the direction of its first letter, and its first line with
    a letter runs that way (an Arabic line's first letter is at its right); how many were Arabic."""
    arabic = 0
    blocks = page.locator(selector)
    for i in range(blocks.count()):
        facts = blocks.nth(i).evaluate(_CHAR_BOXES)
        if facts["first"] == facts["last"]:
            continue  # a lone letter, or not shown: no order to see
        assert facts["style"] == ("rtl" if facts["arabic"] else "ltr"), (selector, i, facts)
        assert (facts["first"] > facts["last"]) == facts["arabic"], (selector, i, facts)
        arabic += facts["arabic"]
    return arabic


def check_site(page: Any, suite: Path, shots: Path) -> None:
    """The leaderboard, the instance browser and the diff page of the Arabic suite."""
    site = suite / "site"
    page.set_viewport_size({"width": 1280, "height": 900})

    # Leaderboard: the Arabic group name is isolated and laid out right to left inside it.
    page.goto((site / "index.html").as_uri())
    header = page.locator("table thead th bdi", has_text="سخرية").first
    assert header.count() == 1
    facts = header.evaluate(_CHAR_BOXES)
    assert facts["bidi"] == "isolate" and facts["style"] == "rtl", facts
    assert facts["first"] > facts["last"], facts
    page.screenshot(path=str(shots / "leaderboard.png"), full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280

    # Coverage: robustness and fairness n/a on the Arabic runs, with the reason.
    page.goto((site / "coverage.html").as_uri())
    assert "the text is not English (ar): HELM's robustness perturbations rewrite English words" in page.inner_text(
        "main"
    )

    # Instance browser: tweets, QA contexts and questions, answers and references.
    runs = sorted((site / "runs" / "browse").glob("*.html"))
    arabic = 0
    for run in runs:
        page.goto(run.as_uri())
        page.wait_for_selector("article.record pre.input")
        arabic += _assert_direction_follows_the_text(page, "article.record pre.input")
        arabic += _assert_direction_follows_the_text(page, "article.record pre.completion")
        assert page.locator("article.record pre.input").first.evaluate("n => getComputedStyle(n).unicodeBidi") == (
            "plaintext"
        )
        refs = page.locator("article.record ol.refs bdi.ref")
        for i in range(refs.count()):
            assert refs.nth(i).evaluate("n => getComputedStyle(n).unicodeBidi") == "isolate"
        arabic += _assert_direction_follows_the_text(page, "article.record ol.refs bdi.ref")
        page.screenshot(path=str(shots / f"browser_{run.stem}.png"), full_page=True)
    assert arabic >= 2 * len(runs)  # Arabic inputs and references were laid out right to left
    assert page.console_errors == []

    # Diff page (the suite against itself): the run label with the Arabic group is isolated.
    diff_page = shots / "diff.html"
    assert helm_diff([str(suite), str(suite), "--html", str(diff_page)]) in (0, 1)
    page.goto(diff_page.as_uri())
    label = page.locator("table.diff td bdi", has_text="سخرية").first
    facts = label.evaluate(_CHAR_BOXES)
    assert facts["bidi"] == "isolate", facts
    page.screenshot(path=str(shots / "diff.png"), full_page=True)
    for shot in ("leaderboard.png", "diff.png", *(f"browser_{r.stem}.png" for r in runs)):
        assert (shots / shot).stat().st_size > 1000


def test_arabic_suite_runs_and_reads_right_to_left_in_the_browser_leaderboard_and_diff(
    data_root: Path, tmp_path: Path, page: Any
) -> None:
    check_site(page, _run_and_summarize(tmp_path, data_root), tmp_path)
