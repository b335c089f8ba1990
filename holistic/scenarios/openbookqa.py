"""OpenBookQA (Mihaylov et al., 2018): elementary science questions with four choices.

Authors' format (``Data/Main/{train,dev,test}.jsonl`` of the release, kept here as
``train.jsonl``, ``dev.jsonl``, ``test.jsonl``): ``id``, ``question.stem``,
``question.choices`` (``text`` and ``label`` A-D) and ``answerKey``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import TEST_SPLIT, TRAIN_SPLIT, VALID_SPLIT, Instance
from holistic.scenarios.categories import CLASSIFICATION_CATEGORIES, CLASSIFICATION_NOT_APPLICABLE
from holistic.scenarios.loading import FileScenario, choice_references
from holistic.scenarios.readers import iter_jsonl, require
from holistic.scenarios.registry import SCENARIOS
from holistic.scenarios.sources import DataFile, DataNeeds, Download, ResolvedData

_ZIP = "https://ai2-public-datasets.s3.amazonaws.com/open_book_qa/OpenBookQA-V1-Sep2018.zip"
_FILES = (("train.jsonl", TRAIN_SPLIT), ("dev.jsonl", VALID_SPLIT), ("test.jsonl", TEST_SPLIT))


def _read(path: Path, split: str) -> list[Instance]:
    out = []
    for number, row in enumerate(iter_jsonl(path), start=1):
        where = f"{path}:{number}"
        question = require(row, "question", where)
        if not isinstance(question, dict):
            raise DataSourceError(f"{where}: 'question' must be an object with stem and choices")
        choices = require(question, "choices", where)
        labels = [str(c.get("label")) for c in choices]
        answer = str(require(row, "answerKey", where))
        if answer not in labels:
            raise DataSourceError(f"{where}: answerKey {answer!r} is not among the choice labels {labels}")
        out.append(
            Instance(
                id=str(row.get("id", f"{split}-{number}")),
                input=str(require(question, "stem", where)),
                references=choice_references([str(c.get("text", "")) for c in choices], labels.index(answer)),
                split=split,
            )
        )
    return out


@SCENARIOS.register("openbookqa")
class OpenBookQAScenario(FileScenario):
    """Science questions needing a fact plus common knowledge."""

    info = ScenarioInfo(
        name="openbookqa",
        description="OpenBookQA: four-choice elementary science questions (commonsense knowledge).",
        task="multiple_choice",
        default_adapter={
            "method": "multiple_choice_separate_calibrated",
            "instructions": "",
            "input_prefix": "",
            "input_suffix": " ",
            "output_prefix": "",
            "output_suffix": "\n",
            "max_train_instances": 0,
            "max_tokens": 0,
            "temperature": 0.0,
        },
        main_metric="exact_match",
        metric_categories=CLASSIFICATION_CATEGORIES,
        not_applicable_reasons=CLASSIFICATION_NOT_APPLICABLE,
        args_schema={"type": "object", "properties": {}, "additionalProperties": False},
        tags=("knowledge", "commonsense", "multiple_choice", "core"),
    )

    @classmethod
    def estimate_num_instances(cls, args: dict[str, Any]) -> int | None:
        return 1000

    def data_needs(self) -> DataNeeds:
        return DataNeeds(
            "openbookqa",
            layouts=(
                tuple(
                    DataFile(name, downloads=(Download(_ZIP, member=f"OpenBookQA-V1-Sep2018/Data/Main/{name}"),))
                    for name, _ in _FILES
                ),
            ),
            hint=_ZIP,
        )

    def load(self, data: ResolvedData) -> list[Instance]:
        return [inst for name, split in _FILES for inst in _read(data[name], split)]
