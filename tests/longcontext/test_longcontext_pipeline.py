"""The haystack scenario through the real pipeline (simple test model), the plan, and the site heatmaps."""

from __future__ import annotations

import json
import shutil
from functools import cache
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from holistic.core.errors import SpecError, UnknownNameError
from holistic.models.counting import counting_tokenizer
from holistic.models.registry import ModelRegistry
from holistic.scenarios.haystack.scenario import HaystackScenario
from holistic.site.haystack import render_haystack

REPO = Path(__file__).resolve().parents[2]

_SPEC = """
suite: lc-test
seed: 0
models: [MODEL]
defaults: {metrics: [accuracy, efficiency], max_eval_instances: 8}
runs:
  - scenario: haystack
    args:
      tasks: [company, company+sentiment]
      lengths: [1536, 2048]
      formatting: [plain, markdown]
      records_per_length: 2
      depth_bins: 2
      corpus_size: 1500
"""
_MODELS = """
models:
  - name: mine/echo
    provider: simple
    model_id: echo
"""


@cache
def _run_dirs(root: str, model: str = "simple/echo") -> tuple[Path, ...]:
    from holistic.execution.options import RunOptions
    from holistic.execution.runner import run_suite
    from holistic.spec import compile_spec

    base = Path(root)
    spec, models = base / "lc.yaml", base / "models.yaml"
    spec.write_text(_SPEC.replace("MODEL", model), encoding="utf-8")
    models.write_text(_MODELS, encoding="utf-8")
    report = run_suite(
        compile_spec(spec, models_file=models), RunOptions(output_dir=base / "out", offline=True, models_file=models)
    )
    assert [r.status for r in report.runs] == ["complete", "complete"]
    return tuple(Path(str(r.folder)) for r in report.runs if r.folder is not None)


@pytest.fixture(scope="module")
def run_dirs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ...]:
    return _run_dirs(str(tmp_path_factory.mktemp("lc")))


@pytest.fixture(scope="module")
def run_dir(run_dirs: tuple[Path, ...]) -> Path:
    return run_dirs[0]


def _metadata(run_dir: Path) -> list[dict[str, object]]:
    return [json.loads(row["metadata"]) for row in pq.read_table(run_dir / "instances.parquet").to_pylist()]


def test_down_sampled_ablations_keep_the_same_paired_records_in_full_cells(run_dirs: tuple[Path, ...]) -> None:
    ids = [[m["pair"] for m in _metadata(d)] for d in run_dirs]
    assert ids[0] == ids[1]  # plain and markdown see the same records
    meta = _metadata(run_dirs[0])
    assert sorted((m["pair"], m["zero_needle"]) for m in meta) == sorted(
        (pair, zero) for pair in {m["pair"] for m in meta} for zero in (False, True)
    )  # each needle record with its zero-needle twin
    cells = sorted(str(m["sample_stratum"]) for m in meta if not m["zero_needle"])
    assert cells == ["company+sentiment|1536", "company+sentiment|2048", "company|1536", "company|2048"]


def test_a_models_file_model_measures_its_own_records(tmp_path: Path) -> None:
    run = _run_dirs(str(tmp_path), "mine/echo")[0]
    meta = _metadata(run)
    assert all(m["tokenizer"] == "mine/echo" and m["length_unit"] == "tokens" for m in meta)
    assert not any(m["tokenizer_fallback"] for m in meta)


def test_the_leaderboard_cell_is_the_median_f1(run_dir: Path, run_dirs: tuple[Path, ...]) -> None:
    import statistics

    from holistic.summarize.build import summarize_suite

    values = [
        row["value"]
        for row in pq.read_table(run_dir / "per_instance_stats.parquet").to_pylist()
        if row["metric"] == "haystack_f1"
    ]
    stats = {(s["metric"], s["sub_split"]): s for s in pq.read_table(run_dir / "stats.parquet").to_pylist()}
    median = stats["haystack_f1_median", None]
    assert median["mean"] == pytest.approx(statistics.median(values)) and median["count"] == len(values)
    assert median["ci_low"] <= median["mean"] <= median["ci_high"]
    for name in (
        "haystack_recall_median",
        "haystack_precision_median",
        "haystack_zero_needle_false_positive",
        "haystack_degenerate_output",
    ):
        assert stats[name, None]["ci_low"] is not None, name
    # The leaderboard pools the records of the cell's runs (the two formattings) and takes their median.
    pooled = [
        row["value"]
        for d in run_dirs
        for row in pq.read_table(d / "per_instance_stats.parquet").to_pylist()
        if row["metric"] == "haystack_f1"
    ]
    [cell] = [c for c in summarize_suite(run_dir.parents[1]).cells if c["group"] == "accuracy"]
    assert cell["metric"] == "haystack_f1_median" and cell["sub_runs"] == 2
    assert cell["value"] == pytest.approx(statistics.median(pooled))
    assert cell["ci_low"] is not None and cell["ci_low"] <= cell["value"] <= cell["ci_high"]


