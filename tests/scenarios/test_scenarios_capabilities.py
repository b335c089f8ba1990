"""Loaders of the capabilities suite: IFEval's JSONL, GPQA's encrypted zip (real files,
skipped when absent) and MMLU-Pro's Parquet release (files written here in its format)."""

from __future__ import annotations

import json
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from holistic.core.errors import DataSourceError, UnknownNameError
from holistic.core.interfaces import ScenarioContext
from holistic.core.types import Instance, ScenarioSpec
from holistic.scenarios.gpqa import PASSWORD, read_gpqa
from holistic.scenarios.ifeval import read_ifeval
from holistic.scenarios.mmlu_pro import MMLUProScenario
from holistic.scenarios.registry import create_scenario


def _load(root: Path, tmp_path: Path, name: str, **args: object) -> list[Instance]:
    ctx = ScenarioContext(data_root=root, cache_dir=tmp_path / "cache", offline=True)
    return create_scenario(ScenarioSpec.make(name, args)).get_instances(ctx)


def _files(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*") if p.is_file()} if folder.exists() else set()


# -- IFEval ------------------------------------------------------------------------


def test_ifeval_real_prompts(data_root: Path, tmp_path: Path) -> None:
    instances = _load(data_root, tmp_path, "ifeval")
    assert len(instances) == 541 and {i.split for i in instances} == {"test"}
    first = instances[0]
    assert first.id == "id1000" and first.input.startswith("Write a 300+ word summary of the wikipedia page")
    assert first.metadata["instruction_ids"] == [
        "punctuation:no_comma",
        "detectable_format:number_highlighted_sections",
        "length_constraints:number_words",
    ]
    assert first.metadata["instruction_kwargs"][2] == {"relation": "at least", "num_words": 300}
    assert sum(len(i.metadata["instruction_ids"]) for i in instances) == 834


def _ifeval_file(tmp_path: Path, *rows: dict[str, Any]) -> Path:
    path = tmp_path / "input_data.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


GOOD = {"key": 1, "prompt": "Say hi.", "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({**GOOD, "instruction_id_list": ["punctuation:no_commas"]}, "did you mean 'punctuation:no_comma'"),
        (
            {**GOOD, "instruction_id_list": ["length_constraints:number_words"], "kwargs": [{"num_words": 5}]},
            "missing argument 'relation'",
        ),
        ({**GOOD, "kwargs": []}, "same, non-zero length"),
        ({**GOOD, "prompt": "  "}, "prompt must be a non-empty string"),
    ],
)
def test_ifeval_bad_rows_name_file_and_line(tmp_path: Path, row: dict[str, Any], message: str) -> None:
    path = _ifeval_file(tmp_path, GOOD, row)
    with pytest.raises(DataSourceError, match=f"input_data.jsonl:2: .*{message}"):
        read_ifeval(path)


def test_ifeval_reads_the_hub_copys_none_padding(tmp_path: Path) -> None:
    row = {**GOOD, "kwargs": [{"num_words": None, "relation": None}]}
    (instance,) = read_ifeval(_ifeval_file(tmp_path, row))
    assert instance.metadata["instruction_kwargs"] == [{}]


# -- GPQA ------------------------------------------------------------------------------


def test_gpqa_main_from_the_encrypted_zip_in_memory(data_root: Path, tmp_path: Path) -> None:
    before = _files(tmp_path) | _files(data_root / "gpqa")
    instances = _load(data_root, tmp_path, "gpqa")
    assert _files(tmp_path) | _files(data_root / "gpqa") == before  # nothing extracted anywhere
    assert Counter(i.split for i in instances) == {"test": 446, "train": 2}
    assert {i.id for i in instances if i.split == "train"} == {"id339", "id105"}
    assert all(len(i.references) == 4 and len(i.correct_references) == 1 for i in instances)
    # shuffled as HELM shuffles (one Random(42) in file order): the correct answer moves
    positions = Counter(next(k for k, r in enumerate(i.references) if r.is_correct) for i in instances)
    assert len(positions) == 4 and max(positions.values()) < 200
    assert _load(data_root, tmp_path, "gpqa") == instances
    diamond = _load(data_root, tmp_path, "gpqa", subset="gpqa_diamond")
    assert Counter(i.split for i in diamond) == {"test": 196, "train": 2}


