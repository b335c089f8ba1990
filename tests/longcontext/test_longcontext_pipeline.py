"""The haystack scenario through the real pipeline (simple test model), the plan, and the site heatmaps."""

from __future__ import annotations

import json
import shutil
from functools import cache
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from holistic.core.errors import UnknownNameError
from holistic.scenarios.haystack.scenario import HaystackScenario
from holistic.scenarios.haystack.tokens import resolve_length_unit
from holistic.site.haystack import render_haystack

REPO = Path(__file__).resolve().parents[2]

_SPEC = """
suite: lc-test
seed: 0
models: [simple/echo]
defaults: {metrics: [accuracy, efficiency]}
runs:
  - scenario: haystack
    args:
      tasks: [company, company+sentiment]
      lengths: [512, 1024]
      tokenizer: simple/echo
      records_per_length: 2
      depth_bins: 2
      corpus_size: 1500
"""


@cache
def _run_dir(root: str) -> Path:
    from holistic.execution.options import RunOptions
    from holistic.execution.runner import run_suite
    from holistic.spec import compile_spec

    base = Path(root)
    spec = base / "lc.yaml"
    spec.write_text(_SPEC, encoding="utf-8")
    report = run_suite(compile_spec(spec), RunOptions(output_dir=base / "out", offline=True))
    assert [r.status for r in report.runs] == ["complete"]
    return Path(report.runs[0].folder)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _run_dir(str(tmp_path_factory.mktemp("lc")))


def test_run_writes_records_scores_and_cell_statistics(run_dir: Path) -> None:
    instances = pq.read_table(run_dir / "instances.parquet").to_pylist()
    assert len(instances) == 2 * 2 * 2 * 2
    meta = [json.loads(row["metadata"]) for row in instances]
    assert sum(m["zero_needle"] for m in meta) == 8
    assert all(m["tokenizer"] == "simple/echo" and m["tokenizer_fallback"] is False for m in meta)
    requests = pq.read_table(run_dir / "requests.parquet").to_pylist()
    assert all(not r["prompt_truncated"] for r in requests)
    stats = pq.read_table(run_dir / "stats.parquet").to_pylist()
    overall = {s["metric"] for s in stats if s["sub_split"] is None}
    assert {"haystack_f1", "haystack_recall", "haystack_invalid_output"} <= overall
    assert "exact_match" not in overall  # ids are scored as sets, not as strings
    subs = {s["sub_split"] for s in stats if s["metric"] == "haystack_recall" and s["sub_split"]}
    assert subs and all(s.startswith("task=") and "|length=" in s and "|depth=" in s for s in subs)
    artifact = json.loads((run_dir / "artifacts.json").read_text())["metrics"]["haystack"]
    assert artifact["tasks"] == ["company", "company+sentiment"] and artifact["lengths"] == [512, 1024]
    assert artifact["depth_labels"] == ["0-50", "50-100"]
    gold = sum(len(m["gold_ids"]) for m in meta)
    assert sum(c["gold"] for c in artifact["cells"]) == gold


def test_site_heatmaps_and_length_table(run_dir: Path, tmp_path: Path) -> None:
    report = render_haystack(run_dir, tmp_path / "plots", src_prefix="plots/")
    assert [f["task"] for f in report.figures] == ["company", "company+sentiment"]
    for figure in report.figures:
        assert set(figure) >= {"src", "alt", "caption", "run_id"} and figure["run_id"] == run_dir.name
        svg = (tmp_path / figure["src"]).read_text(encoding="utf-8")
        assert svg.startswith("<?xml") and "Recall" in svg and "F1" in svg and "/" in svg
        assert "<dc:date>" not in svg
    assert [(r["task"], r["length"]) for r in report.length_table] == [
        ("company", 512), ("company", 1024), ("company+sentiment", 512), ("company+sentiment", 1024)
    ]
    row = report.length_table[0]
    assert row["records"] == 4 and row["f1_ci_low"] <= row["f1_median"] <= row["f1_ci_high"]
    # Deterministic bytes: rendering again gives the same files.
    again = render_haystack(run_dir, tmp_path / "plots2", src_prefix="plots2/")
    for a, b in zip(report.figures, again.figures, strict=True):
        assert (tmp_path / a["src"]).read_bytes() == (tmp_path / b["src"]).read_bytes()


def test_site_recomputes_from_tables_without_the_artifact(run_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / run_dir.name
    shutil.copytree(run_dir, copy)
    artifacts = json.loads((copy / "artifacts.json").read_text())
    original = artifacts["metrics"].pop("haystack")
    (copy / "artifacts.json").write_text(json.dumps(artifacts))
    report = render_haystack(copy, tmp_path / "plots")
    assert len(report.figures) == 2
    cells = {(c["task"], c["length"], c["depth_bin"]): (c["found"], c["gold"]) for c in original["cells"]}
    assert {(r["task"], r["length"]) for r in report.length_table} == {(t, n) for t, n, _ in cells}


def test_a_run_without_haystack_data_yields_nothing(tmp_path: Path) -> None:
    (tmp_path / "artifacts.json").write_text('{"metrics": {}}')
    report = render_haystack(tmp_path, tmp_path / "plots")
    assert report.figures == [] and report.length_table == []


def test_plan_of_the_shipped_runspec_loads_nothing() -> None:
    from holistic.spec import compile_spec
    from holistic.spec.plan import format_plan, make_plan

    compiled = compile_spec(REPO / "runspecs" / "longcontext.yaml")
    assert len(compiled.runs) == 4  # placement x formatting
    assert {(r.scenario.args_dict["instruction_placement"], r.scenario.args_dict["formatting"]) for r in compiled.runs} == {
        ("before", "plain"), ("before", "markdown"), ("after", "plain"), ("after", "markdown")
    }
    assert all(r.scenario.args_dict["tasks"] == ["company", "time", "company+time", "company+sentiment"]
               for r in compiled.runs)
    text = format_plan(make_plan(compiled))
    assert "haystack" in text and "4 runs" in text


def test_bad_args_are_refused_with_the_nearest_name() -> None:
    with pytest.raises(ValueError, match=r"task 'company\+tme'.*did you mean 'time'"):
        HaystackScenario(tasks=["company+tme"])
    with pytest.raises(ValueError, match="lengths must be"):
        HaystackScenario(lengths=[10])
    with pytest.raises(ValueError, match="hard_negative_share"):
        HaystackScenario(hard_negative_share=[0.3, 0.1])
    with pytest.raises(UnknownNameError, match="did you mean"):
        resolve_length_unit("embedded/smollm2-135m-instruc")
    assert HaystackScenario.estimate_num_instances({"tasks": ["company", "time"], "lengths": [512, 1024]}) == 32


def test_api_models_without_a_tokenizer_fall_back_to_chars_and_say_so() -> None:
    unit = resolve_length_unit("openai/gpt-4o-mini")
    assert unit.fallback and unit.name == "chars/4" and "names no local tokenizer" in (unit.reason or "")
    assert unit.counter.count("x" * 9) == 3
