"""TruthfulQA (Lin et al., 2022), multiple-choice form: pick the true answer.

Reads the authors' ``TruthfulQA.csv`` (``Question``, ``Best Answer``, ``Incorrect
Answers`` separated by ``; ``...): the choices are the best answer plus the incorrect
ones, in an order fixed by a seed from the question. The 817 questions have no
official split: a fixed seeded 20% is the in-context pool (``train``), the rest
is ``valid``.
"""

from __future__ import annotations

import random
from typing import Any

from holistic.core.errors import DataSourceError
from holistic.core.hashing import stable_seed
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import VALID_SPLIT, Instance
from holistic.scenarios.categories import CLASSIFICATION_CATEGORIES, CLASSIFICATION_NOT_APPLICABLE
from holistic.scenarios.loading import FileScenario, choice_references, with_train_pool
from holistic.scenarios.prompt_format import multiple_choice_joint_format
from holistic.scenarios.readers import read_csv_dicts
from holistic.scenarios.registry import SCENARIOS
from holistic.scenarios.sources import DataFile, DataNeeds, Download, ResolvedData

_URL = "https://raw.githubusercontent.com/sylinrl/TruthfulQA/main/TruthfulQA.csv"
_TRAIN_FRACTION = 0.2
_SIZE = 817


@SCENARIOS.register("truthful_qa")
class TruthfulQAScenario(FileScenario):
    """Questions that some humans answer falsely because of misconceptions."""

    info = ScenarioInfo(
        name="truthful_qa",
        description="TruthfulQA (multiple choice): pick the true answer among common misconceptions.",
        task="multiple_choice",
        default_adapter=multiple_choice_joint_format(),
        main_metric="exact_match",
        metric_categories=CLASSIFICATION_CATEGORIES,
        not_applicable_reasons=CLASSIFICATION_NOT_APPLICABLE,
        args_schema={"type": "object", "properties": {}, "additionalProperties": False},
        tags=("knowledge", "harms", "multiple_choice", "core"),
    )

    @classmethod
    def estimate_num_instances(cls, args: dict[str, Any]) -> int | None:
        return _SIZE - int(_SIZE * _TRAIN_FRACTION)

    def data_needs(self) -> DataNeeds:
        return DataNeeds(
            "truthful_qa",
            layouts=((DataFile("TruthfulQA.csv", downloads=(Download(_URL),)),),),
            hint="https://github.com/sylinrl/TruthfulQA (TruthfulQA.csv)",
        )

    def load(self, data: ResolvedData) -> list[Instance]:
        path = data["TruthfulQA.csv"]
        instances = []
        for number, row in enumerate(read_csv_dicts(path), start=2):
            where = f"{path}:{number}"
            try:
                question, best, wrong = row["Question"], row["Best Answer"], row["Incorrect Answers"]
            except KeyError as exc:
                raise DataSourceError(f"{where}: missing column {exc.args[0]!r}; columns: {sorted(row)}") from None
            choices = [best.strip()] + [w.strip() for w in wrong.split(";") if w.strip()]
            order = list(range(len(choices)))
            random.Random(stable_seed("truthful_qa-choices", question)).shuffle(order)
            instances.append(
                Instance(
                    id=f"q{number - 2:04d}",
                    input=question.strip(),
                    references=choice_references([choices[i] for i in order], order.index(0)),
                    split=VALID_SPLIT,
                    metadata={"category": row.get("Category", ""), "type": row.get("Type", "")},
                )
            )
        return with_train_pool(instances, int(len(instances) * _TRAIN_FRACTION), "truthful_qa-train-pool")
