"""``holistic.summarize``, ``holistic.load`` and ``holistic.diff`` on real small suites, beside the commands."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import holistic
from holistic.api import RunResult
from holistic.cli.diff import main as helm_diff
from holistic.cli.summarize import main as helm_summarize
from holistic.core.errors import HolisticError
from holistic.diff.report import dump_json
from tests.api.helpers import folder
from tests.cli.helm_run_helpers import write_spec


@pytest.fixture(scope="module")
def suites(tmp_path_factory: pytest.TempPathFactory) -> tuple[RunResult, RunResult]:
    """Two releases of the suite ``tiny``: the new one adds a model."""
    folder = tmp_path_factory.mktemp("suites")
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("HOLISTIC_DATA_ROOT", raising=False)
        old = holistic.run(write_spec(folder, max_eval=5), output_dir=folder / "old")
        new_spec = write_spec(folder, models=("simple/echo", "simple/no-logprobs"), max_eval=5)
        new = holistic.run(new_spec, output_dir=folder / "new")
    return old, new


def test_summarize_writes_what_helm_summarize_writes(suites: tuple[RunResult, RunResult], tmp_path: Path) -> None:
    _, new = suites
    done = holistic.summarize(new.suite_dir, local_dir=tmp_path / "api")
    assert done.complete and not done.unfinished
    assert done.summary_dir == tmp_path / "api" / "tiny" / "summary" and done.summary_dir / "summary.json" in done.files
    assert all(f.is_file() for f in done.files)
    assert done.site_index == tmp_path / "api" / "tiny" / "site" / "index.html" and done.site_index.is_file()
    assert {r.run_id for r in done.summary.runs} == {r.run_id for r in new.runs}
    assert sorted(done.summary.models) == ["simple/echo", "simple/no-logprobs"]

    out_dir = str(folder(new).parent)
    assert helm_summarize(["--suite", "tiny", "--output-dir", out_dir, "--local-dir", str(tmp_path / "cli")]) == 0
    cli = json.loads((tmp_path / "cli" / "tiny" / "summary" / "summary.json").read_text(encoding="utf-8"))
    api = json.loads((done.summary_dir / "summary.json").read_text(encoding="utf-8"))
    for summary in (cli, api):
        summary.pop("generated", None)
    assert api == cli
    assert sorted(p.name for p in (tmp_path / "cli" / "tiny" / "site").iterdir()) == sorted(
        p.name for p in done.site_index.parent.iterdir()
    )

    only = holistic.summarize("tiny", output_dir=out_dir, local_dir=tmp_path / "nosite", site=False)
    assert only.site_index is None and not (tmp_path / "nosite" / "tiny" / "site").exists()


def test_load_gives_every_table_of_the_suite(suites: tuple[RunResult, RunResult]) -> None:
    _, new = suites
    tables = holistic.load(new.suite_dir)
    assert tables.suite == "tiny" and sorted(tables.run_ids) == sorted(r.run_id for r in new.runs)
    for name in ("stats", "per_instance_stats", "requests", "instances"):
        table = getattr(tables, name)
        assert isinstance(table, pa.Table)
        per_run = sum(pq.read_table(folder(new) / "runs" / r.run_id / f"{name}.parquet").num_rows for r in new.runs)
        assert table.num_rows == per_run > 0
        assert set(table.column("run_id").to_pylist()) == set(tables.run_ids)
    stats = tables.stats.to_pandas()
    for outcome in new.runs:
        assert outcome.headline is not None
        row = stats[(stats.run_id == outcome.run_id) & (stats.metric == outcome.headline.metric)
                    & (stats.split == outcome.headline.split) & stats.sub_split.isna() & stats.perturbation.isna()]  # fmt: skip
        assert row["mean"].iloc[0] == pytest.approx(outcome.headline.mean)
    specs = tables.to_pandas("run_specs").set_index("run_id")
    assert sorted(specs.index) == sorted(tables.run_ids) and set(specs.scenario) == {"arithmetic"}
    assert {json.loads(a)["digits"] for a in specs.scenario_args} == {1, 2}
    assert set(tables.runs.column("status").to_pylist()) == {"complete"}
    assert tables.annotations.num_rows == 0  # no judges
    assert tables.table("stats", metrics=["exact_match"]).column("metric").unique().to_pylist() == ["exact_match"]
    with pytest.raises(HolisticError, match="no table 'prompts'"):
        tables.table("prompts")
    same = holistic.load("tiny", output_dir=folder(new).parent)
    assert same.stats.equals(tables.stats)


def test_diff_is_the_data_helm_diff_prints(
    suites: tuple[RunResult, RunResult], capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = suites
    report = holistic.diff(folder(old), folder(new), num_bootstrap=100)
    added = {r.run_id for r in new.runs if r.title.endswith("simple/no-logprobs")}
    assert set(report.runs_added) == added and not report.runs_removed
    assert {r.new_run_id for r in report.runs} == {r.run_id for r in old.runs}
    scores = [m for r in report.runs for m in r.metrics if m.metric == "exact_match"]
    assert len(scores) == 2 and all(m.delta == 0 and not m.significant for m in scores)  # the same answers

    capsys.readouterr()
    assert helm_diff([str(old.suite_dir), str(new.suite_dir), "--format", "json", "--num-bootstrap", "100"]) == 0
    assert capsys.readouterr().out == dump_json(report)

    by_name = holistic.diff(folder(old).parent, folder(new).parent, suite="tiny", num_bootstrap=100)
    assert by_name.to_json()["runs_added"] == report.to_json()["runs_added"]
    with pytest.raises(HolisticError, match=r"no suite\.json"):
        holistic.diff(folder(old) / "nothing", folder(new))
