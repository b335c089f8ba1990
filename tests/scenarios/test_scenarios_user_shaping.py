"""Datasets as their authors ship them, shaped in YAML alone: a label file beside the
questions (PIQA), choices inside one string (OpenBookQA's TSV), a choice list built
from a column and a split list (TruthfulQA MC1), per-choice contexts scored partially
(WinoGrande), and a group field that keeps the overall score."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from holistic.cli.run import main
from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioContext
from holistic.core.types import Instance, ScenarioSpec
from holistic.scenarios.registry import create_scenario
from holistic.summarize import summarize_suite
from tests.support.data import find_data_root, skip_without_data

REPO = Path(__file__).resolve().parents[2]
CTX = ScenarioContext(offline=True)


def _load(**args: object) -> list[Instance]:
    return create_scenario(ScenarioSpec.make("file", args)).get_instances(CTX)


def _gold(instance: Instance) -> str:
    (correct,) = instance.correct_references
    return correct.output


def _data_root() -> Path | None:
    return find_data_root()


# --- PIQA: labels in a second file, one per line -----------------------------------

PIQA = [
    {"goal": "To keep bread fresh longer,", "sol1": "store it in the oven.", "sol2": "store it in a bread box."},
    {"goal": "How do you dry wet shoes?", "sol1": "Stuff them with newspaper.", "sol2": "Fill them with water."},
    {"goal": "To cool soup quickly,", "sol1": "put the pot in an ice bath.", "sol2": "cover it with a blanket."},
]
PIQA_LABELS = ["1", "0", "0"]


def _write_piqa(folder: Path, labels: list[str] = PIQA_LABELS) -> tuple[Path, Path]:
    questions = folder / "valid.jsonl"
    questions.write_text("".join(json.dumps(row) + "\n" for row in PIQA), encoding="utf-8")
    label_file = folder / "valid-labels.lst"
    label_file.write_text("".join(f"{label}\n" for label in labels), encoding="utf-8")
    return questions, label_file


def test_piqa_reads_its_labels_from_the_separate_label_file(tmp_path: Path) -> None:
    questions, label_file = _write_piqa(tmp_path)
    instances = _load(
        path=str(questions),
        join=[{"path": str(label_file), "column": "label"}],
        fields={"input": "goal", "choices": ["sol1", "sol2"], "label": "label"},
        label_format="index0",
    )
    assert [_gold(i) for i in instances] == [
        "store it in a bread box.",
        "Stuff them with newspaper.",
        "put the pot in an ice bath.",
    ]
    assert [r.output for r in instances[0].references] == [
        "store it in the oven.",
        "store it in a bread box.",
    ]


def test_a_label_file_of_the_wrong_length_names_both_counts(tmp_path: Path) -> None:
    questions, label_file = _write_piqa(tmp_path, labels=["1", "0"])
    with pytest.raises(
        DataSourceError, match=r"valid-labels.lst: has 2 rows, but the file it is joined to by line has 3"
    ):
        _load(
            path=str(questions),
            join=[{"path": str(label_file), "column": "label"}],
            fields={"input": "goal", "choices": ["sol1", "sol2"], "label": "label"},
            label_format="index0",
        )


def test_a_table_joined_on_a_key_adds_its_columns_under_a_prefix(tmp_path: Path) -> None:
    main_file = tmp_path / "q.csv"
    main_file.write_text("qid,question\nq1,Capital of France?\nq2,Capital of Peru?\n", encoding="utf-8")
    answers = tmp_path / "a.jsonl"
    answers.write_text('{"id": "q2", "answer": "Lima"}\n{"id": "q1", "answer": "Paris"}\n', encoding="utf-8")
    instances = _load(
        path=str(main_file),
        join=[{"path": str(answers), "key": "qid", "right_key": "id", "prefix": "gold_"}],
        fields={"id": "qid", "input": "question", "output": "gold_answer"},
    )
    assert {i.id: _gold(i) for i in instances} == {"q1": "Paris", "q2": "Lima"}
    answers.write_text('{"id": "q1", "answer": "Paris"}\n', encoding="utf-8")
    with pytest.raises(DataSourceError, match=r"q.csv:3: no row of .*a.jsonl has id='q2'"):
        _load(
            path=str(main_file),
            join=[{"path": str(answers), "key": "qid", "right_key": "id", "prefix": "gold_"}],
            fields={"id": "qid", "input": "question", "output": "gold_answer"},
        )


def test_plan_checks_the_joined_column_at_the_spec_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    questions, label_file = _write_piqa(tmp_path)
    spec = tmp_path / "piqa.yaml"
    spec.write_text(
        "suite: piqa\nmodels: [simple/echo]\nruns:\n  - scenario: file\n    args:\n"
        f"      path: {questions}\n"
        f"      join: [{{path: {label_file}, column: label}}]\n"
        "      fields: {input: goal, choices: [sol1, sol2], label: lable}\n"
        "      label_format: index0\n"
        "    adaptation: {method: multiple_choice_separate_original, max_train_instances: 0}\n",
        encoding="utf-8",
    )
    assert main([str(spec), "--plan"]) == 2
    err = capsys.readouterr().err
    assert f"{spec}:8:" in err and "no column 'lable'; did you mean 'label'?" in err


# --- OpenBookQA's TSV: every choice inside one string --------------------------------

OBQA_TSV = (
    "id\tquestion\tanswerKey\n"
    "7-980\tThe sun is responsible for (A) puppies learning new tricks (B) children growing up and getting old "
    "(C) flowers wilting in a vase (D) plants sprouting, blooming and wilting\tD\n"
    "7-584\tWhen standing miles away from Mount Rushmore (A) the mountains seem very close "
    "(B) the mountains are boring (C) the mountains look the same as from up close (D) the mountains seem smaller "
    "than in photographs\tD\n"
)
OBQA_COLUMNS = {
    "parts": {"split": "question", "pattern": r"\s*\([A-D]\)\s*"},
    "options": {"split": "question", "pattern": r"\s*\([A-D]\)\s*", "skip": 1},
}


def test_openbookqa_tsv_choices_split_out_of_one_string(tmp_path: Path) -> None:
    path = tmp_path / "test.tsv"
    path.write_text(OBQA_TSV, encoding="utf-8")
    instances = _load(
        path=str(path),
        columns=OBQA_COLUMNS,
        fields={"id": "id", "input": "parts[0]", "choices": "options", "label": "answerKey"},
        label_format="letter",
    )
    first = instances[0]
    assert first.input == "The sun is responsible for"
    assert [r.output for r in first.references] == [
        "puppies learning new tricks",
        "children growing up and getting old",
        "flowers wilting in a vase",
        "plants sprouting, blooming and wilting",
    ]
    assert _gold(first) == "plants sprouting, blooming and wilting"
    assert _gold(instances[1]) == "the mountains seem smaller than in photographs"


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        ({"c": {"split": "question", "pattern": r"\(([A-D])\)"}}, r"columns.c.pattern: capturing groups"),
        ({"c": {"split": "question", "pattern": r"(?:"}}, r"columns.c.pattern: not a valid regular expression"),
        ({"c": {"split": "question", "pattern": r"x*"}}, r"columns.c.pattern: it matches the empty string"),
        ({"c": {"split": "question"}}, r"columns.c: a split needs exactly one of sep"),
        ({"c": {"concat": ["a"], "sep": ","}}, r"columns.c: 'sep' does not apply to concat"),
        ({"c": {"spilt": "question"}}, r"columns.c: unknown key 'spilt'; did you mean 'split'\?"),
    ],
)
def test_bad_column_operations_are_named(tmp_path: Path, columns: dict[str, Any], message: str) -> None:
    path = tmp_path / "test.tsv"
    path.write_text(OBQA_TSV, encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        _load(path=str(path), columns=columns, fields={"input": "question", "output": "answerKey"})


# --- TruthfulQA MC1 from the authors' CSV --------------------------------------------

MC1_ARGS: dict[str, Any] = {
    "columns": {
        "incorrect": {"split": "Incorrect Answers", "sep": "; "},
        "mc1_choices": {"concat": ["Best Answer", "incorrect"]},
        "mc1_gold": {"value": 0},
    },
    "fields": {"input": "Question", "choices": "mc1_choices", "label": "mc1_gold"},
    "label_format": "index0",
}


@pytest.mark.needs_data
def test_truthfulqa_mc1_from_its_csv_puts_the_best_answer_first() -> None:
    root = _data_root()
    csv_path = root / "truthful_qa" / "TruthfulQA.csv" if root else None
    if csv_path is None or not csv_path.is_file():
        skip_without_data("truthful_qa/TruthfulQA.csv")
    instances = _load(path=str(csv_path), **MC1_ARGS)
    with csv_path.open(encoding="utf-8-sig", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(instances) == len(rows) == 817
    for instance, row in zip(instances, rows, strict=True):
        assert instance.input == row["Question"]
        incorrect = [a.strip() for a in row["Incorrect Answers"].split("; ") if a.strip()]
        assert [r.output for r in instance.references] == [row["Best Answer"], *incorrect]
        assert _gold(instance) == row["Best Answer"]


# --- WinoGrande: each choice its own context, one continuation scored -----------------

WINOGRANDE = [
    {
        "qID": "3QHITW7OYO7Q6B6ISU2UMJB84ZLAQE-2",
        "sentence": "The trophy doesn't fit into the brown suitcase because the _ is too large.",
        "option1": "trophy",
        "option2": "suitcase",
        "answer": "1",
    },
    {
        "qID": "3XWUWJ18TLO2DDRXF83QWLKRJ29UU4-1",
        "sentence": "Sarah was a much better surgeon than Maria so _ always got the harder cases.",
        "option1": "Sarah",
        "option2": "Maria",
        "answer": "1",
    },
    {
        "qID": "3D5G8J4N5CI2K40F4RZLF9OG2CKVTH-2",
        "sentence": "I poured water from the bottle into the cup until the _ was empty.",
        "option1": "bottle",
        "option2": "cup",
        "answer": "1",
    },
]
WINOGRANDE_SPEC = """\
suite: winogrande
models: [simple/echo]
runs:
  - scenario: file
    args:
      path: {path}
      columns:
        context1: {{template: "{{{{ sentence.split('_', 1)[0] }}}}{{{{ option1 }}}}"}}
        context2: {{template: "{{{{ sentence.split('_', 1)[0] }}}}{{{{ option2 }}}}"}}
        rest: {{template: "{{{{ sentence.split('_', 1)[1] | trim }}}}"}}
      fields: {{id: qID, input: sentence, choices: [context1, context2], continuation: rest, label: answer}}
      label_format: index1
    adaptation: {{max_train_instances: 0{method}}}
    metrics: [accuracy]
