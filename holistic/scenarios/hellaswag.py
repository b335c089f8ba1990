"""HellaSwag (Zellers et al., 2019): pick the most plausible continuation of a scene.

Authors' format: ``hellaswag_{train,val}.jsonl`` with ``ind``, ``activity_label``,
``ctx``, ``endings`` (four) and ``label`` (index of the right ending). HELM
evaluates on the validation set (test labels are hidden).
"""

from __future__ import annotations

from pathlib import Path

from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import TRAIN_SPLIT, VALID_SPLIT, Instance
from holistic.scenarios.categories import CLASSIFICATION_CATEGORIES, CLASSIFICATION_NOT_APPLICABLE
from holistic.scenarios.loading import SplitFilesScenario, choice_references, github_raw
from holistic.scenarios.prompt_format import multiple_choice_separate_format
from holistic.scenarios.readers import iter_jsonl, require
from holistic.scenarios.registry import SCENARIOS
from holistic.scenarios.sources import Download

_REPO = "rowanz/hellaswag"
_COMMIT = "6774d74db0a963013d28bd9323c32de8dd506038"


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
class HellaSwagScenario(SplitFilesScenario):
    """Commonsense continuation choice."""

    info = ScenarioInfo(
        name="hellaswag",
        description="HellaSwag: choose the most plausible continuation (commonsense reasoning).",
        task="multiple_choice",
        default_adapter=multiple_choice_separate_format("multiple_choice_separate_original"),
        main_metric="exact_match",
        metric_categories=CLASSIFICATION_CATEGORIES,
        not_applicable_reasons=CLASSIFICATION_NOT_APPLICABLE,
        args_schema={"type": "object", "properties": {}, "additionalProperties": False},
        tags=("knowledge", "commonsense", "multiple_choice", "core"),
    )
    num_instances = 10042
    split_files = (("hellaswag_train.jsonl", TRAIN_SPLIT), ("hellaswag_val.jsonl", VALID_SPLIT))
    hint = "https://github.com/rowanz/hellaswag/tree/master/data"
    read = staticmethod(_read)

    def download(self, name: str) -> Download:
        return Download(github_raw(_REPO, _COMMIT, f"data/{name}"))
