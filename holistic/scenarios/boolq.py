"""BoolQ (Clark et al., 2019): yes/no questions about a Wikipedia passage.

Reads the SuperGLUE packaging (``train.jsonl``, ``val.jsonl``; fields ``question``,
``passage`` as ``"Title -- text"``, ``idx``, ``label`` as a boolean or the strings
``"true"``/``"false"``) and the original Google release (``answer`` instead of
``label``, plus ``title``). HELM evaluates on the validation set. When only
``val.jsonl`` is present, a fixed seeded set of 100 validation questions becomes
the in-context example pool (``train``) and is left out of evaluation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import CORRECT_TAG, TRAIN_SPLIT, VALID_SPLIT, Instance, Reference
from holistic.scenarios.categories import CLASSIFICATION_CATEGORIES, CLASSIFICATION_NOT_APPLICABLE
from holistic.scenarios.loading import FileScenario, with_train_pool
from holistic.scenarios.prompt_format import prompt_format
from holistic.scenarios.readers import iter_jsonl, require
from holistic.scenarios.registry import SCENARIOS
from holistic.scenarios.sources import DataFile, DataNeeds, Download, ResolvedData

_SUPERGLUE_ZIP = "https://dl.fbaipublicfiles.com/glue/superglue/data/v2/BoolQ.zip"
_POOL_FROM_VAL = 100
_VAL_SIZE = 3270


def _file(name: str) -> DataFile:
    return DataFile(name, downloads=(Download(_SUPERGLUE_ZIP, member=f"BoolQ/{name}"),))


def _label(row: dict[str, Any], where: str) -> bool:
    value = row["label"] if "label" in row else require(row, "answer", where)
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise DataSourceError(f"{where}: label {value!r} is neither true nor false")


def _read(path: Path, split: str) -> list[Instance]:
    out = []
    for number, row in enumerate(iter_jsonl(path), start=1):
        where = f"{path}:{number}"
        question = str(require(row, "question", where)).strip()
        passage = str(require(row, "passage", where)).strip()
        if "title" in row and " -- " not in passage:
            passage = f"{row['title']} -- {passage}"
        answer = _label(row, where)
        key = row.get("idx", number - 1)
        question = question[0].upper() + question[1:] if question else question
        out.append(
            Instance(
                id=f"{Path(path).stem}-{key}",
                input=f"{passage}\nQuestion: {question}?",
                references=(
                    Reference("Yes", (CORRECT_TAG,) if answer else ()),
                    Reference("No", () if answer else (CORRECT_TAG,)),
                ),
                split=split,
            )
        )
    return out


@SCENARIOS.register("boolq")
class BoolQScenario(FileScenario):
    """Yes/no reading comprehension."""

    info = ScenarioInfo(
        name="boolq",
        description="BoolQ: yes/no questions about a Wikipedia passage (question answering).",
        task="qa",
        default_adapter=prompt_format(
            instructions="Answer the question about the passage with Yes or No.",
            input_prefix="Passage: ",
            output_prefix="Answer: ",
            max_tokens=5,
        ),
        main_metric="quasi_exact_match",
        metric_categories=CLASSIFICATION_CATEGORIES,
        not_applicable_reasons=CLASSIFICATION_NOT_APPLICABLE,
        args_schema={"type": "object", "properties": {}, "additionalProperties": False},
        tags=("question_answering", "core"),
    )
    num_instances = _VAL_SIZE

    def data_needs(self) -> DataNeeds:
        return DataNeeds(
            "boolq",
            layouts=((_file("train.jsonl"), _file("val.jsonl")), (_file("val.jsonl"),)),
            hint="SuperGLUE BoolQ.zip (https://super.gluebenchmark.com/tasks) or https://github.com/google-research-datasets/boolean-questions",
        )

    def load(self, data: ResolvedData) -> list[Instance]:
        val = _read(data["val.jsonl"], VALID_SPLIT)
        if data.layout == 0:
            return _read(data["train.jsonl"], TRAIN_SPLIT) + val
        return with_train_pool(val, _POOL_FROM_VAL, "boolq-train-pool")
