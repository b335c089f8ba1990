"""GPQA (Rein et al., 2023): graduate-level, "Google-proof" multiple-choice questions.

HELM Capabilities' setup (HELM 0.5.16 ``get_gpqa_spec(subset, use_chain_of_thought=true,
use_few_shot=false)``; ids, prompts and request parameters of all 446 ``gpqa_main``
instances checked against HELM's own code by ``tests/conformance/test_conformance_capabilities.py``,
the other subsets claimed): zero-shot chain of thought with the
prompt of :mod:`holistic.scenarios.loading.capabilities_prompts` (choices ``(A)``...``(D)``),
scored by ``chain_of_thought_correctness``. As HELM does, each question's four answers
(correct first in the file) are shuffled by one ``random.Random(42)`` in file order;
the rows HELM keeps as few-shot examples (``gpqa_main`` rows 339 and 105,
``gpqa_diamond`` 124 and 39, ``gpqa_extended`` 146, 330 and 436, with their
``Explanation`` as chain of thought) are the training split and are not evaluated;
instance ids are HELM's (``id<row>``).

Data: the authors' ``dataset.zip`` (``idavidrein/gpqa`` at a pinned commit, sha256
checked; CC BY 4.0). Its members are encrypted with the password the authors publish
in their README so that the questions stay out of web crawls; as they ask, the zip is
read in memory and nothing is extracted to disk. HELM reads the Hugging Face copy
``Idavidrein/gpqa`` of the same CSV files.
"""

from __future__ import annotations

import csv
import io
import random
import zipfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from holistic.core.arguments import arg
from holistic.core.errors import DataSourceError
from holistic.core.types import CORRECT_TAG, TEST_SPLIT, TRAIN_SPLIT, Instance, Reference
from holistic.scenarios.base import PlanFacts
from holistic.scenarios.loading.capabilities_prompts import chain_of_thought_info
from holistic.scenarios.loading.common import FileScenario
from holistic.scenarios.loading.part_files import github_file
from holistic.scenarios.loading.sources import DataNeeds, ResolvedData

_REPO = "idavidrein/gpqa"
_COMMIT = "56686c06f5e19865c153de0fdb11be3890014df7"
ZIP = "dataset.zip"
PASSWORD = b"deserted-untie-orchid"
"""Published by the authors in their README (it keeps the CSVs out of crawls, it is not a secret)."""

SUBSETS = ("gpqa_main", "gpqa_diamond", "gpqa_extended")
TRAIN_ROWS = {"gpqa_main": (339, 105), "gpqa_diamond": (124, 39), "gpqa_extended": (146, 330, 436)}
"""HELM's few-shot rows (found in the authors' repository), by 0-based row index."""
SHUFFLE_SEED = 42
MAX_MEMBER_BYTES = 64 * 1024 * 1024
"""A member larger than this uncompressed is refused (the real ones are below 5 MB)."""
_ANSWERS = ("Correct Answer", "Incorrect Answer 1", "Incorrect Answer 2", "Incorrect Answer 3")


def read_member(path: Path, member: str) -> str:
    """One CSV of the zip, decrypted in memory (never written to disk)."""
    try:
        with zipfile.ZipFile(path) as archive:
            try:
                entry = archive.getinfo(member)
            except KeyError:
                raise DataSourceError(
                    f"{path}: no member {member!r}; members: {', '.join(archive.namelist())}"
                ) from None
            if entry.file_size > MAX_MEMBER_BYTES:
                raise DataSourceError(f"{path}: member {member!r} is {entry.file_size} bytes, above the limit")
            data = archive.read(entry, pwd=PASSWORD)
    except (zipfile.BadZipFile, RuntimeError) as exc:
        raise DataSourceError(f"{path}: cannot read {member!r}: {exc}") from None
    return data.decode("utf-8-sig")


def read_gpqa(path: Path, subset: str) -> list[Instance]:
    """The subset's questions as HELM builds them (answers shuffled by one seeded generator)."""
    member = f"dataset/{subset}.csv"
    rows = list(csv.DictReader(io.StringIO(read_member(path, member), newline="")))
    rng = random.Random(SHUFFLE_SEED)
    train = set(TRAIN_ROWS[subset])
    out = []
    for index, row in enumerate(rows):
        where = f"{path}!{member}: row {index + 1}"
        missing = [c for c in ("Question", *_ANSWERS) if not (row.get(c) or "").strip()]
        if missing:
            raise DataSourceError(f"{where}: empty or missing column(s) {missing}")
        references = [Reference(row[c].strip(), (CORRECT_TAG,) if c == _ANSWERS[0] else ()) for c in _ANSWERS]
        rng.shuffle(references)
        metadata: dict[str, Any] = {
            "subdomain": row.get("Subdomain", ""),
            "domain": row.get("High-level domain", ""),
        }
        if index in train:
            metadata["chain_of_thought"] = row.get("Explanation", "")
        out.append(
            Instance(
                id=f"id{index}",
                input=row["Question"].strip(),
                references=tuple(references),
                split=TRAIN_SPLIT if index in train else TEST_SPLIT,
                metadata=metadata,
            )
        )
    return out


@dataclass(frozen=True, kw_only=True)
class GPQAScenario(FileScenario):
    """GPQA, zero-shot chain of thought as HELM Capabilities runs it."""

    samples_prompts = True

    info = chain_of_thought_info(
        "gpqa",
        "GPQA: graduate-level science questions (4 choices), zero-shot chain of thought, answer letter parsed.",
        "(A) ",
        "domain",
    )

    subset: str = arg("gpqa_main", enum=SUBSETS)

    def __post_init__(self) -> None:
        if self.subset not in SUBSETS:
            raise ValueError(f"subset must be one of {', '.join(SUBSETS)}, not {self.subset!r}")

    def plan_facts(self, data_root: Path | None, max_eval_instances: int | None) -> PlanFacts:
        sizes = {"gpqa_main": 448, "gpqa_diamond": 198, "gpqa_extended": 546}
        facts = super().plan_facts(data_root, max_eval_instances)
        return replace(facts, num_instances=sizes[self.subset] - len(TRAIN_ROWS[self.subset]))

    def data_needs(self) -> DataNeeds:
        return DataNeeds(
            "gpqa",
            layouts=((github_file("gpqa", ZIP, _REPO, _COMMIT, ZIP),),),
            hint=f"https://github.com/{_REPO} ({ZIP}, kept zipped)",
        )

    def load(self, data: ResolvedData) -> list[Instance]:
        return read_gpqa(data[ZIP], self.subset)
