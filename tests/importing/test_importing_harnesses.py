"""helm-import --from lm-eval | inspect on the fixtures the peers made themselves
(tests/fixtures/harnesses, see its README), and helm-summarize --export on the result."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from holistic.cli import helm_import, summarize
from holistic.importing import detect_format
from holistic.importing.eee import validation_errors

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "harnesses"
LM_EVAL = FIXTURES / "lm_eval"
INSPECT = FIXTURES / "inspect"
MODEL = "embedded/smollm2-135m-instruct"
LM_EVAL_MODEL = "models/smollm2-135m-instruct"
INSPECT_MODEL = "openai-api/local/smollm2-135m-instruct"


def _import(source: Path, out: Path, suite: str, *extra: str) -> int:
    return helm_import.main([str(source), "--suite", suite, "--output-dir", str(out), "--quiet", *extra])


def _runs(out: Path, suite: str) -> dict[str, Path]:
    return {json.loads((d / "run_spec.json").read_text())["name"]: d for d in sorted((out / suite / "runs").iterdir())}


def _table(run: Path, name: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = pq.read_table(run / f"{name}.parquet").to_pylist()
    return rows


def test_the_format_is_detected_from_the_folder() -> None:
    assert detect_format(LM_EVAL) == "lm-eval"
    assert detect_format(INSPECT) == "inspect"


def test_lm_eval_results_import_as_runs_with_every_document(tmp_path: Path) -> None:
    assert _import(LM_EVAL, tmp_path, "lm", "--model", f"{LM_EVAL_MODEL}={MODEL}") == 0
    runs = _runs(tmp_path, "lm")
    assert set(runs) == {"arc_easy_local", "arithmetic_local"}
    arc = runs["arc_easy_local"]
    spec = json.loads((arc / "run_spec.json").read_text())
    assert spec["model"] == MODEL and spec["adapter"]["method"] == "multiple_choice_separate_original"
    origin = spec["imported_from"]
    assert origin["tool"] == "lm-evaluation-harness" and origin["harness_version"] == "0.4.13"
    assert origin["model_args"] == {"pretrained": LM_EVAL_MODEL, "dtype": "float32"}
    instances = _table(arc, "instances")
    assert len(instances) == 10
    first = instances[0]
    assert first["input"].startswith("Question: ") and first["input"].endswith("\nAnswer:")
    assert [r["output"] for r in first["references"] if r["tags"] == ["correct"]] == [
        "a bacterial population in the bloodstream"
    ]
    requests = _table(arc, "requests")
    assert len(requests) == 40 and all(r["kind"] == "loglikelihood" and r["has_logprobs"] for r in requests)
    assert requests[0]["continuation"] == " a leg muscle relaxing after exercise"
    stats = {s["metric"]: s for s in _table(arc, "stats")}
    # lm-eval's own aggregate, recomputed from its per-document values, with an interval
    reported = json.loads((arc / "artifacts.json").read_text())["import"]["reported"]
    assert stats["exact_match"]["mean"] == pytest.approx(reported["acc,none"])
    assert stats["exact_match_per_char"]["mean"] == pytest.approx(reported["acc_norm,none"])
    assert stats["exact_match"]["count"] == 10 and stats["exact_match"]["ci_low"] is not None
    gen = _table(runs["arithmetic_local"], "requests")
    assert [r["kind"] for r in gen] == ["generate"] * 5 and gen[0]["stop"] == ["\n", "Question:"]
    assert gen[0]["max_tokens"] == 16 and gen[0]["completion"]


def test_inspect_logs_import_with_messages_scores_and_usage(tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai")
    assert _import(INSPECT, tmp_path, "insp", "--model", f"{INSPECT_MODEL}={MODEL}") == 0
    runs = _runs(tmp_path, "insp")
    assert set(runs) == {"arc_easy_local", "arithmetic_local"}
    arc = runs["arc_easy_local"]
    instances = {i["instance_id"]: i for i in _table(arc, "instances")}
    assert len(instances) == 10
    fever = instances["Mercury_7220990"]
    assert fever["input"] == "Which factor will most likely cause a person to develop a fever?"
    assert [r["tags"] for r in fever["references"]] == [[], ["correct"], [], []]
    requests = _table(arc, "requests")
    assert all(r["messages"] and r["messages"][0]["role"] == "user" for r in requests)
    assert all(r["prompt_tokens"] > 0 and r["completion_tokens"] > 0 for r in requests)
    stats = {s["metric"]: s for s in _table(arc, "stats")}
    reported = json.loads((arc / "artifacts.json").read_text())["import"]["reported"]
    assert stats["choice"]["mean"] == pytest.approx(reported["choice.accuracy"])
    match = {s["metric"]: s for s in _table(runs["arithmetic_local"], "stats")}["match"]
    assert match["count"] == 5
    spec = json.loads((arc / "run_spec.json").read_text())
    assert spec["imported_from"]["harness_version"] and spec["main_metric"] == "choice"


def _stats_by_run(out: Path, suite: str) -> dict[tuple[str, str], dict[str, dict[str, Any]]]:
    """(run name, model) -> metric -> its stats row."""
    found = {}
    for run in (out / suite / "runs").iterdir():
        spec = json.loads((run / "run_spec.json").read_text())
        found[(spec["name"], spec["model"])] = {s["metric"]: s for s in _table(run, "stats")}
    return found


def test_an_exported_suite_validates_and_imports_back_with_the_same_stats(tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai")
    out = tmp_path / "out"
    assert _import(LM_EVAL, out, "mixed", "--model", f"{LM_EVAL_MODEL}={MODEL}") == 0
    assert _import(INSPECT, out, "mixed", "--force") == 0
    export = tmp_path / "eee"
    hf = tmp_path / "hf"
    argv = ["--suite", "mixed", "--output-dir", str(out), "--no-site"]
    assert (
        summarize.main([*argv, "--export", "every-eval-ever", str(export), "--export", "hf-eval-results", str(hf)]) == 0
    )
    aggregates = sorted(p for p in export.rglob("*.json"))
    assert len(aggregates) == 4
    for path in aggregates:
        doc = json.loads(path.read_text())
        assert validation_errors(doc, "aggregate") == []
        samples = export / doc["detailed_evaluation_results"]["file_path"]
        lines = [json.loads(line) for line in samples.read_text().splitlines()]
        assert lines and all(validation_errors(line, "instance") == [] for line in lines)
    assert detect_format(export) == "every-eval-ever"
    assert _import(export, out, "back") == 0
    before, after = _stats_by_run(out, "mixed"), _stats_by_run(out, "back")
    assert set(before) == set(after)
    keys = ("count", "sum", "sum_sq", "min", "max", "mean", "stddev", "ci_low", "ci_high")
    for name, metrics in before.items():
        assert set(metrics) == set(after[name])
        for metric, row in metrics.items():
            assert {k: row[k] for k in keys} == pytest.approx({k: after[name][metric][k] for k in keys}), (name, metric)
    yamls = sorted(hf.rglob("*.yaml"))
    assert yamls and all(p.parent.name == ".eval_results" for p in yamls)


def test_an_export_format_that_does_not_exist_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(LM_EVAL, tmp_path / "src")
    assert _import(tmp_path / "src", tmp_path, "s") == 0
    code = summarize.main(["--suite", "s", "--output-dir", str(tmp_path), "--no-site", "--export", "csv", "x"])
    assert code == 2 and "every-eval-ever, hf-eval-results" in capsys.readouterr().err


def test_the_site_browses_imported_instances(tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai")
    assert _import(LM_EVAL, tmp_path, "both") == 0
    assert _import(INSPECT, tmp_path, "both", "--force") == 0
    assert summarize.main(["--suite", "both", "--output-dir", str(tmp_path)]) == 0
    site = tmp_path / "both" / "site"
    for run in _runs(tmp_path, "both").values():
        chunks = list((site / "data" / run.name).glob("chunk_*.js"))
        assert chunks, run.name
        text = "".join(c.read_text(encoding="utf-8") for c in chunks)
        assert "What is 2 plus 3?" in text or "develop a fever" in text
        assert (site / "runs" / f"{run.name}.html").is_file()


def test_helm_import_from_another_harness_is_one_api_call(monkeypatch: pytest.MonkeyPatch) -> None:
    from holistic import api

    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    def spy(*a: Any, **k: Any) -> list[Any]:
        calls.append((a, k))
        return []

    monkeypatch.setattr(api, "import_results", spy)
    argv = [str(LM_EVAL), "--suite", "s", "--output-dir", "out", "--model", "a=b"]
    assert helm_import.main(argv) == 0
    ((args, kwargs),) = calls
    kwargs.pop("on_run")
    assert args == (LM_EVAL, "s") and kwargs == {
        "fmt": "lm-eval",
        "output_dir": Path("out"),
        "force": False,
        "models": {"a": "b"},
    }


def test_a_suite_name_leaving_the_output_folder_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert helm_import.main([str(LM_EVAL), "--suite", "../escape", "--output-dir", str(tmp_path / "out")]) == 2
    assert "--suite" in capsys.readouterr().err and not (tmp_path / "escape").exists()


def test_the_schemas_are_the_ones_every_eval_ever_ships() -> None:
    """The export is validated against the package's own 0.3.0 schemas: taken from its wheel (the package
    itself needs Python 3.12), or, where it is installed, from the package itself."""
    from holistic.importing import eee

    for kind in eee.SCHEMA_FILES:
        schema = json.loads(eee.schema_text(kind))
        assert schema["version"] == eee.SCHEMA_VERSION
        assert schema["$schema"].startswith("http://json-schema.org/")
    assert (eee.schema_dir() / "eval.schema.json").is_file() or importlib.util.find_spec("every_eval_ever")


def test_two_tools_runs_pair_by_content_and_unmatched_instances_are_listed(tmp_path: Path) -> None:
    """lm-eval's runs against inspect's of the same tasks: paired by their instances' content (lm-eval's
    input is its prompt around inspect's question), one sample removed from inspect's log is listed."""
    pytest.importorskip("inspect_ai")
    from holistic.cli import diff

    src = tmp_path / "inspect"
    src.mkdir()
    log = next(INSPECT.glob("*.json"))
    doc = json.loads(log.read_text())
    dropped = doc["samples"].pop()
    (src / log.name).write_text(json.dumps(doc))
    shutil.copy(next(INSPECT.glob("*.eval")), src)
    out = tmp_path / "out"
    assert _import(LM_EVAL, out, "lm", "--model", f"{LM_EVAL_MODEL}={MODEL}") == 0
    assert _import(src, out, "insp", "--model", f"{INSPECT_MODEL}={MODEL}") == 0
    report = tmp_path / "diff.json"
    assert diff.main([str(out / "lm"), str(out / "insp"), "--format", "json", "-o", str(report)]) in (0, 1)
    runs = {r["old_run_id"].split("_embedded")[0]: r for r in json.loads(report.read_text())["runs"]}
    assert set(runs) == {"lm-evaluation-harness_arc_easy_local", "lm-evaluation-harness_arithmetic_local"}
    arc = runs["lm-evaluation-harness_arc_easy_local"]
    assert arc["new_run_id"].startswith("inspect_ai_arc_easy_local")
    assert any("10 instances of the imported (old) run paired by content" in n for n in arc["notes"])
    arith = runs["lm-evaluation-harness_arithmetic_local"]
    note = next(n for n in arith["notes"] if "paired by content" in n)
    order = [json.loads(line)["id"] for line in (FIXTURES / "arithmetic.jsonl").read_text().splitlines()]
    missing = f"doc{order.index(dropped['id'])}"  # lm-eval numbers the documents in the file's order
    assert "4 instances" in note and f"1 of the old run's matched none ({missing})" in note, note
