"""The README's first command, end to end on the embedded model: run, summarize, browse."""

from __future__ import annotations

import glob
import json
from pathlib import Path
from typing import Any

import pyarrow.dataset as ds
import pytest

from holistic.cli.run import main as helm_run
from holistic.cli.summarize import main as helm_summarize

pytestmark = [pytest.mark.browser, pytest.mark.real_model]
ROOT = Path(__file__).resolve().parents[2]


def test_quickstart_runs_summarizes_and_every_instance_can_be_browsed(
    tmp_path: Path, page: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    spec = ROOT / "runspecs" / "quickstart.yaml"
    assert helm_run([str(spec), "--output-dir", str(out), "--max-eval-instances", "3", "--quiet"]) == 0
    stats = ds.dataset(glob.glob(str(out / "quickstart" / "runs" / "*" / "stats.parquet"))).to_table()
    runs = json.loads((out / "quickstart" / "suite.json").read_text())["runs"]
    # 3 reasoning modes + 2 arithmetic sizes + capitals + sentiment, each with chat and plain prompts.
    assert len(runs) == 14 and all(r["status"] == "complete" for r in runs)
    assert set(stats.column("run_id").to_pylist()) == {r["run_id"] for r in runs}
    assert {"exact_match", "ece_10_bin", "inference_runtime"} <= set(stats.column("metric").to_pylist())
    assert "robustness" in set(stats.column("perturbation").to_pylist())

    capsys.readouterr()
    assert helm_summarize(["--suite", "quickstart", "--output-dir", str(out), "--num-bootstrap", "50"]) == 0
    index = Path(capsys.readouterr().out.strip().splitlines()[-1].removeprefix("site: "))
    assert index.name == "index.html" and index.exists()

    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(index.as_uri())
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    leaderboard = page.locator("#group_accuracy")
    systems = [leaderboard.locator("tbody tr:not(.baseline)").nth(i).inner_text() for i in range(2)]
    assert leaderboard.locator("tbody tr:not(.baseline)").count() == 2
    assert sorted("chat" in s for s in systems) == [False, True]
    assert all("embedded/smollm2-135m-instruct [prompt_format=" in s for s in systems)
    assert "capitals" in leaderboard.inner_text() and "sentiment" in leaderboard.inner_text()
    baselines = leaderboard.locator("tbody tr.baseline")
    assert baselines.count() == 2 and "chance (baseline)" in baselines.nth(0).inner_text()
    for run in runs:
        page.goto((index.parent / "runs" / "browse" / f"{run['run_id']}.html").as_uri())
        page.wait_for_selector("article.record")
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280, run["run_id"]
        assert page.locator("article.record pre.completion").first.is_visible()
        status = page.inner_text("#browser-status")
        assert status.startswith("3 instances match"), (run["run_id"], status)
        assert page.locator("article.record").count() == 3
    assert page.console_errors == []
