"""MMLU-Pro (Wang et al., 2024): MMLU made harder, up to ten choices per question.

HELM Capabilities' setup (HELM 0.5.16 ``get_mmlu_pro_spec(subject="all",
use_chain_of_thought=true, use_few_shot=false)``; prompts and request parameters checked
against HELM's own code on rows in the release's format by
``tests/conformance/test_conformance_capabilities.py``; the real release is not here, so
reading it is claimed): zero-shot chain of thought with the
prompt of :mod:`holistic.scenarios.loading.capabilities_prompts` (choices ``A.``...``J.``),
scored by ``chain_of_thought_correctness``. As HELM does, the ``validation`` split is
the in-context pool (unused zero-shot) and ``test`` is evaluated; ``subject`` keeps one
``category`` (``_`` read as a space, HELM's spelling) or ``all``; instance ids are
``id<question_id>``; every choice whose text equals the keyed answer's is correct.

Data: the authors' release on the Hugging Face Hub, ``TIGER-Lab/MMLU-Pro`` (Parquet:
``data/test-00000-of-00001.parquet`` and ``data/validation-00000-of-00001.parquet``,
columns ``question_id``, ``question``, ``options`` (list of strings), ``answer`` (a
letter), ``answer_index``, ``cot_content``, ``category``, ``src``; MIT). Downloads go to
HELM's revision by default (``hf_revision``); the Hub could not be reached to record
sha256 sums, so put the files under the data root for an offline, checked copy.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import Any

from holistic.core.arguments import arg
from holistic.core.errors import DataSourceError
from holistic.core.types import CORRECT_TAG, TEST_SPLIT, TRAIN_SPLIT, Instance, Reference
from holistic.scenarios.loading.capabilities_prompts import chain_of_thought_info
from holistic.scenarios.loading.common import FileScenario, hf_file
from holistic.scenarios.loading.hf_copy import check_revision, read_parquet_rows, row_where
from holistic.scenarios.loading.sources import DataFile, DataNeeds, Download, ResolvedData

HF_REPO = "TIGER-Lab/MMLU-Pro"
HELM_REVISION = "3373e0b"
"""The revision HELM 0.5.16 loads (a short commit hash of the Hub repo)."""
TEST = "data/test-00000-of-00001.parquet"
VALIDATION = "data/validation-00000-of-00001.parquet"
COLUMNS = ("question_id", "question", "options", "answer", "category")
LETTERS = "ABCDEFGHIJ"
ALL = "all"
CATEGORIES = (
    "biology", "business", "chemistry", "computer science", "economics", "engineering", "health",
    "history", "law", "math", "other", "philosophy", "physics", "psychology",
)  # fmt: skip
"""The 14 categories of the release."""


def read_row(row: dict[str, Any], split: str, where: str) -> Instance:
    question, options, answer = row["question"], row["options"], row["answer"]
    if not isinstance(question, str) or not question.strip():
        raise DataSourceError(f"{where}: empty question")
    if (
        not isinstance(options, list)
        or not 2 <= len(options) <= len(LETTERS)
        or not all(isinstance(o, str) for o in options)
    ):
        raise DataSourceError(f"{where}: options must be a list of 2 to {len(LETTERS)} strings")
    if not isinstance(answer, str) or answer not in LETTERS[: len(options)]:
        raise DataSourceError(f"{where}: answer {answer!r} is not the letter of one of its {len(options)} options")
    keyed = options[LETTERS.index(answer)]
    return Instance(
        id=f"id{row['question_id']}",
        input=question,
        references=tuple(Reference(o, (CORRECT_TAG,) if o == keyed else ()) for o in options),
        split=split,
        metadata={"category": row["category"], "src": row.get("src") or ""},
    )


def read_mmlu_pro(path: Path, split: str, subject: str) -> list[Instance]:
    only = None if subject == ALL else ("category", [subject])
    rows = read_parquet_rows(path, COLUMNS, optional=("src",), only=only)
    return [read_row(row, split, row_where(path, i)) for i, row in enumerate(rows)]


class _Layout(IntEnum):
    """The layouts of :meth:`data_needs`, by their index in ``DataNeeds.layouts``."""

    TEST_AND_VALIDATION = 0
    """The test and validation files."""
    TEST_ONLY = 1
    """The test file alone."""


@dataclass(frozen=True, kw_only=True)
class MMLUProScenario(FileScenario):
    """MMLU-Pro, zero-shot chain of thought as HELM Capabilities runs it."""

    notes_missing_files = True

    info = chain_of_thought_info(
        "mmlu_pro",
        "MMLU-Pro: ten-choice questions in 14 categories, zero-shot chain of thought, answer letter parsed.",
        "A. ",
        "category",
    )
    num_instances = 12032

    subject: str = arg(ALL, description="a category (e.g. computer_science) or all")
    hf_revision: str = arg(HELM_REVISION, minLength=1)

    def __post_init__(self) -> None:
        name = self.subject.replace("_", " ")
        if name != ALL and name not in CATEGORIES:
            from holistic.core.errors import UnknownNameError

            raise UnknownNameError("MMLU-Pro subject", self.subject, [ALL, *(c.replace(" ", "_") for c in CATEGORIES)])
        object.__setattr__(self, "subject", name)
        check_revision(self.hf_revision)

    def _file(self, path: str) -> DataFile:
        return DataFile(path, downloads=(Download(hf_file(HF_REPO, self.hf_revision, path)),))

    def data_needs(self) -> DataNeeds:
        return DataNeeds(
            "mmlu_pro",
            layouts=((self._file(TEST), self._file(VALIDATION)), (self._file(TEST),)),
            hint=f"https://huggingface.co/datasets/{HF_REPO} ({TEST}, {VALIDATION})",
        )

    def load(self, data: ResolvedData) -> list[Instance]:
        out = read_mmlu_pro(data[TEST], TEST_SPLIT, self.subject)
        if data.layout == _Layout.TEST_AND_VALIDATION:
            out = read_mmlu_pro(data[VALIDATION], TRAIN_SPLIT, self.subject) + out
        return out
