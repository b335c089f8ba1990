"""RAFT (Alex et al., 2021): 11 real-world few-shot text classification tasks.

Authors' format, per task folder: ``train.csv`` (50 labelled examples, with a header)
and ``task.json`` naming the data columns and the label names
(``{"data_columns": [...], "label_columns": {"Label": [...]}}``). Test labels are
private, so evaluation uses held-out labelled training examples: a fixed seeded
set of ``num_train`` examples is the in-context pool and the rest is ``test``.

Hugging Face copy (used when the authors' files are absent): ``ought/raft`` in the
Hub's Parquet conversion (revision ``refs/convert/parquet``),
``hf/<task>/train/0000.parquet``: the data columns, ``ID`` and ``Label`` (an index
into the class names stored in the file's Hugging Face metadata, 0 meaning
unlabelled). Ids, inputs, references and splits are the same as from the authors'
files; the copy has no task description, so the instructions are ours
(:data:`TASK_INSTRUCTIONS`). The ``hf_revision`` arg defaults to that branch, which
is not pinned: pin a commit of it for reproducible runs.
"""

from __future__ import annotations

from typing import Any

from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import TEST_SPLIT, Instance
from holistic.scenarios.categories import CLASSIFICATION_CATEGORIES, CLASSIFICATION_NOT_APPLICABLE
from holistic.scenarios.hf_copy import (
    HF_PARQUET_BRANCH,
    check_revision,
    class_label_names,
    column_names,
    hf_hint,
    hf_layout,
    hf_revision_schema,
    read_parquet_rows,
)
from holistic.scenarios.loading import (
    FileScenario,
    check_choice,
    choice_references,
    github_raw,
    pinned_sha256,
    with_train_pool,
)
from holistic.scenarios.prompt_format import prompt_format
from holistic.scenarios.readers import read_csv_dicts, read_json
from holistic.scenarios.registry import SCENARIOS
from holistic.scenarios.sources import DataFile, DataNeeds, Download, ResolvedData

_REPO = "oughtinc/raft-baselines"
_COMMIT = "1f410eea45db450e237b375b0693431dad09f9a3"
_TRAIN_SIZE = 50
_HF_REPO = "ought/raft"
_UNLABELLED = "Unlabeled"

# What each task asks, in our words (used when task.json has no description).
TASK_INSTRUCTIONS: dict[str, str] = {
    "ade_corpus_v2": "Label the sentence as ADE-related if it describes an adverse effect of a drug, otherwise as not ADE-related.",
    "banking_77": "Label the online-banking customer query with the intent it expresses.",
    "neurips_impact_statement_risks": "Label whether the NeurIPS paper's impact statement mentions a harmful application of the research.",
    "one_stop_english": "Label the reading level the news article was written for: elementary, intermediate or advanced.",
    "overruling": "Label whether the sentence from a legal opinion overrules a previous case.",
    "semiconductor_org_types": "Label the type of organisation that published the semiconductor paper: company, research institute or university.",
    "systematic_review_inclusion": "Label whether the paper should be included in a systematic review of charitable donation interventions.",
    "tai_safety_research": "Label whether the publication is research on the safety of transformative artificial intelligence.",
    "terms_of_service": "Label whether the sentence from a terms-of-service document is potentially unfair to consumers.",
    "tweet_eval_hate": "Label whether the tweet contains hate speech against immigrants or women.",
    "twitter_complaints": "Label whether the tweet is a complaint about a company or product.",
}
SUBSETS: tuple[str, ...] = tuple(sorted(TASK_INSTRUCTIONS))


def _file(subset: str, name: str) -> DataFile:
    path = f"{subset}/{name}"
    return DataFile(
        path, downloads=(Download(github_raw(_REPO, _COMMIT, f"data/{path}")),), sha256=pinned_sha256("raft", path)
    )


