"""RAFT (Alex et al., 2021): 11 real-world few-shot text classification tasks.

Authors' format, per task folder: ``train.csv`` (50 labelled examples, with a header)
and ``task.json`` naming the data columns and the label names
(``{"data_columns": [...], "label_columns": {"Label": [...]}}``). Test labels are
private, so, as HELM does, the 50 labelled examples are split as Hugging Face
``datasets`` splits them with ``train_test_split(test_size=0.8, seed=42)``: a NumPy
``default_rng(42)`` permutation of the rows, the first 40 for ``test`` and the last 10
for the in-context pool (``train``), each in permutation order. ``num_train`` other
than 10 moves the cut (``test_size = 50 - num_train``).

Inputs and instructions are HELM's: the fields in the RAFT authors' order for the task
(``Field: value`` lines; fields such as ``ID`` or ``Paper link`` are not shown), and
the authors' task instructions followed by ``Possible labels:`` and the numbered label
names (``data/raft_prompt_settings.json``, with its provenance).

Hugging Face copy (used when the authors' files are absent): ``ought/raft`` in the
Hub's Parquet conversion (revision ``refs/convert/parquet``),
``hf/<task>/train/0000.parquet``: the data columns, ``ID`` and ``Label`` (an index
into the class names stored in the file's Hugging Face metadata, 0 meaning
unlabelled). Ids, inputs, references and splits are the same as from the authors'
files. The ``hf_revision`` arg defaults to that branch, which is not pinned: pin a
commit of it for reproducible runs (HELM loads ``ought/raft`` at revision
``9ee50172ea9afda2f1033c6f1b986e568b862fb3`` through its loading script).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from holistic.core.arguments import arg
from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import TEST_SPLIT, TRAIN_SPLIT, AdapterDefaults, Instance
from holistic.scenarios.base import PlanFacts
from holistic.scenarios.loading.categories import CLASSIFICATION_F1
from holistic.scenarios.loading.common import (
    check_choice,
    choice_references,
    github_raw,
    pinned_sha256,
)
from holistic.scenarios.loading.hf_copy import (
    HF_PARQUET_BRANCH,
    AuthorsOrHub,
    HubCopy,
    class_label_names,
    read_parquet_rows,
)
from holistic.scenarios.loading.hub_fallback import HubFallbackScenario
from holistic.scenarios.loading.prompt_format import prompt_format
from holistic.scenarios.loading.readers import read_csv_dicts, read_json
from holistic.scenarios.loading.sources import DataFile, DataNeeds, Download, ResolvedData

_REPO = "oughtinc/raft-baselines"
_COMMIT = "1f410eea45db450e237b375b0693431dad09f9a3"
_TRAIN_SIZE = 50
_HUB = HubCopy("ought/raft", HF_PARQUET_BRANCH)
_UNLABELLED = "Unlabeled"

_SETTINGS = json.loads(
    resources.files("holistic.scenarios").joinpath("data/raft_prompt_settings.json").read_text("utf-8")
)
FIELD_ORDERING: dict[str, list[str]] = _SETTINGS["field_ordering"]
LABELS: dict[str, list[str]] = _SETTINGS["labels"]
HELM_SPLIT_SEED = 42


def task_instructions(subset: str) -> str:
    """HELM's instructions for a task: the authors' text, then the numbered label names."""
    labels = "\n".join(f"{i + 1}. {name}" for i, name in enumerate(LABELS[subset]))
    return f"{_SETTINGS['instructions'][subset]}\nPossible labels:\n{labels}"


TASK_INSTRUCTIONS: dict[str, str] = {subset: task_instructions(subset) for subset in _SETTINGS["instructions"]}
SUBSETS: tuple[str, ...] = tuple(sorted(TASK_INSTRUCTIONS))


def _file(subset: str, name: str) -> DataFile:
    path = f"{subset}/{name}"
    return DataFile(
        path, downloads=(Download(github_raw(_REPO, _COMMIT, f"data/{path}")),), sha256=pinned_sha256("raft", path)
    )


@dataclass(frozen=True, kw_only=True)
class RAFTScenario(HubFallbackScenario):
    """One RAFT task per run, evaluated on held-out labelled examples."""

    info = ScenarioInfo(
        name="raft",
        description="RAFT: real-world few-shot text classification (11 tasks).",
        default_adapter=prompt_format(output_prefix="Label: ", max_tokens=30),
        main_metric="quasi_exact_match",
        **CLASSIFICATION_F1,
        tags=("classification", "core"),
    )
    hub = _HUB
    samples_prompts = True
    subset: str = arg(enum=SUBSETS)
    num_train: int = arg(10, minimum=1, maximum=_TRAIN_SIZE - 1)
    hf_revision: str = _HUB.revision_arg()

    def __post_init__(self) -> None:
        super().__post_init__()
        check_choice(self.subset, SUBSETS, "RAFT subset")
        num_train = self.num_train
        if isinstance(num_train, bool) or not isinstance(num_train, int) or not 1 <= num_train < _TRAIN_SIZE:
            raise ValueError(f"num_train must be an integer from 1 to {_TRAIN_SIZE - 1}, got {num_train!r}")

    def plan_facts(self, data_root: Path | None, max_eval_instances: int | None) -> PlanFacts:
        return replace(super().plan_facts(data_root, max_eval_instances), num_instances=_TRAIN_SIZE - self.num_train)

    def adapter_defaults(self) -> AdapterDefaults:
        """Adapter defaults for these args: the task's own instructions (without reading data)."""
        text = TASK_INSTRUCTIONS.get(self.subset)
        return {**self.info.default_adapter, **({"instructions": text} if text else {})}

    def data_needs(self) -> DataNeeds:
        return DataNeeds(
            "raft",
            layouts=(
                (_file(self.subset, "train.csv"), _file(self.subset, "task.json")),
                _HUB.layout(self.hf_revision, [self._hf_path]),
            ),
            hint=f"https://github.com/oughtinc/raft-baselines (data/<task>/); {_HUB.hint}",
        )

    @property
    def _hf_path(self) -> str:
        return f"{self.subset}/train/0000.parquet"

    def _instance(self, row_id: str, row: dict[str, Any], label_names: list[str], label: str) -> Instance:
        return Instance(
            id=f"{self.subset}-{row_id}",
            input="\n".join(f"{field}: {row[field]}" for field in FIELD_ORDERING[self.subset]),
            references=choice_references(label_names, label_names.index(label)),
            split=TEST_SPLIT,
            metadata={"subset": self.subset},
        )

    def _split(self, instances: list[Instance]) -> list[Instance]:
        """HELM's split (see the module docstring): test rows first, then the pool."""
        order = np.random.default_rng(HELM_SPLIT_SEED).permutation(len(instances))
        n_test = len(instances) - self.num_train
        test = [instances[int(i)] for i in order[:n_test]]
        pool = [replace(instances[int(i)], split=TRAIN_SPLIT) for i in order[n_test:]]
        return pool + test

    def _load_hf(self, data: ResolvedData) -> list[Instance]:
        path = data[f"hf/{self._hf_path}"]
        label_names = [n for n in class_label_names(path, "Label") if n != _UNLABELLED]
        instances = []
        for index, row in enumerate(read_parquet_rows(path, (*FIELD_ORDERING[self.subset], "Label"), optional=("ID",))):
            label = _label_name(str(row["Label"]), label_names, f"{path}: row {index + 1}")
            row_id = str(row["ID"]) if row.get("ID") is not None else str(index)
            instances.append(self._instance(row_id, row, label_names, label))
        return self._split(instances)

    def load(self, data: ResolvedData) -> list[Instance]:
        if data.layout == AuthorsOrHub.HUB_COPY:
            return self._load_hf(data)
        meta_path = data[f"{self.subset}/task.json"]
        meta = read_json(meta_path)
        try:
            (label_column, label_names), *_ = meta["label_columns"].items()
        except (KeyError, TypeError, ValueError, AttributeError):
            raise DataSourceError(f"{meta_path}: expected label_columns ({{column: [label names]}})") from None
        csv_path = data[f"{self.subset}/train.csv"]
        rows = read_csv_dicts(csv_path)
        instances = []
        for number, row in enumerate(rows, start=2):
            missing = [c for c in (*FIELD_ORDERING[self.subset], label_column) if c not in row]
            if missing:
                raise DataSourceError(f"{csv_path}: missing columns {missing}; columns present: {sorted(row)}")
            label = _label_name(row[label_column], label_names, f"{csv_path}:{number}")
            row_id = row.get("ID") or str(number - 2)
            instances.append(self._instance(row_id, row, label_names, label))
        return self._split(instances)


def _label_name(value: str, names: list[str], where: str) -> str:
    """A label given by name, or by 1-based index (the Hugging Face copy; 0 means unlabelled)."""
    if value in names:
        return value
    if value.strip().isdigit() and 1 <= int(value) <= len(names):
        return names[int(value) - 1]
    raise DataSourceError(f"{where}: label {value!r} is not one of the task's labels {names}")