def test_run_writes_records_scores_and_cell_statistics(run_dir: Path) -> None:
    instances = pq.read_table(run_dir / "instances.parquet").to_pylist()
    assert len(instances) == 2 * 2 * 2
    meta = [json.loads(row["metadata"]) for row in instances]
    assert sum(m["zero_needle"] for m in meta) == 4
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
    assert artifact["tasks"] == ["company", "company+sentiment"] and artifact["lengths"] == [1536, 2048]
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
        ("company", 1536),
        ("company", 2048),
        ("company+sentiment", 1536),
        ("company+sentiment", 2048),
    ]
    row = report.length_table[0]
    assert row["records"] == 2 and row["f1_ci_low"] <= row["f1_median"] <= row["f1_ci_high"]
    assert [r["task"] for r in report.task_table] == ["company", "company+sentiment"]
    assert "median F1" in report.figures[0]["caption"] and "simple/echo" in report.figures[0]["caption"]
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


def test_plan_of_the_shipped_runspec_loads_nothing_and_states_the_cells() -> None:
    from holistic.execution.plan import format_plan, make_plan
    from holistic.spec import compile_spec

    compiled = compile_spec(REPO / "runspecs" / "longcontext.yaml")
    assert len(compiled.runs) == 2  # one run per instruction placement, over the same records
    assert {
        (r.scenario.args_dict["instruction_placement"], r.scenario.args_dict["formatting"]) for r in compiled.runs
    } == {("before", "plain"), ("after", "plain")}
    assert all(
        r.scenario.args_dict["tasks"] == ["company", "time", "company+time", "company+sentiment"] for r in compiled.runs
    )
    text = format_plan(make_plan(compiled))
    assert "haystack" in text and "2 runs" in text
    assert "full, balanced" in text and "needle + " in text and "zero-needle records each" in text


def test_a_needle_count_that_cannot_fit_is_a_compile_error_at_the_field(tmp_path: Path) -> None:
    from holistic.spec import compile_spec

    spec = tmp_path / "lc.yaml"
    bad = _SPEC.replace("MODEL", "simple/echo").replace(
        "lengths: [1536, 2048]", "lengths: [512, 2048]\n      max_needles: 10"
    )
    spec.write_text(bad, encoding="utf-8")
    with pytest.raises(SpecError) as info:
        compile_spec(spec)
    error = info.value
    assert error.exit_code == 2 and error.path == "runs[0].args.max_needles" and error.line == 11
    assert "max_needles 10 does not fit" in error.message and "largest max_needles that fits is " in error.message


def test_bad_args_are_refused_with_the_nearest_name() -> None:
    with pytest.raises(ValueError, match=r"task 'company\+tme'.*did you mean 'time'"):
        HaystackScenario(tasks=["company+tme"])
    with pytest.raises(ValueError, match="lengths must be"):
        HaystackScenario(lengths=[10])
    with pytest.raises(ValueError, match="hard_negative_share"):
        HaystackScenario(hard_negative_share=[0.3, 0.1])
    with pytest.raises(UnknownNameError, match="did you mean"):
        counting_tokenizer("embedded/smollm2-135m-instruc", ModelRegistry())
    facts = HaystackScenario(tasks=("company", "time"), lengths=(512, 1024)).plan_facts(None, None)
    assert facts.num_instances == 32 and facts.input_chars == 4 * 768


def test_api_models_without_a_tokenizer_fall_back_to_chars_and_say_so() -> None:
    unit = counting_tokenizer("openai/gpt-4o-mini", ModelRegistry())
    assert unit.fallback and unit.name == "chars/4" and "names no local tokenizer" in (unit.reason or "")
    assert unit.counter.count("x" * 9) == 3
