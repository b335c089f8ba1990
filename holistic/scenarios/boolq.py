"""BoolQ (Clark et al., 2019): yes/no questions about a Wikipedia passage.

Reads the SuperGLUE packaging (``train.jsonl``, ``val.jsonl``; fields ``question``,
``passage`` as ``"Title -- text"``, ``idx``, ``label`` as a boolean or the strings
``"true"``/``"false"``) and the original Google release (``answer`` instead of
``label``, plus ``title``). HELM evaluates on the validation set. When only
``val.jsonl`` is present, a fixed seeded set of 100 validation questions becomes
the in-context example pool (``train``) and is left out of evaluation.

Hugging Face copy (used when the authors' files are absent): the SuperGLUE
packaging ``aps/super_glue``, ``hf/boolq/{train,validation}-00000-of-00001.parquet``
with columns ``question``, ``passage`` (``"Title -- text"``), ``idx`` and ``label``
(1 = true, 0 = false). Ids (``train-<idx>``, ``val-<idx>``), inputs, references and
splits are the same as from ``train.jsonl``/``val.jsonl``. The ``hf_revision`` arg
(default ``main``, not pinned) should be pinned to a commit of that repo.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import Any

from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import CORRECT_TAG, TRAIN_SPLIT, VALID_SPLIT, Instance, Reference
from holistic.scenarios.loading.categories import CLASSIFICATION
from holistic.scenarios.loading.common import with_train_pool
from holistic.scenarios.loading.hf_copy import HubCopy, read_parquet_rows, row_where
from holistic.scenarios.loading.hub_fallback import HubFallbackScenario
from holistic.scenarios.loading.prompt_format import prompt_format
from holistic.scenarios.loading.readers import iter_located_jsonl, require
from holistic.scenarios.loading.sources import DataFile, DataNeeds, Download, ResolvedData

_SUPERGLUE_ZIP = "https://dl.fbaipublicfiles.com/glue/superglue/data/v2/BoolQ.zip"
_SUPERGLUE_ZIP_SHA256 = "853fbe7922f70c59629f06a39e8d9ca440c3d740e760fd3b87a5ddf3dcba2436"
"""The archive's sha256 as two independent public projects that download it pin it."""
_POOL_FROM_VAL = 100
_VAL_SIZE = 3270
_HUB = HubCopy("aps/super_glue")
_HF_FILES = (("train", "boolq/train-00000-of-00001.parquet"), ("val", "boolq/validation-00000-of-00001.parquet"))
"""(authors' file stem, path in the Hub repo)."""


def _file(name: str) -> DataFile:
    return DataFile(name, downloads=(Download(_SUPERGLUE_ZIP, sha256=_SUPERGLUE_ZIP_SHA256, member=f"BoolQ/{name}"),))


def _label(row: dict[str, Any], where: str) -> bool:
    value = row["label"] if "label" in row else require(row, "answer", where)
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise DataSourceError(f"{where}: label {value!r} is neither true nor false")


def _instance(instance_id: str, question: str, passage: str, answer: bool, split: str) -> Instance:
    """HELM's BoolQ input: the passage (without its title), ``Question: `` and the question
    capitalised as ``str.capitalize`` does (first letter up, the rest lower) plus ``?``."""
    passage = _without_title(passage.strip())
    question = question.strip().capitalize()
    return Instance(
        id=instance_id,
        input=f"{passage}\nQuestion: {question}?",
        references=(
            Reference("Yes", (CORRECT_TAG,) if answer else ()),
            Reference("No", () if answer else (CORRECT_TAG,)),
        ),
        split=split,
    )


def _without_title(passage: str) -> str:
    """The passage text alone: SuperGLUE writes ``"Title -- text"``, HELM reads Google's
    release, whose ``passage`` has no title."""
    _title, sep, text = passage.partition(" -- ")
    return text.strip() if sep else passage


def _read(path: Path, split: str) -> list[Instance]:
    out = []
    for number, (_, where, row) in enumerate(iter_located_jsonl(path), start=1):
        question = str(require(row, "question", where))
        passage = str(require(row, "passage", where)).strip()
        if "title" in row:  # Google's release: the passage has no title to strip
            passage = f"{row['title']} -- {passage}"
        key = row.get("idx", number - 1)
        out.append(_instance(f"{Path(path).stem}-{key}", question, passage, _label(row, where), split))
    return out


def _read_hf(path: Path, stem: str, split: str) -> list[Instance]:
    out = []
    for index, row in enumerate(read_parquet_rows(path, ("question", "passage", "label"), optional=("idx",))):
        label = row["label"]
        if type(label) is not int or label not in (0, 1):
            raise DataSourceError(f"{row_where(path, index)}: label {label!r} is neither 1 (true) nor 0 (false)")
        key = row.get("idx", index)
        out.append(_instance(f"{stem}-{key}", str(row["question"]), str(row["passage"]), label == 1, split))
    return out


class _Layout(IntEnum):
    """The layouts of :meth:`data_needs`, by their index in ``DataNeeds.layouts``."""

    AUTHORS = 0
    """The SuperGLUE ``train.jsonl`` and ``val.jsonl``."""
    VALIDATION_ONLY = 1
    """``val.jsonl`` alone."""
    HUB_COPY = 2
    """The Hugging Face Parquet copy."""


@dataclass(frozen=True, kw_only=True)
class BoolQScenario(HubFallbackScenario):
    """Yes/no reading comprehension."""

    samples_prompts = True

    info = ScenarioInfo(
        name="boolq",
        description="BoolQ: yes/no questions about a Wikipedia passage (question answering).",
        task="qa",
        default_adapter=prompt_format(
            input_prefix="Passage: ",
            output_prefix="Answer: ",
            max_tokens=5,
        ),
        main_metric="quasi_exact_match",
        **CLASSIFICATION,
        tags=("question_answering", "core"),
    )
    num_instances = _VAL_SIZE
    hub = _HUB
    hf_revision: str = _HUB.revision_arg()

    def data_needs(self) -> DataNeeds:
        return DataNeeds(
            "boolq",
            layouts=(
                (_file("train.jsonl"), _file("val.jsonl")),
                (_file("val.jsonl"),),
                _HUB.layout(self.hf_revision, [p for _, p in _HF_FILES]),
            ),
            hint="SuperGLUE BoolQ.zip (https://super.gluebenchmark.com/tasks) or https://github.com/google-research-datasets/boolean-questions; "
            + _HUB.hint,
        )

    def load(self, data: ResolvedData) -> list[Instance]:
        if data.layout == _Layout.HUB_COPY:
            (train_stem, train_path), (val_stem, val_path) = _HF_FILES
            return _read_hf(data[f"hf/{train_path}"], train_stem, TRAIN_SPLIT) + _read_hf(
                data[f"hf/{val_path}"], val_stem, VALID_SPLIT
            )
        val = _read(data["val.jsonl"], VALID_SPLIT)
        if data.layout == _Layout.AUTHORS:
            return _read(data["train.jsonl"], TRAIN_SPLIT) + val
        return with_train_pool(val, _POOL_FROM_VAL, "boolq-train-pool")