"""


def _winogrande_spec(folder: Path, method: str = "") -> Path:
    data = folder / "dev.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in WINOGRANDE), encoding="utf-8")
    spec = folder / "winogrande.yaml"
    spec.write_text(WINOGRANDE_SPEC.format(path=data, method=method), encoding="utf-8")
    return spec


def test_winogrande_scores_the_shared_continuation_after_each_choice(tmp_path: Path) -> None:
    spec = _winogrande_spec(tmp_path)
    assert main([str(spec), "--output-dir", str(tmp_path / "out"), "--quiet"]) == 0
    (run_dir,) = (tmp_path / "out" / "winogrande" / "runs").iterdir()
    requests = pq.read_table(run_dir / "requests.parquet").to_pylist()
    values = {
        (r["instance_id"], r["metric"]): r["value"]
        for r in pq.read_table(run_dir / "per_instance_stats.parquet").to_pylist()
    }
    stored = {r["instance_id"]: r for r in pq.read_table(run_dir / "instances.parquet").to_pylist()}
    correct = []
    for doc in WINOGRANDE:
        # lm-evaluation-harness's winogrande: context = the sentence up to the blank with the
        # option in it; the continuation is the rest of the sentence, after one space.
        cut = doc["sentence"].index("_")
        contexts = [doc["sentence"][:cut] + doc[key] for key in ("option1", "option2")]
        target = " " + doc["sentence"][cut + 1 :].strip()
        mine = sorted((r for r in requests if r["instance_id"] == doc["qID"]), key=lambda r: r["reference_index"])
        assert [r["kind"] for r in mine] == ["loglikelihood", "loglikelihood"]
        assert [r["prompt"] for r in mine] == contexts
        assert [r["continuation"] for r in mine] == [target, target]
        assert stored[doc["qID"]]["continuation"] == target.strip()
        pick = max(range(2), key=lambda i: (mine[i]["logprob"], -i))
        gold = int(doc["answer"]) - 1
        assert values[(doc["qID"], "exact_match")] == float(pick == gold)
        # one shared continuation: every length normalisation picks as the raw sum does
        assert values[(doc["qID"], "exact_match_per_char")] == values[(doc["qID"], "exact_match")]
        correct.append(float(pick == gold))
    stats = {r["metric"]: r for r in pq.read_table(run_dir / "stats.parquet").to_pylist() if r["perturbation"] is None}
    assert stats["exact_match"]["mean"] == pytest.approx(sum(correct) / len(correct))


def test_partial_scoring_with_a_generation_method_is_an_error_at_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = _winogrande_spec(tmp_path, method=", method: multiple_choice_joint")
    assert main([str(spec), "--plan"]) == 2
    err = capsys.readouterr().err
    assert f"{spec}:11:" in err and "needs method multiple_choice_separate_original, not multiple_choice_joint" in err


# --- a group field keeps the overall score -------------------------------------------


def test_sub_split_keeps_the_overall_score_beside_each_group(tmp_path: Path) -> None:
    data = tmp_path / "qa.jsonl"
    rows = [
        {"q": f"{a} + {b}", "a": str(a + b), "kind": "small" if a < 5 else "large"}
        for a, b in [(1, 2), (2, 2), (7, 8), (9, 9), (3, 1), (6, 6)]
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    spec = tmp_path / "groups.yaml"
    spec.write_text(
        "suite: groups\nmodels: [simple/echo]\nruns:\n  - scenario: file\n    args:\n"
        f"      path: {data}\n"
        "      fields: {input: q, output: a, sub_split: kind}\n"
        "    adaptation: {max_train_instances: 0}\n"
        "    metrics: [accuracy]\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    assert main([str(spec), "--output-dir", str(out), "--quiet"]) == 0
    (run_dir,) = (out / "groups" / "runs").iterdir()
    stats = [r for r in pq.read_table(run_dir / "stats.parquet").to_pylist() if r["metric"] == "exact_match"]
    by_group = {r["sub_split"]: r for r in stats if r["perturbation"] is None}
    assert set(by_group) == {None, "small", "large"}
    assert (by_group[None]["count"], by_group["small"]["count"], by_group["large"]["count"]) == (6, 3, 3)
    pis = [r for r in pq.read_table(run_dir / "per_instance_stats.parquet").to_pylist() if r["metric"] == "exact_match"]
    assert by_group[None]["mean"] == pytest.approx(sum(r["value"] for r in pis) / len(pis))
    summary = summarize_suite(out / "groups", num_bootstrap=20)
    assert summary.leaderboards["accuracy"].models == ("simple/echo",)  # the overall row ranks the model


def test_the_builtin_openbookqa_reads_the_authors_tsv_as_it_reads_their_jsonl(tmp_path: Path) -> None:
    tsv_root, jsonl_root = tmp_path / "tsv", tmp_path / "jsonl"
    (tsv_root / "openbookqa").mkdir(parents=True)
    (jsonl_root / "openbookqa").mkdir(parents=True)
    for name in ("train", "test"):
        body = OBQA_TSV.replace("\n7-", f"\n{name}-7-")  # ids are unique across the splits
        (tsv_root / "openbookqa" / f"{name}.tsv").write_text(body if name == "test" else body.split("\n", 1)[1])
        lines = []
        for line in body.strip().splitlines()[1:]:
            qid, question, key = line.split("\t")
            for mark in "BCD":
                question = question.replace(f"({mark})", "(A)")
            stem, *rest = [p.strip() for p in question.split("(A)")]
            choices = [{"text": t, "label": "ABCD"[i]} for i, t in enumerate(rest)]
            lines.append(json.dumps({"id": qid, "question": {"stem": stem, "choices": choices}, "answerKey": key}))
        (jsonl_root / "openbookqa" / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")

    def load(root: Path) -> list[Instance]:
        scenario = create_scenario(ScenarioSpec.make("openbookqa", {}))
        return scenario.get_instances(ScenarioContext(data_root=root, offline=True))

    from_tsv, from_jsonl = load(tsv_root), load(jsonl_root)
    assert len(from_tsv) == 4
    assert from_tsv == from_jsonl
    assert _gold(from_tsv[0]) == "plants sprouting, blooming and wilting"


@pytest.mark.needs_data
def test_piqa_openbookqa_and_truthfulqa_run_from_yaml_alone(tmp_path: Path) -> None:
    questions, label_file = _write_piqa(tmp_path)
    obqa = tmp_path / "test.tsv"
    obqa.write_text(OBQA_TSV, encoding="utf-8")
    root = _data_root()
    truthful = root / "truthful_qa" / "TruthfulQA.csv" if root else None
    runs = (
        "  - scenario: file\n    name: piqa\n    args:\n"
        f"      path: {questions}\n      join: [{{path: {label_file}, column: label}}]\n"
        "      fields: {input: goal, choices: [sol1, sol2], label: label}\n      label_format: index0\n"
        "  - scenario: file\n    name: obqa\n    args:\n"
        f"      path: {obqa}\n"
        "      columns:\n"
        "        parts: {split: question, pattern: '\\s*\\([A-D]\\)\\s*'}\n"
        "        options: {split: question, pattern: '\\s*\\([A-D]\\)\\s*', skip: 1}\n"
        "      fields: {id: id, input: 'parts[0]', choices: options, label: answerKey}\n"
    )
    if truthful is not None and truthful.is_file():
        runs += (
            "  - scenario: file\n    name: truthfulqa_mc1\n    args:\n"
            f"      path: {truthful}\n"
            "      columns:\n"
            '        incorrect: {split: Incorrect Answers, sep: "; "}\n'
            "        mc1_choices: {concat: [Best Answer, incorrect]}\n"
            "        mc1_gold: {value: 0}\n"
            "      fields: {input: Question, choices: mc1_choices, label: mc1_gold}\n"
            "      label_format: index0\n"
        )
    spec = tmp_path / "authors.yaml"
    spec.write_text(
        "suite: authors\nmodels: [simple/echo]\ndefaults:\n  max_eval_instances: 5\n  metrics: [accuracy]\n"
        "  adaptation: {method: multiple_choice_separate_original, max_train_instances: 0}\nruns:\n" + runs,
        encoding="utf-8",
    )
    assert main([str(spec), "--output-dir", str(tmp_path / "out"), "--quiet"]) == 0
    gold: dict[str, dict[str, str]] = {}
    for run_dir in (tmp_path / "out" / "authors" / "runs").iterdir():
        name = json.loads((run_dir / "run_spec.json").read_text(encoding="utf-8"))["name"].split(":")[0]
        gold[name] = {
            r["instance_id"]: next(ref["output"] for ref in r["references"] if "correct" in ref["tags"])
            for r in pq.read_table(run_dir / "instances.parquet").to_pylist()
        }
    assert set(gold["piqa"].values()) == {
        "store it in a bread box.",
        "Stuff them with newspaper.",
        "put the pot in an ice bath.",
    }
    assert gold["obqa"] == {
        "7-980": "plants sprouting, blooming and wilting",
        "7-584": "the mountains seem smaller than in photographs",
    }
    if "truthfulqa_mc1" in gold:
        with truthful.open(encoding="utf-8-sig", newline="") as fh:  # type: ignore[union-attr]
            best = {row["Best Answer"] for row in csv.DictReader(fh)}
        assert len(gold["truthfulqa_mc1"]) == 5 and set(gold["truthfulqa_mc1"].values()) <= best
