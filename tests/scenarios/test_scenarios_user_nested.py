"""A public multiple-choice dataset in its authors' own JSONL, from YAML alone: nested
fields, answer keys as the data writes them (letters and digits), every accuracy from one
run, the chosen choice stored; and the errors a user meets on the way."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from holistic.cli.run import main
from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioContext
from holistic.core.types import Instance, ScenarioSpec
from holistic.scenarios.registry import create_scenario
from tests.scenarios.arc_fixture import ARC, ARC_SPEC

ARC_FIELDS = {
    "id": "id",
    "input": "question.stem",
    "choices": "question.choices[*].text",
    "choice_labels": "question.choices[*].label",
    "label": "answerKey",
}
CTX = ScenarioContext(offline=True)


def _load(**args: object) -> list[Instance]:
    return create_scenario(ScenarioSpec.make("file", {"path": str(ARC), **args})).get_instances(CTX)


def test_nested_fields_and_mixed_letter_and_digit_keys_give_the_right_gold_answers() -> None:
    instances = _load(fields=ARC_FIELDS)
    assert len(instances) == 34
    by_id = {i.id: i for i in instances}
    first = by_id["Mercury_7220990"]
    assert first.input == "Which factor will most likely cause a person to develop a fever?"
    assert [r.output for r in first.references][1] == "a bacterial population in the bloodstream"
    assert [r.output for r in first.correct_references] == ["a bacterial population in the bloodstream"]
    # Digit keys name the choice labelled "1".."4" (1-based): the old 0-based reading picked
    # "the minerals they contain" here and "nuclear" for the next one, silently.
    assert [r.output for r in by_id["NYSEDREGENTS_2006_8_10"].correct_references] == ["how they formed"]
    assert [r.output for r in by_id["NYSEDREGENTS_2011_8_4"].correct_references] == ["chemical"]
    assert [r.output for r in by_id["NYSEDREGENTS_2005_8_9"].correct_references] == ["magnet"]
    assert all(len(i.correct_references) == 1 and len(i.references) == 4 for i in instances)


def test_answer_keys_are_never_guessed() -> None:
    fields = {k: v for k, v in ARC_FIELDS.items() if k != "choice_labels"}
    with pytest.raises(
        DataSourceError, match=r"arc_easy_train_head\.jsonl:5: answer key '3' is a number.*index0.*index1"
    ):
        _load(fields=fields)
    with pytest.raises(DataSourceError, match=r"arc_easy_train_head\.jsonl:5: answer key '3' is not a letter"):
        _load(fields=fields, label_format="letter")
    with pytest.raises(ValueError, match="label_format 'index2' is not one of index0, index1, letter, text"):
        _load(fields=fields, label_format="index2")


def test_a_missing_nested_field_names_the_line_and_the_nearest_key() -> None:
    fields = {**ARC_FIELDS, "input": "question.stm"}
    with pytest.raises(DataSourceError, match=r":1: no field 'question.stm'; did you mean 'question.stem'\?"):
        _load(fields=fields)
    fields = {**ARC_FIELDS, "choices": "question.choices.text"}
    with pytest.raises(DataSourceError, match=r"question.choices is a list; write question.choices\[\*\]\.text"):
        _load(fields=fields)


def test_templates_read_nested_objects() -> None:
    instances = _load(
        fields={k: v for k, v in ARC_FIELDS.items() if k != "input"},
        template="{{ question.stem }} ({{ question.choices | length }} options)",
    )
    assert instances[0].input.endswith("develop a fever? (4 options)")


def test_split_names_map_dev_to_the_in_context_pool(tmp_path: Path) -> None:
    path = tmp_path / "mmlu_like.jsonl"
    rows = [{"q": f"q{i}", "a": "x", "s": s} for i, s in enumerate(["dev", "dev", "test", "val", "few_shot"])]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    fields = {"input": "q", "output": "a", "split": "s"}
    splits = [
        i.split
        for i in create_scenario(ScenarioSpec.make("file", {"path": str(path), "fields": fields})).get_instances(CTX)
    ]
    assert splits == ["train", "train", "test", "valid", "train"]
    remapped = create_scenario(
        ScenarioSpec.make("file", {"path": str(path), "fields": fields, "split_map": {"dev": "test"}})
    ).get_instances(CTX)
    assert [i.split for i in remapped] == ["test", "test", "test", "valid", "train"]


def _spec(folder: Path, body: str) -> Path:
    spec = folder / "spec.yaml"
    spec.write_text(body, encoding="utf-8")
    return spec


def test_one_run_reports_raw_and_normalised_accuracy_and_stores_the_chosen_index(tmp_path: Path) -> None:
    spec = _spec(tmp_path, ARC_SPEC)
    assert main([str(spec), "--output-dir", str(tmp_path / "out"), "--quiet"]) == 0
    (run_dir,) = (tmp_path / "out" / "arc" / "runs").iterdir()
    pis = pq.read_table(run_dir / "per_instance_stats.parquet").to_pylist()
    requests = pq.read_table(run_dir / "requests.parquet").to_pylist()
    instances = {r["instance_id"]: r for r in pq.read_table(run_dir / "instances.parquet").to_pylist()}
    stats = {r["metric"]: r for r in pq.read_table(run_dir / "stats.parquet").to_pylist() if r["perturbation"] is None}
    run_spec = json.loads((run_dir / "run_spec.json").read_text(encoding="utf-8"))
    assert run_spec["main_metric"] == "exact_match_per_char"  # the run's length_normalization names the headline

    values: dict[tuple[str, str], float] = {(r["instance_id"], r["metric"]): r["value"] for r in pis}
    details = {r["instance_id"]: json.loads(r["details"]) for r in pis if r["metric"] == "exact_match"}
    assert len(details) == 34
    expected: dict[str, list[Any]] = {"exact_match": [], "exact_match_per_char": [], "exact_match_per_byte": []}
    for instance_id, facts in details.items():
        scored = sorted((r for r in requests if r["instance_id"] == instance_id), key=lambda r: r["reference_index"])
        refs = instances[instance_id]["references"]
        logprobs = [r["logprob"] for r in scored]
        assert facts["choice_logprobs"] == pytest.approx(logprobs)
        # lm-evaluation-harness acc_norm divides by len(choice) — the text without the space before it.
        assert facts["choice_chars"] == [len(ref["output"]) for ref in refs]
        assert [r["continuation"] for r in scored] == [" " + ref["output"] for ref in refs]
        gold = next(i for i, ref in enumerate(refs) if "correct" in ref["tags"])
        raw = max(range(4), key=lambda i: (logprobs[i], -i))
        per_char = max(range(4), key=lambda i: (logprobs[i] / len(refs[i]["output"]), -i))
        per_byte = max(range(4), key=lambda i: (logprobs[i] / len(refs[i]["output"].encode()), -i))
        assert facts["chosen_index"]["none"] == raw and facts["chosen_index"]["char"] == per_char
        assert values[(instance_id, "predicted_index")] == per_char  # the headline normalisation's pick
        for name, pick in (
            ("exact_match", raw),
            ("exact_match_per_char", per_char),
            ("exact_match_per_byte", per_byte),
        ):
            assert values[(instance_id, name)] == float(pick == gold)
            expected[name].append(float(pick == gold))
    for name, vals in expected.items():
        assert stats[name]["mean"] == pytest.approx(sum(vals) / len(vals))
    assert {"exact_match_per_token", "predicted_index"} <= set(stats)
    # The simple model scores -0.5 a character: the raw sum prefers short choices, the
    # per-character score does not, so the two accuracies really differ on this sample.
    assert not math.isclose(stats["exact_match"]["mean"], stats["exact_match_per_char"]["mean"])


def test_plan_rejects_a_field_path_the_file_does_not_have(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = _spec(tmp_path, ARC_SPEC.replace("input: question.stem", "input: question.stm"))
    assert main([str(spec), "--plan"]) == 2
    err = capsys.readouterr().err
    assert f"{spec}:9:" in err  # the line of `input: question.stm` in the spec
    assert "no field 'question.stm'; did you mean 'question.stem'?" in err
    assert "arc_easy_train_head.jsonl:1" in err


def test_plan_counts_the_rows_of_a_file_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = _spec(tmp_path, ARC_SPEC)
    assert main([str(spec), "--plan"]) == 0
    out = capsys.readouterr().out
    assert "34 eval instances" in out and "136 requests" in out


def test_limit_takes_the_first_rows_in_file_order(tmp_path: Path) -> None:
    spec = _spec(tmp_path, ARC_SPEC)
    assert main([str(spec), "--output-dir", str(tmp_path / "out"), "--quiet", "--limit", "3"]) == 0
    (run_dir,) = (tmp_path / "out" / "arc" / "runs").iterdir()
    ids = [r["instance_id"] for r in pq.read_table(run_dir / "instances.parquet").to_pylist()]
    assert ids == ["Mercury_7220990", "MCAS_2007_8_5189", "Mercury_SC_401169"]
    assert json.loads((run_dir / "run_spec.json").read_text())["adapter"]["eval_instances"] == "first"


def test_asking_for_examples_without_a_pool_fails_unless_allowed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = ARC_SPEC.replace(
        "method: multiple_choice_separate_original, max_train_instances: 0, length_normalization: char",
        "method: multiple_choice_joint, max_train_instances: 5",
    )
    spec = _spec(tmp_path, body)
    assert main([str(spec), "--output-dir", str(tmp_path / "out"), "--quiet", "--limit", "2"]) == 1
    assert "asks for 5 in-context examples" in (tmp_path / "out" / "arc" / "suite.json").read_text()
    assert main([str(spec), "--output-dir", str(tmp_path / "out2"), "--limit", "2", "--allow-zero-shot"]) == 0
    captured = capsys.readouterr()
    assert "running it ZERO-SHOT (--allow-zero-shot)" in captured.out + captured.err
    # The summary repeats it after the run, so a long log does not bury it.
    summary = captured.out.split("suite 'arc':")[-1]
    assert "WARNING " in summary and "ZERO-SHOT" in summary


def test_quiet_never_hides_the_zero_shot_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = ARC_SPEC.replace(
        "method: multiple_choice_separate_original, max_train_instances: 0, length_normalization: char",
        "method: multiple_choice_joint, max_train_instances: 5",
    )
    spec = _spec(tmp_path, body)
    argv = [str(spec), "--output-dir", str(tmp_path / "out"), "--quiet", "--limit", "2", "--allow-zero-shot"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "asks for 5 in-context examples" in captured.err
    assert "running it ZERO-SHOT (--allow-zero-shot)" in captured.err
    assert captured.out.count("\n") == 1  # --quiet's one line; the warning is on stderr
