"""TruthfulQA (Lin et al., 2022), multiple-choice form: pick the true answer.

Reads the authors' ``TruthfulQA.csv`` (``Question``, ``Best Answer``, ``Incorrect
Answers`` separated by ``; ``...): the choices are the best answer plus the incorrect
ones, in an order fixed by a seed from the question. The 817 questions have no
official split: a fixed seeded 20% is the in-context pool (``train``), the rest
is ``valid``.

Hugging Face copy (used when the authors' file is absent): ``truthfulqa/truthful_qa``,
configuration ``generation``: ``hf/generation/validation-00000-of-00001.parquet``
with columns ``question``, ``best_answer``, ``incorrect_answers`` (a list),
``category`` and ``type``. That configuration, rather than ``multiple_choice``
(whose ``mc1_targets`` hold a different, larger choice set), carries the CSV's
columns, so ids (``q<row>``), inputs, choices, references and splits are the same
as from ``TruthfulQA.csv``. The ``hf_revision`` arg (default ``main``, not
pinned) should be pinned to a commit of that repo.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from holistic.core.errors import DataSourceError
from holistic.core.hashing import stable_seed
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import VALID_SPLIT, Instance
from holistic.scenarios.categories import CLASSIFICATION_CATEGORIES, CLASSIFICATION_NOT_APPLICABLE
from holistic.scenarios.hf_copy import (
    HF_REVISION_UNPINNED,
    check_revision,
    hf_hint,
    hf_layout,
    hf_revision_schema,
    read_parquet_rows,
    row_where,
)
from holistic.scenarios.loading import FileScenario, choice_references, with_train_pool
from holistic.scenarios.prompt_format import multiple_choice_joint_format
from holistic.scenarios.readers import read_csv_dicts
from holistic.scenarios.sources import DataFile, DataNeeds, Download, ResolvedData

_URL = "https://raw.githubusercontent.com/sylinrl/TruthfulQA/main/TruthfulQA.csv"
_TRAIN_FRACTION = 0.2
_SIZE = 817
_HF_REPO = "truthfulqa/truthful_qa"
_HF_FILE = "generation/validation-00000-of-00001.parquet"


def _instance(number: int, question: str, best: str, wrong: list[str], metadata: dict[str, str]) -> Instance:
    choices = [best.strip()] + [w.strip() for w in wrong if w.strip()]
    order = list(range(len(choices)))
    random.Random(stable_seed("truthful_qa-choices", question)).shuffle(order)
    return Instance(
        id=f"q{number:04d}",
        input=question.strip(),
        references=choice_references([choices[i] for i in order], order.index(0)),
        split=VALID_SPLIT,
        metadata=metadata,
    )


def _read_hf(path: Path) -> list[Instance]:
    rows = read_parquet_rows(path, ("question", "best_answer", "incorrect_answers"), optional=("category", "type"))
    instances = []
    for index, row in enumerate(rows):
        wrong = row["incorrect_answers"]
        if not isinstance(wrong, list):
            raise DataSourceError(f"{row_where(path, index)}: 'incorrect_answers' must be a list, got {wrong!r}")
        metadata = {"category": row.get("category") or "", "type": row.get("type") or ""}
        instances.append(
            _instance(index, str(row["question"]), str(row["best_answer"]), [str(w) for w in wrong], metadata)
        )
    return instances


class TruthfulQAScenario(FileScenario):
    """Questions that some humans answer falsely because of misconceptions."""

    plan_samples_prompts = True
    """Its files are small: ``--plan`` sizes prompts on a sample of real instances when they are here."""

    info = ScenarioInfo(
        name="truthful_qa",
        description="TruthfulQA (multiple choice): pick the true answer among common misconceptions.",
        task="multiple_choice",
        default_adapter=multiple_choice_joint_format(),
        main_metric="exact_match",
        metric_categories=CLASSIFICATION_CATEGORIES,
        not_applicable_reasons=CLASSIFICATION_NOT_APPLICABLE,
        args_schema={
            "type": "object",
            "properties": {"hf_revision": hf_revision_schema()},
            "additionalProperties": False,
        },
        tags=("knowledge", "harms", "multiple_choice", "core"),
    )

    def __init__(self, hf_revision: str = HF_REVISION_UNPINNED) -> None:
        self.hf_revision = check_revision(hf_revision)

    @classmethod
    def estimate_num_instances(cls, args: dict[str, Any]) -> int | None:
        return _SIZE - int(_SIZE * _TRAIN_FRACTION)

    def data_needs(self) -> DataNeeds:
        return DataNeeds(
            "truthful_qa",
            layouts=(
                (DataFile("TruthfulQA.csv", downloads=(Download(_URL),)),),
                hf_layout(_HF_REPO, self.hf_revision, [_HF_FILE]),
            ),
            hint=f"https://github.com/sylinrl/TruthfulQA (TruthfulQA.csv); {hf_hint(_HF_REPO)}",
        )

    def load(self, data: ResolvedData) -> list[Instance]:
        instances = _read_hf(data[f"hf/{_HF_FILE}"]) if data.layout == 1 else self._read_csv(data["TruthfulQA.csv"])
        return with_train_pool(instances, int(len(instances) * _TRAIN_FRACTION), "truthful_qa-train-pool")

    def _read_csv(self, path: Path) -> list[Instance]:
        instances = []
        for number, row in enumerate(read_csv_dicts(path), start=2):
            where = f"{path}:{number}"
            try:
                question, best, wrong = row["Question"], row["Best Answer"], row["Incorrect Answers"]
            except KeyError as exc:
                raise DataSourceError(f"{where}: missing column {exc.args[0]!r}; columns: {sorted(row)}") from None
            metadata = {"category": row.get("Category", ""), "type": row.get("Type", "")}
            instances.append(_instance(number - 2, question, best, wrong.split(";"), metadata))
        return instances