@SCENARIOS.register("raft")
class RAFTScenario(FileScenario):
    """One RAFT task per run, evaluated on held-out labelled examples."""

    info = ScenarioInfo(
        name="raft",
        description="RAFT: real-world few-shot text classification (11 tasks).",
        task="classification",
        default_adapter=prompt_format(
            instructions="Label the text with one of the task's labels.", output_prefix="Label: ", max_tokens=30
        ),
        main_metric="quasi_exact_match",
        metric_categories=CLASSIFICATION_CATEGORIES,
        not_applicable_reasons=CLASSIFICATION_NOT_APPLICABLE,
        args_schema={
            "type": "object",
            "properties": {
                "subset": {"enum": list(SUBSETS)},
                "num_train": {"type": "integer", "minimum": 1, "maximum": 49, "default": 10},
                "hf_revision": hf_revision_schema(HF_PARQUET_BRANCH),
            },
            "required": ["subset"],
            "additionalProperties": False,
        },
        tags=("classification", "core"),
    )

    def __init__(self, subset: str, num_train: int = 10, hf_revision: str = HF_PARQUET_BRANCH) -> None:
        self.hf_revision = check_revision(hf_revision)
        self.subset = check_choice(subset, SUBSETS, "RAFT subset")
        if isinstance(num_train, bool) or not isinstance(num_train, int) or not 1 <= num_train < _TRAIN_SIZE:
            raise ValueError(f"num_train must be an integer from 1 to {_TRAIN_SIZE - 1}, got {num_train!r}")
        self.num_train = num_train

    @classmethod
    def estimate_num_instances(cls, args: dict[str, Any]) -> int | None:
        return _TRAIN_SIZE - int(args.get("num_train", 10))

    @classmethod
    def default_adapter_for(cls, args: dict[str, Any]) -> dict[str, Any]:
        """Adapter defaults for these args: the task's own instructions (without reading data)."""
        text = TASK_INSTRUCTIONS.get(str(args.get("subset")))
        return {**cls.info.default_adapter, **({"instructions": text} if text else {})}

    def data_needs(self) -> DataNeeds:
        return DataNeeds(
            "raft",
            layouts=(
                (_file(self.subset, "train.csv"), _file(self.subset, "task.json")),
                hf_layout(_HF_REPO, self.hf_revision, [self._hf_path]),
            ),
            hint=f"https://github.com/oughtinc/raft-baselines (data/<task>/); {hf_hint(_HF_REPO)}",
        )

    @property
    def _hf_path(self) -> str:
        return f"{self.subset}/train/0000.parquet"

    def _instance(self, row_id: str, text: str, label_names: list[str], label: str, instructions: str) -> Instance:
        return Instance(
            id=f"{self.subset}-{row_id}",
            input=text,
            references=choice_references(label_names, label_names.index(label)),
            split=TEST_SPLIT,
            metadata={"subset": self.subset, "instructions": instructions},
        )

    def _load_hf(self, data: ResolvedData) -> list[Instance]:
        path = data[f"hf/{self._hf_path}"]
        label_names = [n for n in class_label_names(path, "Label") if n != _UNLABELLED]
        data_columns = [c for c in column_names(path) if c not in ("ID", "Label")]
        instances = []
        for index, row in enumerate(read_parquet_rows(path, (*data_columns, "Label"), optional=("ID",))):
            label = _label_name(str(row["Label"]), label_names, f"{path}: row {index + 1}")
            text = "\n".join(f"{column}: {row[column]}" for column in data_columns)
            row_id = str(row["ID"]) if row.get("ID") is not None else str(index)
            instances.append(self._instance(row_id, text, label_names, label, TASK_INSTRUCTIONS[self.subset]))
        return with_train_pool(instances, self.num_train, f"raft-{self.subset}-train-pool")

    def load(self, data: ResolvedData) -> list[Instance]:
        if data.layout == 1:
            return self._load_hf(data)
        meta_path = data[f"{self.subset}/task.json"]
        meta = read_json(meta_path)
        try:
            data_columns = [c for c in meta["data_columns"] if c != "ID"]
            (label_column, label_names), *_ = meta["label_columns"].items()
        except (KeyError, TypeError, ValueError, AttributeError):
            raise DataSourceError(
                f"{meta_path}: expected data_columns (a list) and label_columns ({{column: [label names]}})"
            ) from None
        instructions = (meta.get("description") or "").strip() or TASK_INSTRUCTIONS[self.subset]
        csv_path = data[f"{self.subset}/train.csv"]
        rows = read_csv_dicts(csv_path)
        instances = []
        for number, row in enumerate(rows, start=2):
            missing = [c for c in (*data_columns, label_column) if c not in row]
            if missing:
                raise DataSourceError(f"{csv_path}: missing columns {missing}; columns present: {sorted(row)}")
            label = _label_name(row[label_column], label_names, f"{csv_path}:{number}")
            row_id = row.get("ID") or str(number - 2)
            text = "\n".join(f"{column}: {row[column]}" for column in data_columns)
            instances.append(self._instance(row_id, text, label_names, label, instructions))
        return with_train_pool(instances, self.num_train, f"raft-{self.subset}-train-pool")


def _label_name(value: str, names: list[str], where: str) -> str:
    """A label given by name, or by 1-based index (the Hugging Face copy; 0 means unlabelled)."""
    if value in names:
        return value
    if value.strip().isdigit() and 1 <= int(value) <= len(names):
        return names[int(value) - 1]
    raise DataSourceError(f"{where}: label {value!r} is not one of the task's labels {names}")
