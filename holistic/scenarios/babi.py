"""bAbI (Weston et al., 2015): 20 toy reasoning tasks over short stories.

Each question is asked about the story so far (the statements since the last line
numbered 1; earlier questions are not part of it). HELM's prompt: ``Passage:`` then
the story's statements, one per line, then ``Question: <question>``, and
``Answer:``; five in-context examples; greedy decoding of a few tokens; scored by
exact match (``quasi_exact_match`` main). Task 19's compass letters become words
(``s,w`` -> ``south west``) as in HELM. Every value is also reported per task
(``task=3``).

Data: the authors' ``tasks_1-20_v1-2`` release (CC BY 3.0) in its ``en/`` folder,
``qa<N>_<name>_{train,test}.txt`` (1,000 questions each). HELM reads the
``en-valid/`` folder of the same release instead (train re-split into train and
valid: ``qa<N>_{train,valid,test}.txt``), which is used when present.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from enum import IntEnum
from pathlib import Path
from typing import Any

from holistic.core.arguments import arg
from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import CORRECT_TAG, TEST_SPLIT, TRAIN_SPLIT, VALID_SPLIT, Instance, Reference
from holistic.scenarios.base import PlanFacts
from holistic.scenarios.loading.categories import OPEN_QA_NOT_APPLICABLE
from holistic.scenarios.loading.common import FileScenario
from holistic.scenarios.loading.part_files import github_file
from holistic.scenarios.loading.prompt_format import prompt_format
from holistic.scenarios.loading.readers import open_text
from holistic.scenarios.loading.sources import DataFile, DataNeeds, Download, ResolvedData

_TARBALL = "http://www.thespermwhale.com/jaseweston/babi/tasks_1-20_v1-2.tar.gz"
_REPO = "ethancaballero/Improved-Dynamic-Memory-Networks-DMN-plus"
_COMMIT = "406d0f033686cc06151493cba111706b6d03d43f"
ALL = "all"
TASKS: dict[int, str] = {
    1: "single-supporting-fact",
    2: "two-supporting-facts",
    3: "three-supporting-facts",
    4: "two-arg-relations",
    5: "three-arg-relations",
    6: "yes-no-questions",
    7: "counting",
    8: "lists-sets",
    9: "simple-negation",
    10: "indefinite-knowledge",
    11: "basic-coreference",
    12: "conjunction",
    13: "compound-coreference",
    14: "time-reasoning",
    15: "basic-deduction",
    16: "basic-induction",
    17: "positional-reasoning",
    18: "size-reasoning",
    19: "path-finding",
    20: "agents-motivations",
}
_DIRECTIONS = {"n": "north", "s": "south", "e": "east", "w": "west"}
_LINE = re.compile(r"^(\d+) (.*)$")


def path_in_words(answer: str) -> str:
    """Task 19's ``s,w`` as HELM writes it: ``south west``."""
    return " ".join(_DIRECTIONS[step] for step in answer.split(","))


def read_task(path: Path, task: int, split: str) -> list[Instance]:
    """Questions of one bAbI file; a malformed line names its file and number."""
    out: list[Instance] = []
    story: list[str] = []
    with open_text(path) as fh:
        for number, raw in enumerate(fh, start=1):
            line = raw.rstrip("\n")
            if not line.strip():
                continue
            match = _LINE.match(line)
            if match is None:
                raise DataSourceError(f"{path}:{number}: expected '<n> <text>', got {line[:60]!r}")
            if match.group(1) == "1":
                story = []
            text = match.group(2)
            if "\t" not in text:
                story.append(text.strip())
                continue
            fields = text.split("\t")
            if len(fields) < 2 or not fields[1].strip():
                raise DataSourceError(f"{path}:{number}: a question line needs '<question>\\t<answer>\\t<facts>'")
            question, answer = fields[0].strip(), fields[1].strip()
            if task == 19:
                if any(step not in _DIRECTIONS for step in answer.split(",")):
                    raise DataSourceError(f"{path}:{number}: task 19 answer {answer!r} is not a list of n/s/e/w")
                answer = path_in_words(answer)
            out.append(
                Instance(
                    id=f"qa{task}-{split}-{number}",
                    input="\n".join(story) + f"\nQuestion: {question}",
                    references=(Reference(answer, (CORRECT_TAG,)),),
                    split=split,
                    metadata={"task": task},
                )
            )
    return out


