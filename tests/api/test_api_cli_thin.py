"""Each command maps its arguments onto one call of the Python API (and only prints what it returns)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from holistic import api
from holistic.cli.check import main as check_main
from holistic.cli.diff import main as helm_diff
from holistic.cli.helm_import import main as helm_import
from holistic.cli.ratings import main as helm_ratings
from holistic.cli.run import main as helm_run
from holistic.cli.summarize import main as helm_summarize
from holistic.models.check import AgreementTable
from tests.cli.helm_run_helpers import write_spec

Calls = list[tuple[tuple[Any, ...], dict[str, Any]]]


def spy(monkeypatch: pytest.MonkeyPatch, name: str, fake: Callable[..., Any] | None = None) -> Calls:
    """Record every call of ``holistic.api.<name>`` (passing it on to the real one, or to ``fake``)."""
    calls: Calls = []
    real = fake or getattr(api, name)

    def recorded(*args: Any, **kwargs: Any) -> Any:
        calls.append((args, kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr(api, name, recorded)
    return calls


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("HOLISTIC_DATA_ROOT", raising=False)
    monkeypatch.setenv("HOLISTIC_CACHE_DIR", str(tmp_path / "cache-root"))
    monkeypatch.chdir(tmp_path)


def test_helm_run_is_one_run_call(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_spec(tmp_path, models=("simple/echo", "simple/no-logprobs"))
    runs = spy(monkeypatch, "run")
    argv = [str(spec), "--output-dir", "out", "--models", "simple/echo", "--limit", "3", "-j", "2", "--no-cache",
            "--max-runs", "50", "--max-template-steps", "999", "--suite", "mine", "--batch-size", "4"]  # fmt: skip
    assert helm_run(argv) == 0
    printed = capsys.readouterr().out
    ((args, kwargs),) = runs
    assert args == (spec,) and kwargs["suite"] == "mine" and kwargs["models"] == ["simple/echo"]
    assert kwargs["limit"] == 3 and kwargs["max_eval_instances"] is None and kwargs["scenarios"] == []
    options: api.RunOptions = kwargs["options"]
    assert (options.output_dir, options.concurrency, options.use_cache, options.batch_size) == (
        Path("out"),
        2,
        False,
        4,
    )
    limits: api.SpecLimits = kwargs["limits"]
    assert limits.max_runs == 50 and limits.template.max_steps == 999
    # What it printed is the API's result: the same runs, written where the API says.
    result = api.run(spec, suite="mine", models=["simple/echo"], limit=3, options=options, limits=limits)
    assert [r.status for r in result.runs] == ["skipped", "skipped"]
    for outcome in result.runs:
        assert outcome.headline is not None and outcome.headline.text() in printed
    assert f"results: {result.suite_dir}/suite.json" in printed


def test_helm_run_plan_and_fetch_only_are_one_call_each(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_spec(tmp_path)
    plans, fetches, runs = spy(monkeypatch, "plan"), spy(monkeypatch, "fetch"), spy(monkeypatch, "run")
    assert helm_run([str(spec), "--plan", "--scenarios", "arith*", "--max-eval-instances", "2"]) == 0
    ((args, kwargs),) = plans
    assert args == (spec,) and kwargs["scenarios"] == ["arith*"] and kwargs["max_eval_instances"] == 2
    assert kwargs["calibrate"] is False
    assert capsys.readouterr().out == api.plan(spec, scenarios=["arith*"], max_eval_instances=2).text + "\n"
    assert helm_run([str(spec), "--fetch-only"]) == 0
    assert len(fetches) == 1 and fetches[0][0] == (spec,)
    assert "nothing to fetch: these runs read no data files" in capsys.readouterr().out
    assert not runs and not (tmp_path / "output").exists()


def test_helm_summarize_is_one_summarize_call(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    api.run(write_spec(tmp_path), output_dir="out")
    calls = spy(monkeypatch, "summarize")
    argv = ["--suite", "tiny", "--output-dir", "out", "--no-site", "--num-bootstrap", "20", "--seed", "3",
            "--judge-threshold", "0.4", "--jobs", "1", "--local-dir", "local"]  # fmt: skip
    assert helm_summarize(argv) == 0
    ((args, kwargs),) = calls
    assert args == ("tiny",) and kwargs["output_dir"] == "out" and kwargs["site"] is False
    assert kwargs["local_dir"] == Path("local") and kwargs["previous"] is None
    assert kwargs["options"] == api.SummarizeOptions(num_bootstrap=20, seed=3, judge_threshold=0.4, jobs=1)
    assert (tmp_path / "local" / "tiny" / "summary" / "summary.json").is_file()


def test_helm_diff_is_one_diff_call(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    api.run(write_spec(tmp_path), output_dir="a")
    api.run(write_spec(tmp_path), output_dir="b")
    calls = spy(monkeypatch, "diff")
    assert helm_diff(["a", "b", "--suite", "tiny", "--num-bootstrap", "50", "--seed", "2", "-o", "d.json",
                      "--format", "json"]) == 0  # fmt: skip
    ((args, kwargs),) = calls
    assert args == (Path("a"), Path("b"))
    assert kwargs == {"old_suite": "tiny", "new_suite": "tiny", "seed": 2, "num_bootstrap": 50}
    assert (tmp_path / "d.json").read_text(encoding="utf-8").startswith("{")


def test_helm_ratings_is_one_call_per_subcommand(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    exports = spy(monkeypatch, "export_ratings", lambda *a, **k: 7)
    stored = api.RatingsImport(ratings=3, instances=2, folder=tmp_path / "out" / "s" / "ratings")
    imports = spy(monkeypatch, "import_ratings", lambda *a, **k: stored)
    assert helm_ratings(["export", "--suite", "s", "--output-dir", "out", "items.csv"]) == 0
    assert exports == [(("s", Path("items.csv")), {"output_dir": "out"})]
    assert helm_ratings(["import", "--suite", "s", "a.csv", "b.jsonl"]) == 0
    assert imports == [(("s", [Path("a.csv"), Path("b.jsonl")]), {"output_dir": "output"})]


def test_helm_import_is_one_import_call(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    calls = spy(monkeypatch, "import_helm", lambda *a, **k: [])
    argv = ["helm_runs", "--suite", "imported", "--output-dir", "out", "--force", "--model", "a/b=simple/echo",
            "--helm-version", "0.5.16", "--keep-unknown-stats"]  # fmt: skip
    assert helm_import(argv) == 0
    ((args, kwargs),) = calls
    assert args == (Path("helm_runs"), "imported")
    on_run = kwargs.pop("on_run")
    assert callable(on_run)
    assert kwargs == {"output_dir": Path("out"), "force": True, "keep_unknown_stats": True,
                      "models": {"a/b": "simple/echo"}, "helm_version": "0.5.16"}  # fmt: skip
    assert "imported 0 HELM runs into out/imported" in capsys.readouterr().out


def test_the_agreement_check_is_one_call(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    table = AgreementTable(names=("x/a", "x/b"), rows=(), tolerance=0.5)
    checked = api.ModelCheck(table=table, scoring=(("x/b", {"status": "shifted", "detail": "by one"}),))
    calls = spy(monkeypatch, "check_models", lambda *a, **k: checked)
    assert check_main(["x/a", "x/b", "--tolerance", "0.5", "--models-file", "m.yaml"]) == 0
    assert calls == [((["x/a", "x/b"],), {"models_file": Path("m.yaml"), "tolerance": 0.5})]
    out = capsys.readouterr().out
    assert out.startswith("x/b: echo log-probabilities shifted: by one\n") and table.format() in out
