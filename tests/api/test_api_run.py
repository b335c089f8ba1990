"""``holistic.plan`` and ``holistic.run`` give what ``helm-run`` gives: the same runs, the same suite."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import holistic
from holistic.cli.run import main as helm_run
from holistic.core.errors import HolisticError
from tests.api.helpers import folder
from tests.cli.helm_run_helpers import REPO, write_spec
from tests.results.test_results_golden_quickstart import GOLDEN, assert_same_snapshot, suite_snapshot


@pytest.fixture(autouse=True)
def _no_data_root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("HOLISTIC_DATA_ROOT", raising=False)
    monkeypatch.setenv("HOLISTIC_CACHE_DIR", str(tmp_path / "cache-root"))


def test_run_writes_the_suite_helm_run_writes(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, models=("simple/echo", "simple/no-logprobs"))
    assert helm_run([str(spec), "--output-dir", str(tmp_path / "cli"), "--quiet"]) == 0
    result = holistic.run(spec, output_dir=tmp_path / "api")

    assert result.suite == "tiny" and result.suite_dir == tmp_path / "api" / "tiny"
    assert result.complete and result.exit_code == 0
    cli_suite = tmp_path / "cli" / "tiny"
    listed = json.loads((cli_suite / "suite.json").read_text(encoding="utf-8"))["runs"]
    assert [r.run_id for r in result.runs] == [entry["run_id"] for entry in listed]
    assert_same_snapshot(suite_snapshot(folder(result)), suite_snapshot(cli_suite))  # every table, row for row
    for outcome in result.runs:
        assert outcome.status == "complete" and outcome.folder == result.suite_dir / "runs" / outcome.run_id
        assert outcome.title.startswith("arithmetic (digits=")
        stats = pq.read_table(cli_suite / "runs" / outcome.run_id / "stats.parquet").to_pylist()
        headline = outcome.headline
        assert headline is not None and outcome.score == headline.mean
        stored = [s for s in stats if s["metric"] == headline.metric and s["split"] == headline.split
                  and s["sub_split"] is None and s["perturbation"] is None]  # fmt: skip
        assert stored and stored[0]["mean"] == pytest.approx(headline.mean)
    assert {r.title.rsplit(" · ", 1)[1] for r in result.runs} == {"simple/echo", "simple/no-logprobs"}

    again = holistic.run(spec, output_dir=tmp_path / "api")  # a rerun skips what is complete
    assert [r.status for r in again.runs] == ["skipped"] * len(result.runs) and again.complete
    assert [r.score for r in again.runs] == [r.score for r in result.runs]


def test_run_on_the_quickstart_spec_writes_the_golden_results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = (REPO / "runspecs" / "quickstart.yaml").read_text(encoding="utf-8")
    (tmp_path / "spec.yaml").write_text(spec.replace("[embedded/smollm2-135m-instruct]", "[simple/echo]"), "utf-8")
    shutil.copytree(REPO / "runspecs" / "data", tmp_path / "data")
    monkeypatch.chdir(tmp_path)  # as the golden was made: data paths relative to the working folder
    result = holistic.run("spec.yaml", output_dir="out", options=holistic.RunOptions(use_cache=False))
    assert result.complete and len(result.runs) == 14
    golden = json.loads(gzip.decompress(GOLDEN.read_bytes()).decode("utf-8"))
    assert_same_snapshot(suite_snapshot(folder(result)), golden)


def test_plan_is_the_data_behind_helm_run_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = write_spec(tmp_path, models=("simple/echo", "simple/no-logprobs"))
    planned = holistic.plan(spec, models=["simple/echo"], max_eval_instances=3)
    assert planned.not_runnable is None and planned.plan.suite == "tiny"
    assert [row.model for row in planned.plan.rows] == ["simple/echo", "simple/echo"]
    assert [row.run_id for row in planned.plan.rows] == [r.run_id for r in planned.runs]
    assert all(r.adapter.max_eval_instances == 3 for r in planned.runs)
    assert not (tmp_path / "output").exists()  # a plan writes nothing

    capsys.readouterr()
    assert helm_run([str(spec), "--plan", "--models", "simple/echo", "--max-eval-instances", "3"]) == 0
    assert capsys.readouterr().out == planned.text + "\n"

    ran = holistic.run(spec, models=["simple/echo"], max_eval_instances=3, output_dir=tmp_path / "out")
    assert [r.run_id for r in ran.runs] == [row.run_id for row in planned.plan.rows]


def test_limit_suite_and_selection_map_like_the_flags(tmp_path: Path) -> None:
    spec = write_spec(tmp_path)
    planned = holistic.plan(spec, limit=2, suite="renamed", scenarios=["arith*"])
    assert planned.compiled.suite == "renamed"
    assert {(r.adapter.max_eval_instances, r.adapter.eval_instances) for r in planned.runs} == {(2, "first")}
    with pytest.raises(HolisticError, match=r"--limit .* or --max-eval-instances"):
        holistic.plan(spec, limit=2, max_eval_instances=3)
    with pytest.raises(HolisticError, match="matches no model"):
        holistic.run(spec, models=["nope/*"], output_dir=tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_failed_run_makes_the_suite_incomplete(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "suite: broken\nmodels: [simple/echo]\nruns:\n"
        "  - scenario: file\n    args: {path: missing.jsonl, fields: {input: q, output: a}}\n",
        encoding="utf-8",
    )
    result = holistic.run(spec, output_dir=tmp_path / "out")
    assert not result.complete and result.exit_code == 1
    assert [r.status for r in result.runs] == ["failed"] and result.runs[0].score is None
    assert "missing.jsonl" in (result.runs[0].error or "")


def test_import_holistic_stays_light() -> None:
    code = (
        "import sys, holistic\n"
        "heavy = [m for m in ('torch', 'transformers', 'pyarrow', 'pandas', 'numpy', 'openai', 'anthropic') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
        "assert callable(holistic.run) and callable(holistic.summarize) and callable(holistic.diff)\n"
        "import holistic.api\n"
        "heavy = [m for m in ('torch', 'transformers', 'openai', 'anthropic') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
        "import holistic.summarize, holistic.diff\n"
        "assert callable(holistic.summarize) and callable(holistic.diff)\n"
        "from holistic.summarize import write_summary\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
