"""The instance browser shows, per HumanEval problem, the code that ran in the sandbox,
whether it passed and the reason (or the limit) that stopped it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from holistic.cli.run import main as helm_run
from holistic.cli.summarize import main as helm_summarize
from tests.metrics.sandbox_testkit import sandbox

__all__ = ["sandbox"]
pytestmark = [pytest.mark.browser, pytest.mark.sandbox, pytest.mark.needs_data]

SPEC = """
suite: code
models: [simple/echo]
runs:
  - scenario: humaneval
    metrics: [accuracy]
"""


def test_browser_shows_each_sandbox_run(
    tmp_path: Path, data_root: Path, sandbox: None, page: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "code.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    out = tmp_path / "out"
    args = [str(spec), "--output-dir", str(out), "--data-root", str(data_root), "--quiet", "--limit", "3"]
    assert helm_run(args) == 0
    (run_dir,) = (out / "code" / "runs").iterdir()
    rows = pq.read_table(run_dir / "per_instance_stats.parquet").to_pylist()
    details = {r["instance_id"]: json.loads(r["details"]) for r in rows if r["metric"] == "code_eval_acc"}
    assert len(details) == 3
    capsys.readouterr()
    assert helm_summarize(["--suite", "code", "--output-dir", str(out), "--num-bootstrap", "20"]) == 0
    browse = out / "code" / "site" / "runs" / "browse" / f"{run_dir.name}.html"

    page.goto(browse.resolve().as_uri())
    page.wait_for_selector("article.record .code-runs")
    records = page.locator("article.record")
    assert records.count() == 3
    for k in range(3):
        record = records.nth(k)
        d = details[record.get_attribute("data-id")]
        sample = d["samples"][0]
        runs = record.locator(".code-runs").first
        assert runs.locator(".label").first.inner_text() == f"Sandbox runs: {d['c']} of {d['n']} passed"
        summary = runs.locator("details.code-run summary").first.inner_text()
        assert ("passed" if sample["passed"] else "failed: " + sample["reason"]) in summary
        runs.locator("details.code-run summary").first.click()
        assert runs.locator("pre.code").first.inner_text() == sample["code"]
        assert sample["code"].rstrip().endswith(")") and "check(" in sample["code"]
    assert page.console_errors == []
