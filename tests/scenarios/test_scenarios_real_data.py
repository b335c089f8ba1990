"""Loaders against the authors' real files (skipped when the mirror is absent)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from holistic.core.interfaces import ScenarioContext
from holistic.core.types import Instance, ScenarioSpec
from holistic.scenarios.mmlu import SUBJECT_SIZES, SUBJECTS
from holistic.scenarios.raft import SUBSETS
from holistic.scenarios.registry import create_scenario


def _load(root: Path, tmp_path: Path, name: str, **args: object) -> list[Instance]:
    ctx = ScenarioContext(data_root=root, cache_dir=tmp_path / "cache", offline=True)
    return create_scenario(ScenarioSpec.make(name, args)).get_instances(ctx)


def test_mmlu_anatomy_has_135_test_questions_with_the_right_gold(data_root: Path, tmp_path: Path) -> None:
    instances = _load(data_root, tmp_path, "mmlu", subject="anatomy")
    assert Counter(i.split for i in instances) == {"train": 5, "valid": 14, "test": 135}
    test = [i for i in instances if i.split == "test"]
    first = test[0]
    assert first.input.startswith("A lesion causing compression of the facial nerve at the stylomastoid foramen")
    assert len(first.references) == 4
    # The file's answer is "A": the first choice is the one tagged correct.
    assert [r.output for r in first.correct_references] == ["paralysis of the facial muscles."]
    assert test[1].correct_references[0].output.startswith("a recessive maxilla")  # answer B
    assert all(len(i.correct_references) == 1 for i in instances)
    assert len({i.id for i in instances}) == len(instances)


def test_mmlu_every_subject_matches_the_declared_sizes(data_root: Path, tmp_path: Path) -> None:
    assert len(SUBJECTS) == 57
    for subject in SUBJECTS:
        counts = Counter(i.split for i in _load(data_root, tmp_path, "mmlu", subject=subject))
        assert (counts["valid"], counts["test"]) == SUBJECT_SIZES[subject], subject
        assert counts["train"] == 5


def test_boolq_validation_file(data_root: Path, tmp_path: Path) -> None:
    instances = _load(data_root, tmp_path, "boolq")
    assert len(instances) == 3270
    counts = Counter(i.split for i in instances)
    assert counts == {"valid": 3170, "train": 100}
    first = next(i for i in instances if i.id == "val-0")
    assert not first.input.startswith("Ethanol fuel -- ")  # HELM's passage has no title
    assert first.input.endswith("\nQuestion: Does ethanol take more energy make that produces?")
    assert [r.output for r in first.correct_references] == ["No"]
    answers = Counter(i.correct_references[0].output for i in instances)
    assert answers["Yes"] > answers["No"] > 0  # BoolQ is about 62% yes
    assert _load(data_root, tmp_path, "boolq") == instances  # the train pool is fixed


def test_imdb_labelled_lines(data_root: Path, tmp_path: Path) -> None:
    instances = _load(data_root, tmp_path, "imdb")
    assert Counter(i.split for i in instances) == {"valid": 950, "train": 50}
    first = next(i for i in instances if i.id == "imdb_1000-00001")
    assert first.input.startswith("seriously , i do n't understand how justin long")
    assert [r.output for r in first.correct_references] == ["Negative"]
    assert {r.output for r in first.references} == {"Positive", "Negative"}


@pytest.mark.parametrize("subset", SUBSETS)
def test_raft_tasks_use_task_json_labels(data_root: Path, tmp_path: Path, subset: str) -> None:
    instances = _load(data_root, tmp_path, "raft", subset=subset)
    assert Counter(i.split for i in instances) == {"train": 10, "test": 40}
    import json

    meta = json.loads((data_root / "raft" / subset / "task.json").read_text(encoding="utf-8"))
    names = next(iter(meta["label_columns"].values()))
    for inst in instances:
        assert [r.output for r in inst.references] == names
        assert len(inst.correct_references) == 1
    from holistic.scenarios.raft import FIELD_ORDERING

    assert instances[0].input.startswith(f"{FIELD_ORDERING[subset][0]}: ")  # the authors' field order, as HELM
