"""helm-diff on two releases of one suite: one model answer changed, one prompt changed."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from holistic.cli.diff import main as diff_main
from holistic.cli.run import main as run_main
from holistic.diff import diff_suites, read_side
from holistic.models.cache import RequestCache

SPEC = """
suite: rel
seed: 0
models: [simple/echo]
defaults:
  max_eval_instances: 20
  metrics: [accuracy]
runs:
  - scenario: arithmetic
    args: {{digits: [1, 2], num_train: 10, num_test: 30}}
  - scenario: synthetic_reasoning
    args: {{mode: pattern_match, num_train: 10, num_test: 30}}
    adaptation: {{instructions: "{instructions}"}}
"""


def _run(tmp: Path, name: str, instructions: str, cache_dir: Path) -> Path:
    spec = tmp / f"{name}.yaml"
    spec.write_text(SPEC.format(instructions=instructions), encoding="utf-8")
    assert run_main([str(spec), "--output-dir", str(tmp / name), "--cache-dir", str(cache_dir), "--quiet"]) == 0
    return tmp / name / "rel"


@pytest.fixture(scope="module")
def releases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    tmp = tmp_path_factory.mktemp("diff")
    old = _run(tmp, "old", "Solve the problem.", tmp / "cache_old")
    # The new release reuses the old answers, except one arithmetic answer that changed.
    shutil.copytree(tmp / "cache_old", tmp / "cache_new")
    run1 = next(p for p in sorted((old / "runs").iterdir()) if p.name.startswith("arithmetic"))
    spec1 = json.loads((run1 / "run_spec.json").read_text())
    requests = pq.read_table(run1 / "requests.parquet").to_pylist()
    target = next(r for r in requests if r["success"])
    cache = RequestCache(next((tmp / "cache_new").glob("*.sqlite")))
    original = cache.get(target["cache_key"])
    assert original is not None
    wrong = dataclasses.replace(original.completions[0], text=" 123456789")
    cache.put(target["cache_key"], dataclasses.replace(original, completions=(wrong,)))
    cache.close()
    new = _run(tmp, "new", "Solve the following problem.", tmp / "cache_new")
    return {
        "old": old,
        "new": new,
        "changed_instance": target["instance_id"],
        "changed_args": spec1["scenario"]["args"],
    }


def test_diff_finds_exactly_the_changed_answer_and_the_changed_prompt(releases: dict[str, object]) -> None:
    report = diff_suites(read_side(releases["old"]), read_side(releases["new"]), num_bootstrap=500)  # type: ignore[arg-type]
    assert len(report.runs) == 3 and not report.runs_added and not report.runs_removed
    by_scenario = {(r.scenario, json.loads(r.scenario_args).get("digits")): r for r in report.runs}
    changed_digits = releases["changed_args"]["digits"]  # type: ignore[index]
    answer_changed = by_scenario[("arithmetic", changed_digits)]
    unchanged = by_scenario[("arithmetic", 3 - changed_digits)]
    prompt_changed = by_scenario[("synthetic_reasoning", None)]

    # the changed answer: a flip on exactly that instance, the run still comparable
    assert answer_changed.comparable
    assert answer_changed.flips_to_wrong == [releases["changed_instance"]]
    assert answer_changed.flips_to_correct == []
    em = next(m for m in answer_changed.metrics if m.metric == "exact_match")
    assert em.delta == pytest.approx(-1 / 20)

    # the unchanged run: comparable, no flips, every interval contains zero
    assert unchanged.comparable and unchanged.causes == []
    assert not unchanged.flips_to_wrong and not unchanged.flips_to_correct
    for m in unchanged.metrics:
        if m.ci_low is not None and m.ci_high is not None:
            assert m.ci_low <= 0 <= m.ci_high, m.metric
        assert not m.significant

    # the changed prompt: flagged as not comparable, with the cause named
    assert not prompt_changed.comparable
    assert any("prompt text changed" in c for c in prompt_changed.causes)
    assert any("instructions" in c for c in prompt_changed.causes)


def test_cli_formats(releases: dict[str, object], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = str(releases["old"]), str(releases["new"])
    assert diff_main([old, new]) == 0
    out = capsys.readouterr().out
    assert "NOT COMPARABLE" in out and "3 aligned runs" in out
    assert (
        diff_main([old, new, "--format", "json", "-o", str(tmp_path / "d.json"), "--html", str(tmp_path / "d.html")])
        == 0
    )
    doc = json.loads((tmp_path / "d.json").read_text())
    assert len(doc["runs"]) == 3
    assert "<table" in (tmp_path / "d.html").read_text()
    assert diff_main([old, new, "--format", "parquet", "-o", str(tmp_path / "d.parquet")]) == 0
    assert pq.read_table(tmp_path / "d.parquet").num_rows > 0
    assert diff_main([old, new, "--format", "csv"]) == 0
    assert capsys.readouterr().out.startswith("old_run_id,")


def test_missing_suite_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert diff_main([str(tmp_path / "nope"), str(tmp_path / "nope2")]) == 2
    assert "no suite.json" in capsys.readouterr().err


def summarize_with_previous(releases: dict[str, object]) -> Path:
    """helm-summarize the new release with ``--previous`` the old one; the new suite's folder."""
    from holistic.cli.summarize import main as summarize_main

    new = Path(str(releases["new"]))
    argv = ["--suite", "rel", "--output-dir", str(new.parent), "--num-bootstrap", "20"]
    assert summarize_main([*argv, "--previous", str(releases["old"])]) == 0
    return new


def test_summarize_links_the_diff_with_the_previous_release(releases: dict[str, object]) -> None:
    new = summarize_with_previous(releases)
    site = new / "site"
    diff_page = (site / "diff.html").read_text(encoding="utf-8")
    assert "not comparable" in diff_page.lower() or "no:" in diff_page
    assert 'href="diff.html"' in (site / "index.html").read_text(encoding="utf-8")