def _tasks(task: Any) -> list[int]:
    if task == ALL:
        return sorted(TASKS)
    if isinstance(task, int) and task in TASKS:
        return [task]
    raise ValueError(f"bAbI task must be 1..20 or 'all', not {task!r}")


class _Layout(IntEnum):
    """The layouts of :meth:`data_needs`, by their index in ``DataNeeds.layouts``."""

    HELM_VALID = 0
    """The ``en-valid`` files HELM reads."""
    RELEASE = 1
    """The ``en`` files of the release."""


@dataclass(frozen=True, kw_only=True)
class BabiQAScenario(FileScenario):
    """Story-based reasoning questions (20 tasks)."""

    samples_prompts = True

    info = ScenarioInfo(
        name="babi_qa",
        description="bAbI: 20 reasoning tasks over short stories (one-word answers).",
        task="qa",
        default_adapter=prompt_format(input_prefix="Passage: ", output_prefix="Answer: ", max_tokens=5),
        main_metric="quasi_exact_match",
        metric_categories=("accuracy", "calibration", "robustness", "fairness", "efficiency"),
        not_applicable_reasons={
            **OPEN_QA_NOT_APPLICABLE,
            "bias": "answers are one or two words",
            "toxicity": "answers are one or two words",
        },
        tags=("reasoning", "targeted:reasoning"),
        breakdowns=("task",),
    )

    task: int | str = arg(ALL, schema={"oneOf": [{"const": ALL}, {"type": "integer", "minimum": 1, "maximum": 20}]})

    def __post_init__(self) -> None:
        _tasks(self.task)

    @property
    def tasks(self) -> list[int]:
        return _tasks(self.task)

    def plan_facts(self, data_root: Path | None, max_eval_instances: int | None) -> PlanFacts:
        return replace(super().plan_facts(data_root, max_eval_instances), num_instances=1000 * len(self.tasks))

    def data_needs(self) -> DataNeeds:
        helm: list[DataFile] = []
        release: list[DataFile] = []
        for n in self.tasks:
            for split in ("train", "valid", "test"):
                name = f"tasks_1-20_v1-2/en-valid/qa{n}_{split}.txt"
                helm.append(DataFile(name, downloads=(Download(_TARBALL, member=name),)))
            for split in ("train", "test"):
                name = f"tasks_1-20_v1-2/en/qa{n}_{TASKS[n]}_{split}.txt"
                mirror = github_file("babi", name, _REPO, _COMMIT, f"data/{name}")
                release.append(
                    DataFile(name, downloads=(*mirror.downloads, Download(_TARBALL, member=name)), sha256=mirror.sha256)
                )
        return DataNeeds(
            "babi", layouts=(tuple(helm), tuple(release)), hint="https://research.facebook.com/downloads/babi/"
        )

    def load(self, data: ResolvedData) -> list[Instance]:
        out: list[Instance] = []
        splits = {"train": TRAIN_SPLIT, "valid": VALID_SPLIT, "test": TEST_SPLIT}
        for n in self.tasks:
            for split, tag in splits.items():
                name = (
                    f"tasks_1-20_v1-2/en-valid/qa{n}_{split}.txt"
                    if data.layout == _Layout.HELM_VALID
                    else f"tasks_1-20_v1-2/en/qa{n}_{TASKS[n]}_{split}.txt"
                )
                if name in data.paths:
                    out.extend(read_task(data[name], n, tag))
        return out
