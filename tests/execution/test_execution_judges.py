"""The annotation stage end to end through helm-run: verdicts, cache, failures, re-judging."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from holistic.cli.diff import main as diff_main
from holistic.cli.run import main as run_main
from tests.cli.helm_run_helpers import call_log
from tests.execution.judge_fixture import (
    EXPECTED,
    REGEX_RULE,
    calls_by_model,
    judge_entry,
    write_suite,
)

__all__ = ["call_log"]  # a fixture


def _run(spec: Path, out: Path) -> int:
    return run_main([str(spec), "--output-dir", str(out), "--models-file", str(spec.parent / "models.yaml"), "--quiet"])


def _only_run(suite_dir: Path) -> Path:
    runs = sorted(p for p in (suite_dir / "runs").iterdir() if p.is_dir())
    assert len(runs) == 1, runs
    return runs[0]


def _annotations(run_dir: Path) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = pq.read_table(run_dir / "annotations.parquet").to_pylist()
    return rows


def _stat_means(run_dir: Path) -> dict[tuple[str, str | None], float]:
    rows = pq.read_table(run_dir / "stats.parquet").to_pylist()
    return {(r["metric"], r["sub_split"]): r["mean"] for r in rows if r["perturbation"] is None}


def test_a_judge_scores_every_generation_and_records_judge_prompt_and_rule(tmp_path: Path, call_log: Path) -> None:
    spec = write_suite(tmp_path, [judge_entry("simple/echo", extra=", name: echo-judge")])
    assert _run(spec, tmp_path / "out") == 0
    run_dir = _only_run(tmp_path / "out" / "judged")
    rows = _annotations(run_dir)
    assert {r["instance_id"]: r["score"] for r in rows} == EXPECTED
    assert {r["status"] for r in rows} == {"ok"}
    assert {r["judge"] for r in rows} == {"echo-judge"}
    assert {r["judge_model"] for r in rows} == {"simple/echo"}
    spec_doc = json.loads((run_dir / "run_spec.json").read_text(encoding="utf-8"))
    (judge,) = spec_doc["judges"]
    assert {r["prompt_sha256"] for r in rows} == {judge["prompt_sha256"]}
    assert json.loads(str(rows[0]["rule"])) == {"kind": "regex", "patterns": ["(?P<score>[01])"], "score": "score"}
    assert "Verdict: 1" in str(next(r for r in rows if r["instance_id"] == "r1")["prompt"])
    means = _stat_means(run_dir)
    assert means[("judge_score", None)] == pytest.approx(0.5)
    assert means[("judge_score", "judge=echo-judge")] == pytest.approx(0.5)


def test_rejudging_with_another_judge_makes_no_call_to_the_evaluated_model(tmp_path: Path, call_log: Path) -> None:
    out = tmp_path / "out"
    first = write_suite(tmp_path, [judge_entry("simple/echo")])
    assert _run(first, out) == 0
    calls = calls_by_model(call_log)
    assert calls["simple/candidate"] == 4 and calls["simple/echo"] == 4

    call_log.unlink()
    second = write_suite(tmp_path, [judge_entry("simple/no-logprobs")], name="spec2.yaml")
    assert _run(second, out) == 0
    calls = calls_by_model(call_log)
    assert calls["simple/candidate"] == 0, calls  # the evaluated model's answers all come from the cache
    assert calls["simple/no-logprobs"] == 4
    judged = [p for p in (out / "judged" / "runs").iterdir() if p.is_dir()]
    assert len(judged) == 2  # another judge is another protocol: its own run

    call_log.unlink()
    assert _run(second, out) == 0  # the same judge again: the run is complete, nothing is asked
    assert sum(calls_by_model(call_log).values()) == 0


def test_several_judges_each_score_and_their_mean_is_the_headline(tmp_path: Path, call_log: Path) -> None:
    always_one = judge_entry("simple/no-logprobs", template="Verdict: 1")
    spec = write_suite(tmp_path, [judge_entry("simple/echo"), always_one])
    assert _run(spec, tmp_path / "out") == 0
    means = _stat_means(_only_run(tmp_path / "out" / "judged"))
    assert means[("judge_score", "judge=simple/echo")] == pytest.approx(0.5)
    assert means[("judge_score", "judge=simple/no-logprobs")] == pytest.approx(1.0)
    assert means[("judge_score", None)] == pytest.approx(0.75)


def test_an_unparseable_verdict_is_retried_then_recorded_and_counted_in_the_error_rate(
    tmp_path: Path, call_log: Path
) -> None:
    # r1's verdict reads (1); the other three answer "maybe", which the rule cannot read.
    template = "Verdict: {% if instance_id == 'r1' %}1{% else %}maybe{% endif %}"
    spec = write_suite(tmp_path, [judge_entry("simple/echo", template=template, extra=", retries: 2")])
    assert _run(spec, tmp_path / "out") == 0  # recorded, not failed: the run is complete
    run_dir = _only_run(tmp_path / "out" / "judged")
    rows = {str(r["instance_id"]): r for r in _annotations(run_dir)}
    assert len(rows) == 4  # never dropped
    assert rows["r1"]["status"] == "ok" and rows["r1"]["score"] == 1.0
    unread = [rows[i] for i in ("r2", "r3", "r4")]
    assert {r["status"] for r in unread} == {"unparseable"}
    assert {r["attempts"] for r in unread} == {3}
    assert {r["score"] for r in unread} == {None}  # never guessed
    assert {r["verdict"] for r in unread} == {" maybe"}
    assert calls_by_model(call_log)["simple/echo"] == 4  # two prompts; "maybe" asked three times (fresh keys)
    assert _stat_means(run_dir)[("judge_score", None)] == pytest.approx(1.0)
    suite = json.loads((tmp_path / "out" / "judged" / "suite.json").read_text(encoding="utf-8"))
    (entry,) = suite["runs"]
    assert entry["status"] == "complete"
    assert entry["error_rate"] == pytest.approx(3 / 8)  # 4 candidate requests + 4 verdicts, 3 unparseable

    call_log.unlink()
    assert _run(spec, tmp_path / "out") == 0  # complete: nothing is asked again
    assert sum(calls_by_model(call_log).values()) == 0


def test_a_judge_none_of_whose_verdicts_reads_makes_the_run_partial_and_nothing_unreadable_is_cached(
    tmp_path: Path, call_log: Path
) -> None:
    spec = write_suite(tmp_path, [judge_entry("simple/echo", template="Verdict: maybe", extra=", retries: 2")])
    assert _run(spec, tmp_path / "out") == 3  # partial: the judged metric measured nothing
    run_dir = _only_run(tmp_path / "out" / "judged")
    assert (run_dir / "_PARTIAL").exists() and not (run_dir / "_COMPLETE").exists()
    rows = _annotations(run_dir)
    assert len(rows) == 4 and {r["status"] for r in rows} == {"failed"}
    assert {r["attempts"] for r in rows} == {3}
    assert all("no verdict of judge 'simple/echo' could be read" in str(r["error"]) for r in rows)
    assert all("does not match" in str(r["error"]) for r in rows)  # and why this one could not
    artifacts = json.loads((run_dir / "artifacts.json").read_text(encoding="utf-8"))
    assert artifacts["execution"]["judge_unreadable"] == ["simple/echo"]
    assert calls_by_model(call_log)["simple/echo"] == 3

    call_log.unlink()
    assert _run(spec, tmp_path / "out") == 3  # the rerun asks the judge again: no unreadable answer was cached
    assert calls_by_model(call_log) == {"simple/echo": 3}


def test_a_judge_that_answers_nothing_makes_the_run_partial_and_is_retried_on_rerun(
    tmp_path: Path, call_log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = write_suite(tmp_path, [judge_entry("simple/echo")])
    monkeypatch.setenv("HOLISTIC_SIMPLE_FAIL_MODEL", "simple/echo")
    assert _run(spec, tmp_path / "out") == 3
    run_dir = _only_run(tmp_path / "out" / "judged")
    assert (run_dir / "_PARTIAL").exists() and not (run_dir / "_COMPLETE").exists()
    rows = _annotations(run_dir)
    assert {r["status"] for r in rows} == {"failed"} and len(rows) == 4
    assert all("injected failure" in str(r["error"]) for r in rows)

    monkeypatch.delenv("HOLISTIC_SIMPLE_FAIL_MODEL")
    call_log.unlink()
    assert _run(spec, tmp_path / "out") == 0
    assert (run_dir / "_COMPLETE").exists()
    calls = calls_by_model(call_log)
    assert calls["simple/candidate"] == 0 and calls["simple/echo"] == 4
    assert {r["status"] for r in _annotations(run_dir)} == {"ok"}


def test_helm_diff_calls_a_change_of_judge_a_change_of_protocol(
    tmp_path: Path, call_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = write_suite(tmp_path, [judge_entry("simple/echo")], suite="old")
    new = write_suite(tmp_path, [judge_entry("simple/no-logprobs")], suite="new", name="spec2.yaml")
    assert _run(old, tmp_path / "out") == 0
    assert _run(new, tmp_path / "out") == 0
    capsys.readouterr()
    report = tmp_path / "diff.json"
    code = diff_main(
        [str(tmp_path / "out" / "old"), str(tmp_path / "out" / "new"), "--format", "json", "-o", str(report)]
    )
    assert code in (0, 1)
    (run,) = json.loads(report.read_text(encoding="utf-8"))["runs"]
    assert run["comparable"] is False
    assert "judge changed (simple/echo -> simple/no-logprobs)" in run["causes"]


def test_a_new_prompt_version_is_also_a_change_of_protocol(tmp_path: Path, call_log: Path) -> None:
    from holistic.diff.compare import judge_changes

    old = {"judges": [{"name": "j", "model": "m", "prompt_sha256": "a" * 64, "rule": {"kind": "regex"}}]}
    new = {"judges": [{"name": "j", "model": "m", "prompt_sha256": "b" * 64, "rule": {"kind": "json"}}]}
    causes = judge_changes(old, new)
    assert any(c.startswith("judge prompt changed for m") for c in causes)
    assert "judge verdict rule changed for m" in causes
    assert judge_changes(old, old) == []


@pytest.mark.parametrize(
    ("judge", "needle"),
    [
        ("simple/ech", "unknown model 'simple/ech'; did you mean 'simple/echo'"),
        (judge_entry("simple/echo", template="Verdict: {{ metadata.lable }}"), "metadata.lable"),
        (judge_entry("simple/echo", template="Verdict: {{ answer }}"), "refers to 'answer'"),
        (judge_entry("simple/echo", rule="{regex: '(?P<score>[01', score: score}"), "invalid regular expression"),
        (judge_entry("simple/echo", rule="{regex: '[01]', score: score}"), "has no named group"),
        (judge_entry("simple/echo", rule="{regex: '(?P<s>[01])', score: score}"), "not a named group"),
        (judge_entry("simple/echo", rule="{json_schema: {type: 12}, score: score}"), "invalid JSON schema"),
        ("simple/echo", "has no judge prompt of its own"),
    ],
)
def test_a_bad_judge_is_an_error_at_compile_time_naming_file_and_line(
    tmp_path: Path, call_log: Path, capsys: pytest.CaptureFixture[str], judge: str, needle: str
) -> None:
    spec = write_suite(tmp_path, [judge])
    assert _run(spec, tmp_path / "out") == 2
    err = capsys.readouterr().err
    assert f"{spec}:11:" in err, err  # the judge's line in the spec
    assert needle in err, err
    assert not call_log.exists()  # nothing ran


def test_the_metadata_a_scenario_declares_is_what_a_judge_may_use(tmp_path: Path, call_log: Path) -> None:
    template = "Verdict: {% if metadata.label == 'safe' %}1{% else %}0{% endif %}"
    spec = write_suite(tmp_path, [judge_entry("simple/echo", template=template, rule=REGEX_RULE)])
    assert _run(spec, tmp_path / "out") == 0
    rows = _annotations(_only_run(tmp_path / "out" / "judged"))
    assert {r["instance_id"]: r["score"] for r in rows} == EXPECTED
