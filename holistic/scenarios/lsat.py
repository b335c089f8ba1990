"""LSAT analytical reasoning (AR-LSAT; Zhong et al., 2021), HELM's ``lsat_qa``.

Logic games from past LSAT exams: a passage of rules, then questions with five (a
few with four) options. HELM's protocol: multiple choice (joint), instructions "The
following are multiple choice questions (with answers).", ``Passage: <passage>\\n
Question: <question>``, five in-context examples from the training file. The
question type is ``tags[2]`` of each question (empty -> ``miscellaneous``); ``task``
selects a type family as HELM does (``grouping``, ``ordering``, ``assignment``,
``miscellaneous``) and every value is also reported per question type.

Data: ``AR_{Training,Development,Test}Data.json`` from ``zhongwanjun/AR-LSAT`` at
a pinned commit (MIT).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from holistic.core.arguments import arg
from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import TEST_SPLIT, TRAIN_SPLIT, VALID_SPLIT, Instance
from holistic.scenarios.loading.categories import CLASSIFICATION
from holistic.scenarios.loading.common import SplitFilesScenario, check_choice, choice_references
from holistic.scenarios.loading.part_files import github_file
from holistic.scenarios.loading.prompt_format import multiple_choice_joint_format
from holistic.scenarios.loading.readers import read_json, require
from holistic.scenarios.loading.sources import DataNeeds

_REPO = "zhongwanjun/AR-LSAT"
_COMMIT = "41f78ca7be3e24602b694b9d6b78105fc0c8bfc6"
ALL = "all"
TYPE_FAMILIES: dict[str, tuple[str, ...]] = {
    "grouping": ("in/out grouping", "distribution grouping"),
    "ordering": ("simple ordering", "relative ordering", "complex ordering"),
    "assignment": ("determined assignment", "undetermined assignment"),
    "miscellaneous": (),
}


def question_type(tags: Any) -> str:
    """HELM's question type: ``tags[2]`` with one spelling fixed, or ``miscellaneous``."""
    raw = tags[2] if isinstance(tags, list) and len(tags) > 2 and isinstance(tags[2], str) else ""
    return raw.replace("grouping (distribution)", "distribution grouping") or "miscellaneous"


def family(qtype: str) -> str:
    return next((name for name, members in TYPE_FAMILIES.items() if qtype in members), "miscellaneous")


def read_lsat(path: Path, split: str) -> list[Instance]:
    data = read_json(path)
    if not isinstance(data, list):
        raise DataSourceError(f"{path}: expected a JSON list of passages")
    out = []
    for p_index, passage in enumerate(data):
        where = f"{path}: passage {p_index}"
        text = str(require(passage, "passage", where))
        for q_index, q in enumerate(require(passage, "questions", where)):
            q_where = f"{where}, question {q_index}"
            options = require(q, "options", q_where)
            answer = require(q, "answer", q_where)
            if not isinstance(options, list) or not options:
                raise DataSourceError(f"{q_where}: 'options' must be a non-empty list")
            index = ord(answer) - ord("A") if isinstance(answer, str) and len(answer) == 1 else -1
            if not 0 <= index < len(options):
                raise DataSourceError(f"{q_where}: answer {answer!r} is not one of the {len(options)} option letters")
            qtype = question_type(q.get("tags"))
            out.append(
                Instance(
                    id=str(require(q, "id", q_where)),
                    input=f"{text}\nQuestion: {require(q, 'question', q_where)}",
                    references=choice_references([str(o) for o in options], index),
                    split=split,
                    metadata={"question_type": qtype, "type_family": family(qtype)},
                )
            )
    return out


@dataclass(frozen=True, kw_only=True)
class LSATScenario(SplitFilesScenario):
    """Analytical-reasoning logic games from the LSAT."""

    samples_prompts = True

    info = ScenarioInfo(
        name="lsat_qa",
        description="LSAT (AR-LSAT): analytical-reasoning logic games, five-option multiple choice.",
        task="multiple_choice",
        default_adapter={
            **multiple_choice_joint_format("The following are multiple choice questions (with answers)."),
            "input_prefix": "Passage: ",
        },
        main_metric="exact_match",
        **CLASSIFICATION,
        tags=("reasoning", "targeted:reasoning"),
        breakdowns=("question_type",),
    )
    split_files = (
        ("AR_TrainingData.json", TRAIN_SPLIT),
        ("AR_DevelopmentData.json", VALID_SPLIT),
        ("AR_TestData.json", TEST_SPLIT),
    )
    hint = f"https://github.com/{_REPO} (data/)"
    num_instances = 461

    task: str = arg(ALL, enum=(ALL, *TYPE_FAMILIES))

    def __post_init__(self) -> None:
        check_choice(self.task, [ALL, *TYPE_FAMILIES], "LSAT task")

    def data_needs(self) -> DataNeeds:
        files = tuple(github_file("ar_lsat", name, _REPO, _COMMIT, f"data/{name}") for name, _ in self.split_files)
        return DataNeeds("ar_lsat", layouts=(files,), hint=self.hint)

    def read(self, path: Path, split: str) -> list[Instance]:
        rows = read_lsat(path, split)
        if self.task == ALL:
            return rows
        return [i for i in rows if i.metadata["type_family"] == self.task]
