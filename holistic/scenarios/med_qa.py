"""MedQA (Jin et al., 2021): US medical-licensing questions, four options, as HELM 0.5.16 runs them.

HELM's protocol (``med_qa``): multiple choice (joint), instructions "The following are multiple
choice questions (with answers) about medicine.", ``Question: <question>``, the four options
lettered ``A.`` to ``D.``, ``Answer:``; five in-context examples from the training file; scored
by exact match on the letter (HELM's headline, quasi exact match, equals it on a letter mapped to a
choice).

Data: the authors' ``data_clean/questions/US/4_options/phrases_no_exclude_{train,dev,test}.jsonl``
(JSON Lines: ``question``, ``answer``, ``options`` {A..D}, ``meta_info``, ``answer_idx``, ...), from
the ``data_clean.zip`` HELM downloads. As HELM does, every row must have four options, an option
text loses a trailing ``"`` and whitespace (an upstream quirk: ``'Pulmonary embolism\\n"'``), and
the option whose key is ``answer_idx`` is correct; an ``answer_idx`` that is not an option key is
an error naming the file and line. HELM evaluates dev (its ``valid`` split) and test together and
draws in-context examples from train: when only the test file is here, a fixed seeded set of 100
test questions is the example pool and the other 1,173 are evaluated (not comparable with HELM's
published numbers), and ``--plan`` says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path

from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import CORRECT_TAG, TEST_SPLIT, TRAIN_SPLIT, VALID_SPLIT, Instance, Reference
from holistic.scenarios.base import PlanFacts
from holistic.scenarios.loading.categories import CLASSIFICATION
from holistic.scenarios.loading.common import FileScenario, with_train_pool
from holistic.scenarios.loading.prompt_format import multiple_choice_joint_format
from holistic.scenarios.loading.readers import iter_located_jsonl, require
from holistic.scenarios.loading.sources import DataFile, DataNeeds, Download, ResolvedData, default_data_root

_ZIP = "https://drive.google.com/uc?export=download&id=1ImYUSLk9JbgHXOemfvyiDiirluZHPeQw&confirm=t"
_FOLDER = "data_clean/questions/US/4_options"
_KEYS = ("A", "B", "C", "D")
FILES: tuple[tuple[str, str], ...] = (
    ("train", TRAIN_SPLIT),
    ("dev", VALID_SPLIT),
    ("test", TEST_SPLIT),
)
"""(file part, split) in HELM's order (its ``ALL_SPLITS``: train, valid, test)."""
SIZES = {"train": 10178, "dev": 1272, "test": 1273}
POOL_FROM_TEST = 100
"""Without the train file: test questions held out (a fixed seeded set) as the in-context example pool."""


class _Layout(IntEnum):
    ALL_SPLITS = 0
    TEST_ONLY = 1


def split_path(part: str) -> str:
    return f"{_FOLDER}/phrases_no_exclude_{part}.jsonl"


def read_med_qa(path: Path, split: str) -> list[Instance]:
    """One instance per line, references in option-key order, as HELM's loader makes them."""
    out = []
    for number, where, row in iter_located_jsonl(path):
        question = require(row, "question", where)
        options = require(row, "options", where)
        answer = require(row, "answer_idx", where)
        if not isinstance(options, dict) or len(options) != 4 or not all(isinstance(v, str) for v in options.values()):
            raise DataSourceError(f"{where}: 'options' must map 4 keys to option texts, got {options!r}")
        if answer not in options:
            raise DataSourceError(f"{where}: answer_idx {answer!r} is not one of the option keys {', '.join(options)}")
        out.append(
            Instance(
                id=f"{split}-{number:05d}",
                input=str(question),
                references=tuple(
                    Reference(text.rstrip('"').rstrip(), (CORRECT_TAG,) if key == answer else ())
                    for key, text in options.items()
                ),
                split=split,
                metadata={"meta_info": str(row.get("meta_info", ""))},
            )
        )
    return out


@dataclass(frozen=True, kw_only=True)
class MedQAScenario(FileScenario):
    """USMLE-style four-option medical questions (MedQA, US)."""

    info = ScenarioInfo(
        name="med_qa",
        description="MedQA: four-option US medical licensing exam questions (biomedical knowledge).",
        task="multiple_choice",
        default_adapter=multiple_choice_joint_format(
            "The following are multiple choice questions (with answers) about medicine."
        ),
        # HELM headlines quasi_exact_match, which equals exact match on a letter mapped to a choice
        main_metric="exact_match",
        **CLASSIFICATION,
        tags=("knowledge", "biomedical", "multiple_choice", "lite"),
    )
    samples_prompts = True

    def plan_facts(self, data_root: Path | None, max_eval_instances: int | None) -> PlanFacts:
        notes = []
        root = data_root if data_root is not None else default_data_root()
        if root is not None:
            base = Path(root) / "med_qa"
            missing = [split_path(part) for part, _ in FILES if not (base / split_path(part)).is_file()]
            if split_path("test") in missing:
                notes.append(
                    f"med_qa: {split_path('test')} not under {base}: fetched from Google Drive, or the run fails"
                )
            elif missing:
                notes.append(
                    f"med_qa: {', '.join(missing)} not under {base}: HELM draws in-context examples from the train "
                    "file and evaluates dev with test; here 100 test questions are the example pool and the rest are evaluated"
                )
        return PlanFacts(num_instances=sum(SIZES.values()), notes=tuple(notes), samples_prompts=True)

    def data_needs(self) -> DataNeeds:
        def file(part: str) -> DataFile:
            return DataFile(split_path(part), downloads=(Download(_ZIP, member=split_path(part)),))

        return DataNeeds(
            "med_qa",
            layouts=(tuple(file(part) for part, _ in FILES), (file("test"),)),
            hint="https://github.com/jind11/MedQA (data_clean.zip on Google Drive)",
        )

    def load(self, data: ResolvedData) -> list[Instance]:
        if data.layout == _Layout.ALL_SPLITS:
            return [inst for part, split in FILES for inst in read_med_qa(data[split_path(part)], split)]
        return with_train_pool(read_med_qa(data[split_path("test")], TEST_SPLIT), POOL_FROM_TEST, "med_qa-train-pool")
