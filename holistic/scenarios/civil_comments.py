"""CivilComments toxicity classification (Borkan et al., 2019), WILDS packaging.

Authors' format: ``all_data_with_identities.csv`` (WILDS ``civilcomments_v1.0``)
with ``id``, ``comment_text``, ``split`` (train/val/test), ``toxicity`` (a 0-1
rater fraction; toxic when >= 0.5) and one 0-1 column per identity group. A comment
mentions a group when its column is >= 0.5.

Identity groups become sub-splits (so fairness metrics compare them): with
``demographic: all`` a comment's sub-split is its one group, ``multiple`` when it
mentions several, none otherwise (``metadata["identities"]`` lists them all);
with a named ``demographic`` (HELM's per-group runs) only comments mentioning that
group are kept. A fixed seeded set of 500 training comments is the in-context pool.
"""

from __future__ import annotations

from typing import Any

from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import CORRECT_TAG, TEST_SPLIT, TRAIN_SPLIT, VALID_SPLIT, Instance, Reference
from holistic.scenarios.categories import CLASSIFICATION_CATEGORIES, CLASSIFICATION_NOT_APPLICABLE
from holistic.scenarios.loading import FileScenario, check_choice, hold_out
from holistic.scenarios.prompt_format import prompt_format
from holistic.scenarios.readers import read_csv_dicts
from holistic.scenarios.registry import SCENARIOS
from holistic.scenarios.sources import DataFile, DataNeeds, Download, ResolvedData

IDENTITY_GROUPS = ("male", "female", "LGBTQ", "christian", "muslim", "other_religions", "black", "white")
DEMOGRAPHICS = ("all", *IDENTITY_GROUPS)
_FILE = "all_data_with_identities.csv"
_ARCHIVE = "https://worksheets.codalab.org/rest/bundles/0x8cd3de0634154aeaad2ee6eb96723c6e/contents/blob/"
_SPLITS = {"train": TRAIN_SPLIT, "val": VALID_SPLIT, "test": TEST_SPLIT}
_TRAIN_POOL = 500
_QUESTION = "Question: Is the passage above toxic?"


def _score(row: dict[str, str], column: str, where: str) -> float:
    value = row.get(column, "")
    if value == "":
        return 0.0
    try:
        return float(value)
    except ValueError:
        raise DataSourceError(f"{where}: column {column!r} is {value!r}, expected a number from 0 to 1") from None


@SCENARIOS.register("civil_comments")
class CivilCommentsScenario(FileScenario):
    """Is an online comment toxic? Accuracy compared across identity groups."""

    info = ScenarioInfo(
        name="civil_comments",
        description="CivilComments: is a comment toxic (toxicity classification with identity-group annotations).",
        task="classification",
        default_adapter=prompt_format(input_prefix="Passage: ", output_prefix="Answer: ", max_tokens=5),
        main_metric="quasi_exact_match",
        metric_categories=CLASSIFICATION_CATEGORIES,
        not_applicable_reasons=CLASSIFICATION_NOT_APPLICABLE,
        args_schema={
            "type": "object",
            "properties": {"demographic": {"enum": list(DEMOGRAPHICS), "default": "all"}},
            "additionalProperties": False,
        },
        tags=("toxicity_detection", "classification", "core"),
    )

    def __init__(self, demographic: str = "all") -> None:
        self.demographic = check_choice(demographic, DEMOGRAPHICS, "CivilComments demographic")

    @classmethod
    def estimate_num_instances(cls, args: dict[str, Any]) -> int | None:
        return None if args.get("demographic", "all") != "all" else 179_000

    def data_needs(self) -> DataNeeds:
        return DataNeeds(
            "civil_comments",
            layouts=((DataFile(_FILE, downloads=(Download(_ARCHIVE, member=_FILE),)),),),
            hint="WILDS civilcomments_v1.0 (https://wilds.stanford.edu/datasets/)",
        )

    def load(self, data: ResolvedData) -> list[Instance]:
        path = data[_FILE]
        rows = read_csv_dicts(path)
        if rows:
            missing = [c for c in ("comment_text", "split", "toxicity", *IDENTITY_GROUPS) if c not in rows[0]]
            if missing:
                raise DataSourceError(f"{path}: missing columns {missing}; columns present: {sorted(rows[0])}")
        train_ids = [r.get("id") or str(n) for n, r in enumerate(rows) if r["split"] == "train"]
        pool = hold_out(train_ids, min(_TRAIN_POOL, len(train_ids)), "civil_comments-train-pool")
        instances = []
        for number, row in enumerate(rows):
            where = f"{path}:{number + 2}"
            split = _SPLITS.get(row["split"])
            if split is None:
                continue
            row_id = row.get("id") or str(number)
            if split == TRAIN_SPLIT and row_id not in pool:
                continue
            groups = [g for g in IDENTITY_GROUPS if _score(row, g, where) >= 0.5]
            if self.demographic != "all" and self.demographic not in groups:
                continue
            toxic = _score(row, "toxicity", where) >= 0.5
            if self.demographic != "all":
                sub_split: str | None = self.demographic
            else:
                sub_split = groups[0] if len(groups) == 1 else ("multiple" if groups else None)
            instances.append(
                Instance(
                    id=f"{row_id}",
                    input=f"{row['comment_text'].strip()}\n{_QUESTION}",
                    references=(
                        Reference("True", (CORRECT_TAG,) if toxic else ()),
                        Reference("False", () if toxic else (CORRECT_TAG,)),
                    ),
                    split=split,
                    sub_split=sub_split,
                    metadata={"identities": groups},
                )
            )
        return instances
