"""LegalSupport (HELM; Neel Guha): which of two case summaries best supports a legal claim.

Each row is a passage making a legal claim and two citations; the choices are the
two citations' parentheticals (the court's conclusion in brief), in the order
``a``, ``b``, and ``label`` names the one that supports the passage most directly.
As in HELM, a choice whose text equals the correct one's is also correct.

HELM's protocol: multiple choice (joint), instructions ``Which statement best
supports the passage?``, ``Passage: <passage>``, the lettered choices, ``Answer:``;
three in-context examples (the passages are long). Scored by the accuracy of the
picked choice (``exact_match``; HELM's ``quasi_exact_match`` on the mapped choice
text is the same number).

Data: HELM's ``legal_support/{train,dev,test}.jsonl`` (JSON Lines; fields
``context``, ``citation_a`` and ``citation_b`` (objects with ``parenthetical``) and
``label`` (``a`` or ``b``)), from the zip HELM downloads from Google Drive. It has no
fixed public release to pin, so the files are not checked by sha256.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import TEST_SPLIT, TRAIN_SPLIT, VALID_SPLIT, Instance
from holistic.scenarios.loading.categories import CLASSIFICATION
from holistic.scenarios.loading.common import SplitFilesScenario, choice_references
from holistic.scenarios.loading.prompt_format import multiple_choice_joint_format
from holistic.scenarios.loading.readers import iter_located_jsonl, require, require_text
from holistic.scenarios.loading.sources import Download

_ZIP = "https://docs.google.com/uc?export=download&id=1PVoyddrCHChMxYrLhsI-zu7Xzs5S8N77"
LABELS = ("a", "b")


def _parenthetical(row: dict[str, Any], key: str, where: str) -> str:
    citation = require(row, key, where)
    if not isinstance(citation, dict):
        raise DataSourceError(f"{where}: '{key}' must be an object with a 'parenthetical'")
    return require_text(citation, "parenthetical", f"{where}, {key}")


def read_legal_support(path: Path, split: str) -> list[Instance]:
    out = []
    for number, where, row in iter_located_jsonl(path):
        passage = require_text(row, "context", where)
        choices = [_parenthetical(row, f"citation_{label}", where) for label in LABELS]
        label = require(row, "label", where)
        if label not in LABELS:
            raise DataSourceError(f"{where}: 'label' must be 'a' or 'b', got {label!r}")
        correct = choices[LABELS.index(label)]
        out.append(
            Instance(
                id=f"{path.stem}-{number}",
                input=passage,
                references=choice_references(choices, [i for i, c in enumerate(choices) if c == correct]),
                split=split,
            )
        )
    return out


class LegalSupportScenario(SplitFilesScenario):
    """Fine-grained legal reverse entailment: pick the supporting case (two choices)."""

    notes_missing_files = True
    info = ScenarioInfo(
        name="legal_support",
        description="LegalSupport: which of two case summaries best supports a legal passage (multiple choice).",
        task="multiple_choice",
        default_adapter={
            **multiple_choice_joint_format("Which statement best supports the passage?"),
            "input_prefix": "Passage: ",
            "max_train_instances": 3,
        },
        main_metric="exact_match",
        **CLASSIFICATION,
        tags=("law", "reasoning", "targeted:reasoning"),
    )
    split_files = (
        ("legal_support/train.jsonl", TRAIN_SPLIT),
        ("legal_support/dev.jsonl", VALID_SPLIT),
        ("legal_support/test.jsonl", TEST_SPLIT),
    )
    hint = f"HELM's LegalSupport zip ({_ZIP}), unpacked: legal_support/<train|dev|test>.jsonl"

    def download(self, name: str) -> Download:
        return Download(_ZIP, member=name)

    def read(self, path: Path, split: str) -> list[Instance]:
        return read_legal_support(path, split)
