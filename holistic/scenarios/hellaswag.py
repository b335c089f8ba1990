"""HellaSwag (Zellers et al., 2019): pick the most plausible continuation of a scene.

Authors' format: ``hellaswag_{train,val}.jsonl`` with ``ind``, ``activity_label``,
``ctx``, ``endings`` (four) and ``label`` (index of the right ending). HELM
evaluates on the validation set (test labels are hidden).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import TRAIN_SPLIT, VALID_SPLIT, Instance
from holistic.scenarios.categories import CLASSIFICATION_CATEGORIES, CLASSIFICATION_NOT_APPLICABLE
from holistic.scenarios.loading import FileScenario, choice_references, github_raw
from holistic.scenarios.readers import iter_jsonl, require
from holistic.scenarios.registry import SCENARIOS
from holistic.scenarios.sources import DataFile, DataNeeds, Download, ResolvedData

_REPO = "rowanz/hellaswag"
_COMMIT = "6774d74db0a963013d28bd9323c32de8dd506038"
_FILES = (("hellaswag_train.jsonl", TRAIN_SPLIT), ("hellaswag_val.jsonl", VALID_SPLIT))


def _read(path: Path, split: str) -> list[Instance]:
    out = []
    for number, row in enumerate(iter_jsonl(path), start=1):
        where = f"{path}:{number}"
        endings = require(row, "endings", where)
        label = require(row, "label", where)
        if not isinstance(endings, list) or not isinstance(label, int) or not 0 <= label < len(endings):
            raise DataSourceError(f"{where}: expected a list of endings and an integer label indexing it")
        context = str(require(row, "ctx", where))
        activity = str(row.get("activity_label", "")).strip()
        out.append(
            Instance(
                id=f"{split}-{row.get('ind', number - 1)}",
                input=f"{activity}: {context}" if activity else context,
                references=choice_references([str(e) for e in endings], label),
                split=split,
                metadata={"source_id": row.get("source_id", ""), "split_type": row.get("split_type", "")},
            )
        )
    return out


@SCENARIOS.register("hellaswag")
class HellaSwagScenario(FileScenario):
    """Commonsense continuation choice."""

    info = ScenarioInfo(
        name="hellaswag",
        description="HellaSwag: choose the most plausible continuation (commonsense reasoning).",
        task="multiple_choice",
        default_adapter={
            "method": "multiple_choice_separate_original",
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
        return 10042

    def data_needs(self) -> DataNeeds:
        return DataNeeds(
            "hellaswag",
            layouts=(
                tuple(
                    DataFile(name, downloads=(Download(github_raw(_REPO, _COMMIT, f"data/{name}")),))
                    for name, _ in _FILES
                ),
            ),
            hint="https://github.com/rowanz/hellaswag/tree/master/data",
        )

    def load(self, data: ResolvedData) -> list[Instance]:
        return [inst for name, split in _FILES for inst in _read(data[name], split)]
