"""Users' own datasets from YAML alone: files in every format, a field mapping, clear errors."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioContext
from holistic.core.types import Instance, ScenarioSpec
from holistic.scenarios.registry import create_scenario

REPO = Path(__file__).resolve().parents[2]
ARABIC_CSV = REPO / "runspecs" / "data" / "reviews_ar.csv"
CAPITALS = REPO / "runspecs" / "data" / "capitals.jsonl"
CTX = ScenarioContext(offline=True)


def _load(**args: object) -> list[Instance]:
    return create_scenario(ScenarioSpec.make("file", args)).get_instances(CTX)


def test_arabic_csv_classification_keeps_text_intact() -> None:
    instances = _load(
        path=str(ARABIC_CSV),
        fields={"input": "text", "label": "label", "id": "id", "split": "split"},
        labels=["positive", "negative"],
    )
    assert Counter(i.split for i in instances) == {"train": 6, "test": 10}
    first = instances[0]
    assert first.id == "r01"
    assert first.input == "الخدمة في هذا المطعم ممتازة والطعام لذيذ جدا"
    assert [r.output for r in first.references] == ["positive", "negative"]
    assert [r.output for r in first.correct_references] == ["positive"]
    quoted = next(i for i in instances if i.id == "r10")
    assert quoted.input == "التطبيق بطيء جدا، ويتوقف كل دقيقة"
    assert quoted.correct_references[0].output == "negative"


def test_jsonl_qa_with_several_answers_and_rtl_scripts() -> None:
    instances = _load(
        path=str(CAPITALS), fields={"input": "question", "output": "answer", "id": "qid", "split": "split"}
    )
    assert Counter(i.split for i in instances) == {"train": 3, "test": 7}
    hebrew = next(i for i in instances if i.id == "c10")
    assert hebrew.input == "מהי בירת ישראל לפי החוק הישראלי?"
    assert [r.output for r in hebrew.references] == ["ירושלים", "Jerusalem"]
    assert all(r.is_correct for r in hebrew.references)
    scenario = create_scenario(
        ScenarioSpec.make("file", {"path": str(CAPITALS), "fields": {"input": "question", "output": "answer"}})
    )
    assert (scenario.info.task, scenario.info.main_metric) == ("qa", "f1_score")


def test_relative_paths_resolve_under_the_data_root_then_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "root" / "sets").mkdir(parents=True)
    (tmp_path / "root" / "sets" / "a.tsv").write_text("q\ta\nwhy\tbecause\n", encoding="utf-8")
    ctx = ScenarioContext(data_root=tmp_path / "root", offline=True)
    scenario = create_scenario(
        ScenarioSpec.make("file", {"path": "sets/a.tsv", "fields": {"input": "q", "output": "a"}})
    )
    assert [i.input for i in scenario.get_instances(ctx)] == ["why"]
    monkeypatch.chdir(tmp_path / "root")
    assert [i.id for i in scenario.get_instances(ScenarioContext(offline=True))] == ["test-000000"]
    missing = create_scenario(ScenarioSpec.make("file", {"path": "nope.csv", "fields": {"input": "q", "output": "a"}}))
    with pytest.raises(DataSourceError, match=r"dataset file 'nope.csv' not found; looked in: .*nope.csv"):
        missing.get_instances(ctx)


def test_one_file_per_split_json_and_parquet(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    (tmp_path / "train.json").write_text(
        json.dumps({"data": [{"sentence": "good", "y": 1}, {"sentence": "bad", "y": 0}]}), encoding="utf-8"
    )
    pq.write_table(pa.table({"sentence": ["fine", "awful", "ok"], "y": [1, 0, 1]}), tmp_path / "test.parquet")
    instances = _load(
        path={"train": str(tmp_path / "train.json"), "test": str(tmp_path / "test.parquet")},
        fields={"input": "sentence", "label": "y"},
        labels={"0": "negative", "1": "positive"},
    )
    assert [(i.split, i.input, i.correct_references[0].output) for i in instances] == [
        ("train", "good", "positive"),
        ("train", "bad", "negative"),
        ("test", "fine", "positive"),
        ("test", "awful", "negative"),
        ("test", "ok", "positive"),
    ]
    assert [r.output for r in instances[0].references] == ["negative", "positive"]


def test_multiple_choice_template_metadata_and_held_out_train(tmp_path: Path) -> None:
    rows = [
        {"q": f"Which is {n}?", "opts": ["one", "two", "three"], "gold": gold, "dialect": d}
        for n, gold, d in [("1", "A", "x"), ("2", "b", "y"), ("3", "three", "x"), ("1 again", "A", "y")]
    ]
    path = tmp_path / "mc.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    instances = _load(
        path=str(path),
        fields={"choices": "opts", "label": "gold", "metadata": ["dialect"], "sub_split": "dialect"},
        template="Q: {{ q }} ({{ opts | length }} options)",
        num_train=1,
    )
    assert [i.correct_references[0].output for i in instances] == ["one", "two", "three", "one"]
    assert instances[0].input == "Q: Which is 1? (3 options)"
    assert instances[1].metadata == {"dialect": "y"} and instances[1].sub_split == "y"
    assert Counter(i.split for i in instances) == {"test": 3, "train": 1}
    numbered = tmp_path / "numbered.jsonl"
    numbered.write_text(
        "".join(json.dumps({"q": q, "opts": ["one", "two"], "gold": g}) + "\n" for q, g in [("a", 1), ("b", "2")]),
        encoding="utf-8",
    )
    for label_format, expected in (("index0", ["two", None]), ("index1", ["one", "two"])):
        fields = {"input": "q", "choices": "opts", "label": "gold"}
        if expected[1] is None:
            with pytest.raises(DataSourceError, match=r"numbered\.jsonl:2: answer key '2' is out of range for 2"):
                _load(path=str(numbered), fields=fields, label_format=label_format)
        else:
            got = _load(path=str(numbered), fields=fields, label_format=label_format)
            assert [i.correct_references[0].output for i in got] == expected
    from holistic.scenarios.loading.user_file import FileDatasetScenario

    scenario = FileDatasetScenario(path="qa.csv", fields={"input": "q", "choices": "opts", "label": "a"})
    assert scenario.adapter_defaults()["method"] == "multiple_choice_joint"


def test_errors_name_the_row_and_the_nearest_column(tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    path.write_text("text,label\nhello,pos\nbye,neutral\n", encoding="utf-8")
    with pytest.raises(DataSourceError, match=r"data\.csv:2: no column 'txt'; did you mean 'text'\?"):
        _load(path=str(path), fields={"input": "txt", "label": "label"})
    with pytest.raises(DataSourceError, match=r"data\.csv:3: label 'neutral' is not one of \['pos', 'neg'\]"):
        _load(path=str(path), fields={"input": "text", "label": "label"}, labels=["pos", "neg"])
    with pytest.raises(DataSourceError, match=r"data\.csv:2: template: 'body' is undefined"):
        _load(path=str(path), fields={"label": "label"}, template="{{ body }}")
    with pytest.raises(ValueError, match="unknown key 'lable'; did you mean 'label'"):
        _load(path=str(path), fields={"input": "text", "lable": "label"})
    with pytest.raises(ValueError, match=r"cannot tell the format of data\.txt"):
        _load(path=str(tmp_path / "data.txt"), fields={"input": "text", "label": "label"})
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"a": 1}\n{oops\n', encoding="utf-8")
    with pytest.raises(DataSourceError, match=r"bad\.jsonl:2: invalid JSON"):
        _load(path=str(bad), fields={"input": "a", "output": "a"})


def test_huggingface_without_datasets_says_how_to_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "datasets" else real(name, *a))
    scenario = create_scenario(
        ScenarioSpec.make(
            "huggingface", {"dataset": "org/set", "revision": "abc123", "fields": {"input": "t", "label": "l"}}
        )
    )
    with pytest.raises(DataSourceError, match=r"needs the 'datasets' package.*pip install datasets"):
        scenario.get_instances(CTX)
    assert "revision" in type(scenario).args_schema()["required"]


def test_yaml_only_dataset_compiles() -> None:
    spec = pytest.importorskip("holistic.spec")
    compiled = spec.compile_spec(REPO / "runspecs" / "my_dataset.yaml")
    assert [r.scenario.name for r in compiled.runs] == ["file", "file"]
    labels = compiled.runs[0].scenario.args_dict["labels"]
    assert labels == ["positive", "negative"]  # an array-typed arg: one run, not two


@pytest.mark.real_model
def test_yaml_only_dataset_runs_end_to_end_on_the_embedded_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dataclasses import replace

    import pyarrow.parquet as pq

    from holistic.execution.options import RunOptions
    from holistic.execution.runner import run_suite
    from holistic.spec import compile_spec

    monkeypatch.chdir(REPO)
    compiled = compile_spec(REPO / "runspecs" / "my_dataset.yaml")
    assert compiled.runs[0].model == "embedded/smollm2-135m-instruct"
    # Small and unperturbed, to keep the test quick; the prompts are still the real ones.
    runs = [
        replace(r, adapter=r.adapter.replace(max_eval_instances=3, num_train_trials=1), perturbations=())
        for r in compiled.runs
    ]
    report = run_suite(compiled, RunOptions(output_dir=tmp_path, offline=True), runs=runs)
    assert [r.status for r in report.runs] == ["complete", "complete"]
    run_dir = report.runs[0].folder
    assert run_dir is not None
    inputs = [row["input"] for row in pq.read_table(run_dir / "instances.parquet").to_pylist()]
    arabic = {line.split(",", 2)[1].strip('"') for line in ARABIC_CSV.read_text(encoding="utf-8").splitlines()[1:]}
    assert inputs and set(inputs) <= arabic  # right-to-left text reaches the results unchanged
    prompts = [row["prompt"] for row in pq.read_table(run_dir / "requests.parquet").to_pylist()]
    assert prompts and all("Is the review positive or negative?" in p for p in prompts)
    assert all(any(text in p for text in inputs) for p in prompts)
