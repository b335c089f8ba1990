"""helm-run names runs as the site does: ``--plan``'s table, the closing scores and the site's run
list give each run the same name (its spec's own ``name:`` when it has one); run ids on request."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from holistic.cli.run import main
from holistic.core.naming import NAME_WIDTH
from holistic.site import render_site
from holistic.summarize import summarize_suite

SPEC = """\
suite: names
seed: 0
models: [simple/echo]
defaults:
  max_eval_instances: 4
  metrics: [accuracy]
runs:
  - scenario: arithmetic
    args: {digits: [1, 2], num_train: 10, num_test: 12}
    adaptation: {max_train_instances: [1, 2]}
  - scenario: arithmetic
    name: 'three-digit sums, {max_train_instances}-shot'
    args: {digits: 3, num_train: 10, num_test: 12}
    adaptation: {max_train_instances: 2}
"""


def _section(text: str, heading: str) -> str:
    return text.split(heading, 1)[1].split("\n\n", 1)[0]


def _named(text: str, heading: str) -> dict[str, str]:
    """run id -> name, from the lines ``  name (run id)...`` under ``heading``."""
    found = re.findall(r"^  (\S.*?) \(([\w.-]+-[0-9a-f]{10})\)", _section(text, heading), flags=re.M)
    return {run_id: name for name, run_id in found}


def _links(page: Path) -> dict[str, str]:
    """run id -> the text of the page's link to the run's page."""
    links = re.findall(
        r'<a href="runs/([^"]+)\.html">(?:<bdi>)?([^<]+)(?:</bdi>)?</a>', page.read_text(encoding="utf-8")
    )
    return {run_id: html.unescape(text) for run_id, text in links}


def _plan_table(text: str) -> dict[str, str]:
    """run id -> name, from --plan --show-ids's run table (columns: run, run id, ...)."""
    rows = [re.split(r"\s{2,}", line.strip()) for line in _section(text, "Runs (5):\n").splitlines()[1:]]
    return {row[1]: row[0] for row in rows}


def test_plan_scores_and_site_name_every_run_alike(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    out = tmp_path / "out"

    assert main([str(spec), "--output-dir", str(out), "--plan"]) == 0
    plan = capsys.readouterr().out
    assert main([str(spec), "--output-dir", str(out), "--plan", "--show-ids"]) == 0
    plan_ids = capsys.readouterr().out
    assert main([str(spec), "--output-dir", str(out), "--show-ids"]) == 0
    scores_ids = capsys.readouterr().out
    assert main([str(spec), "--output-dir", str(out)]) == 0  # a rerun: every run already complete
    scores = capsys.readouterr().out

    site = render_site(out / "names", summarize_suite(out / "names", num_bootstrap=10))
    on_site = _links(site.parent / "runs.html")
    assert _links(site.parent / "scenario_arithmetic.html") == on_site  # the scenario's page lists them alike

    expected = {
        "arithmetic (digits=1) · simple/echo [max_train_instances=1]",
        "arithmetic (digits=1) · simple/echo [max_train_instances=2]",
        "arithmetic (digits=2) · simple/echo [max_train_instances=1]",
        "arithmetic (digits=2) · simple/echo [max_train_instances=2]",
        "three-digit sums, 2-shot",
    }
    assert set(on_site.values()) == expected
    # --plan with ids: each run's name beside its id, in the run table and the conformance list
    assert _plan_table(plan_ids) == on_site
    assert _named(plan_ids, "HELM conformance") == on_site
    # the progress lines of the run: each run's id (its folder) and its name as it starts
    for run_id, name in on_site.items():
        assert f"{run_id}: start {name}\n" in scores_ids
    # the closing scores with ids
    assert _named(scores_ids, "scores (main metric") == on_site
    # without --show-ids, the same names and no hashed ids
    for name in expected:
        assert f"  {name}  " in plan.split("Totals:")[0]
        assert re.search(rf"^  {re.escape(name)}\s+exact_match \d", scores, flags=re.M)
    for run_id in on_site:  # (the progress lines of a run name its id, as its folder is named)
        assert run_id not in plan and run_id not in scores.split("runs written", 1)[1]
    assert "scenario + args" not in plan and "num_test=12" not in plan


def test_a_long_name_is_cut_to_the_terminal_in_the_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "spec.yaml"
    long_name = "sums with a rather long and descriptive name that goes on and on and on"
    spec.write_text(
        "suite: long\nmodels: [simple/echo]\nruns:\n"
        f"  - scenario: arithmetic\n    name: '{long_name}'\n    args: {{digits: [1, 2]}}\n",
        encoding="utf-8",
    )
    assert main([str(spec), "--plan"]) == 0
    plan = capsys.readouterr().out
    rows = plan.split("Runs (2):\n", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    names = [re.split(r"\s{2,}", row.strip())[0] for row in rows]
    assert len(names) == 2 and all(len(n) <= NAME_WIDTH and "…" in n for n in names)
    assert names[0].endswith("(digits=1)") and names[1].endswith("(digits=2)")  # the end that tells them apart
    assert max(len(line) for line in plan.splitlines() if line.startswith("  sums")) < 160
