"""OpenBookQA (Mihaylov et al., 2018): elementary science questions with four choices.

Authors' format (``Data/Main/{train,dev,test}.jsonl`` of the release, kept here as
``train.jsonl``, ``dev.jsonl``, ``test.jsonl``): ``id``, ``question.stem``,
``question.choices`` (``text`` and ``label`` A-D) and ``answerKey``.
"""

from __future__ import annotations

from pathlib import Path

from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import TEST_SPLIT, TRAIN_SPLIT, VALID_SPLIT, Instance
from holistic.scenarios.categories import CLASSIFICATION_CATEGORIES, CLASSIFICATION_NOT_APPLICABLE
from holistic.scenarios.loading import SplitFilesScenario, choice_references
from holistic.scenarios.prompt_format import multiple_choice_separate_format
from holistic.scenarios.readers import iter_jsonl, require
from holistic.scenarios.registry import SCENARIOS
from holistic.scenarios.sources import Download

_ZIP = "https://ai2-public-datasets.s3.amazonaws.com/open_book_qa/OpenBookQA-V1-Sep2018.zip"


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
class OpenBookQAScenario(SplitFilesScenario):
    """Science questions needing a fact plus common knowledge."""

    info = ScenarioInfo(
        name="openbookqa",
        description="OpenBookQA: four-choice elementary science questions (commonsense knowledge).",
        task="multiple_choice",
        default_adapter=multiple_choice_separate_format("multiple_choice_separate_calibrated"),
        main_metric="exact_match",
        metric_categories=CLASSIFICATION_CATEGORIES,
        not_applicable_reasons=CLASSIFICATION_NOT_APPLICABLE,
        args_schema={"type": "object", "properties": {}, "additionalProperties": False},
        tags=("knowledge", "commonsense", "multiple_choice", "core"),
    )
    num_instances = 1000
    split_files = (("train.jsonl", TRAIN_SPLIT), ("dev.jsonl", VALID_SPLIT), ("test.jsonl", TEST_SPLIT))
    hint = _ZIP
    read = staticmethod(_read)

    def download(self, name: str) -> Download:
        return Download(_ZIP, member=f"OpenBookQA-V1-Sep2018/Data/Main/{name}")