def test_gpqa_zip_errors_are_specific(tmp_path: Path) -> None:
    plain = tmp_path / "dataset.zip"
    with zipfile.ZipFile(plain, "w") as archive:
        archive.writestr("dataset/other.csv", "x\n")
    with pytest.raises(DataSourceError, match=r"no member 'dataset/gpqa_main.csv'; members: dataset/other.csv"):
        read_gpqa(plain, "gpqa_main")
    broken = tmp_path / "broken.zip"
    broken.write_bytes(b"not a zip")
    with pytest.raises(DataSourceError, match=r"broken\.zip: cannot read"):
        read_gpqa(broken, "gpqa_main")
    assert PASSWORD == b"deserted-untie-orchid"


def test_gpqa_rejects_an_unknown_subset() -> None:
    with pytest.raises(ValueError, match="gpqa_main, gpqa_diamond, gpqa_extended"):
        create_scenario(ScenarioSpec.make("gpqa", {"subset": "gpqa_hard"}))


# -- MMLU-Pro ---------------------------------------------------------------------------


def _row(qid: int, category: str, answer: str = "B", options: list[str] | None = None) -> dict[str, Any]:
    return {
        "question_id": qid,
        "question": f"Question {qid}?",
        "options": options or ["w", "x", "y", "z"],
        "answer": answer,
        "answer_index": "ABCDEFGHIJ".index(answer),
        "cot_content": "",
        "category": category,
        "src": "ori_mmlu-test",
    }


def _mmlu_pro(root: Path, test: list[dict[str, Any]], validation: list[dict[str, Any]] | None = None) -> None:
    folder = root / "mmlu_pro" / "data"
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(test), folder / "test-00000-of-00001.parquet")
    if validation is not None:
        pq.write_table(pa.Table.from_pylist(validation), folder / "validation-00000-of-00001.parquet")


def test_mmlu_pro_release_format(tmp_path: Path) -> None:
    root = tmp_path / "mirror"
    ten = [str(n) for n in range(9)] + ["2"]
    _mmlu_pro(
        root,
        [_row(70, "math", "C", ten), _row(71, "computer science"), _row(72, "law", "A")],
        [_row(1, "math")],
    )
    instances = _load(root, tmp_path, "mmlu_pro")
    assert [(i.id, i.split) for i in instances] == [
        ("id1", "train"),
        ("id70", "test"),
        ("id71", "test"),
        ("id72", "test"),
    ]
    math = instances[1]
    assert [r.output for r in math.references] == ten
    assert [k for k, r in enumerate(math.references) if r.is_correct] == [2, 9]  # HELM: every option equal to the key
    only = _load(root, tmp_path, "mmlu_pro", subject="computer_science")
    assert [i.id for i in only] == ["id71"]
    assert only[0].metadata == {"category": "computer science", "src": "ori_mmlu-test"}


def test_mmlu_pro_without_validation_file_and_bad_rows(tmp_path: Path) -> None:
    root = tmp_path / "mirror"
    _mmlu_pro(root, [_row(70, "math", "F")])
    with pytest.raises(DataSourceError, match=r"test-00000-of-00001.parquet: row 1: answer 'F' is not the letter"):
        _load(root, tmp_path, "mmlu_pro")
    _mmlu_pro(root, [_row(70, "math")])
    assert [i.split for i in _load(root, tmp_path, "mmlu_pro")] == ["test"]
    with pytest.raises(UnknownNameError, match="did you mean 'computer_science'"):
        MMLUProScenario(subject="computer_sciences")
