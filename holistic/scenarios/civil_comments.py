"""CivilComments toxicity classification (Borkan et al., 2019), WILDS packaging.

Authors' format: ``all_data_with_identities.csv`` (WILDS ``civilcomments_v1.0``)
with ``id``, ``comment_text``, ``split`` (train/val/test), ``toxicity`` (a 0-1
rater fraction; toxic when >= 0.5) and one 0-1 column per identity group. A comment
mentions a group when its column is >= 0.5.

As in HELM's loader, the sub-split is ``toxic`` or ``non-toxic`` (HELM reports
CivilComments' stats per sub-split only), every training comment is in the in-context
pool, and the input is the comment as the file has it (spaces kept), then
``\\nQuestion: Is the passage above toxic?``. The identity groups a comment mentions are
``metadata["identities"]`` (group fairness compares them); with a named
``demographic`` (HELM's per-group runs) only comments mentioning that group are kept.

Hugging Face copy (used when the authors' file is absent): ``google/civil_comments``
in the Hub's Parquet conversion (revision ``refs/convert/parquet``),
``hf/default/{train,validation,test}/0000.parquet`` with columns ``text`` and
``toxicity`` (plus other toxicity sub-scores). Differences by nature: that copy
follows Jigsaw's train/validation/test split (not WILDS's) and has neither comment
ids nor identity columns, so ids are ``<split>-<row>`` (and its texts are stripped), no comment has identity
groups (``metadata["identities"]`` is empty) and only
``demographic: all`` can be served (a named group is a clear error). Identity
columns, when a copy has them, are used as in the authors' file. Only the first
train shard (``0000``) is read, and a seeded 500 of its comments are the in-context pool. The ``hf_revision`` arg
defaults to that branch, which is not pinned: pin a commit of it for
reproducible runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from holistic.core.arguments import arg
from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import CORRECT_TAG, TEST_SPLIT, TRAIN_SPLIT, VALID_SPLIT, Instance, Reference
from holistic.scenarios.base import PlanFacts
from holistic.scenarios.loading.categories import CLASSIFICATION
from holistic.scenarios.loading.common import check_choice, hold_out
from holistic.scenarios.loading.hf_copy import HF_PARQUET_BRANCH, AuthorsOrHub, HubCopy, read_parquet_rows, row_where
from holistic.scenarios.loading.hub_fallback import HubFallbackScenario
from holistic.scenarios.loading.prompt_format import prompt_format
from holistic.scenarios.loading.readers import read_csv_dicts
from holistic.scenarios.loading.sources import DataFile, DataNeeds, Download, ResolvedData

IDENTITY_GROUPS = ("male", "female", "LGBTQ", "christian", "muslim", "other_religions", "black", "white")
DEMOGRAPHICS = ("all", *IDENTITY_GROUPS)
_FILE = "all_data_with_identities.csv"
_ARCHIVE = "https://worksheets.codalab.org/rest/bundles/0x8cd3de0634154aeaad2ee6eb96723c6e/contents/blob/"
_SPLITS = {"train": TRAIN_SPLIT, "val": VALID_SPLIT, "test": TEST_SPLIT}
_TRAIN_POOL = 500
_QUESTION = "Question: Is the passage above toxic?"
_HUB = HubCopy("google/civil_comments", HF_PARQUET_BRANCH)
_HF_FILES = (
    (TRAIN_SPLIT, "default/train/0000.parquet"),
    (VALID_SPLIT, "default/validation/0000.parquet"),
    (TEST_SPLIT, "default/test/0000.parquet"),
)


def _score(row: dict[str, str], column: str, where: str) -> float:
    value = row.get(column, "")
    if value == "":
        return 0.0
    try:
        return float(value)
    except ValueError:
        raise DataSourceError(f"{where}: column {column!r} is {value!r}, expected a number from 0 to 1") from None


def _number(value: Any, column: str, where: str) -> float:
    if value is None:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise DataSourceError(f"{where}: column {column!r} is {value!r}, expected a number from 0 to 1")
    return float(value)


@dataclass(frozen=True, kw_only=True)
class CivilCommentsScenario(HubFallbackScenario):
    """Is an online comment toxic? Accuracy per sub-split (toxic, non-toxic) and across identity groups."""

    info = ScenarioInfo(
        name="civil_comments",
        extra_metrics=("classification",),
        description="CivilComments: is a comment toxic (toxicity classification with identity-group annotations).",
        task="classification",
        default_adapter=prompt_format(input_prefix="Passage: ", output_prefix="Answer: ", max_tokens=5),
        main_metric="quasi_exact_match",
        **CLASSIFICATION,
        tags=("toxicity_detection", "classification", "core"),
    )
    hub = _HUB

    demographic: str = arg("all", enum=DEMOGRAPHICS)
    hf_revision: str = _HUB.revision_arg()

    def __post_init__(self) -> None:
        check_choice(self.demographic, DEMOGRAPHICS, "CivilComments demographic")
        super().__post_init__()

    def plan_facts(self, data_root: Path | None, max_eval_instances: int | None) -> PlanFacts:
        return PlanFacts(num_instances=None if self.demographic != "all" else 179_000)

    def data_needs(self) -> DataNeeds:
        return DataNeeds(
            "civil_comments",
            layouts=(
                (DataFile(_FILE, downloads=(Download(_ARCHIVE, member=_FILE),)),),
                _HUB.layout(self.hf_revision, [p for _, p in _HF_FILES]),
            ),
            hint=f"WILDS civilcomments_v1.0 (https://wilds.stanford.edu/datasets/); {_HUB.hint}",
        )

    def _instance(self, row_id: str, text: str, toxic: bool, groups: list[str], split: str) -> Instance:
        return Instance(
            id=row_id,
            input=f"{text}\n{_QUESTION}",
            references=(
                Reference("True", (CORRECT_TAG,) if toxic else ()),
                Reference("False", () if toxic else (CORRECT_TAG,)),
            ),
            split=split,
            sub_split="toxic" if toxic else "non-toxic",
            metadata={"identities": groups},
        )

    def _load_hf(self, data: ResolvedData) -> list[Instance]:
        instances: list[Instance] = []
        for split, repo_path in _HF_FILES:
            path = data[f"hf/{repo_path}"]
            rows = read_parquet_rows(path, ("text", "toxicity"), optional=("id", *IDENTITY_GROUPS))
            has_groups = bool(rows) and all(g in rows[0] for g in IDENTITY_GROUPS)
            if self.demographic != "all" and not has_groups:
                raise DataSourceError(
                    f"{path}: this copy has no identity columns ({', '.join(IDENTITY_GROUPS)}), so demographic "
                    f"{self.demographic!r} cannot be selected; use demographic 'all' or the authors' {_FILE}"
                )
            ids = [str(r.get("id") or f"{split}-{n}") for n, r in enumerate(rows)]
            pool = (
                hold_out(ids, min(_TRAIN_POOL, len(ids)), "civil_comments-train-pool") if split == TRAIN_SPLIT else None
            )
            for index, (row_id, row) in enumerate(zip(ids, rows, strict=True)):
                if pool is not None and row_id not in pool:
                    continue
                where = row_where(path, index)
                groups = [g for g in IDENTITY_GROUPS if _number(row.get(g), g, where) >= 0.5] if has_groups else []
                if self.demographic != "all" and self.demographic not in groups:
                    continue
                toxic = _number(row["toxicity"], "toxicity", where) >= 0.5
                instances.append(self._instance(row_id, str(row["text"] or "").strip(), toxic, groups, split))
        return instances

    def load(self, data: ResolvedData) -> list[Instance]:
        if data.layout == AuthorsOrHub.HUB_COPY:
            return self._load_hf(data)
        path = data[_FILE]
        rows = read_csv_dicts(path)
        if rows:
            missing = [c for c in ("comment_text", "split", "toxicity", *IDENTITY_GROUPS) if c not in rows[0]]
            if missing:
                raise DataSourceError(f"{path}: missing columns {missing}; columns present: {sorted(rows[0])}")
        instances = []
        for number, row in enumerate(rows):
            where = f"{path}:{number + 2}"
            split = _SPLITS.get(row["split"])
            if split is None:
                continue
            row_id = row.get("id") or str(number)
            groups = [g for g in IDENTITY_GROUPS if _score(row, g, where) >= 0.5]
            if self.demographic != "all" and self.demographic not in groups:
                continue
            toxic = _score(row, "toxicity", where) >= 0.5
            instances.append(self._instance(f"{row_id}", row["comment_text"], toxic, groups, split))
        return instances
