"""HellaSwag (Zellers et al., 2019): pick the most plausible continuation of a scene.

Authors' format: ``hellaswag_{train,val}.jsonl`` with ``ind``, ``activity_label``,
``ctx_a``, ``ctx_b``, ``ctx``, ``endings`` (four) and ``label`` (index of the right
ending). HELM evaluates on the validation set (test labels are hidden). The input is
HELM's: ``<activity_label>: <ctx_a> <ctx_b>`` with the first letter of ``ctx_b`` upper-cased
(not the authors' ``ctx``, which keeps it lower-case); every ending equal to the right one
is a correct reference, as in HELM.

Hugging Face copy (used when the authors' files are absent): ``Rowan/hellaswag`` in
the Hub's Parquet conversion (revision ``refs/convert/parquet``),
``hf/default/{train,validation}/0000.parquet`` with the same fields (``label`` as a
string there). Ids (``<split>-<ind>``), inputs, references and splits are the same
as from the authors' files. The ``hf_revision`` arg defaults to that branch, which
is not pinned: pin a commit of it for reproducible runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from holistic.core.errors import DataSourceError
from holistic.core.types import TRAIN_SPLIT, VALID_SPLIT, Instance
from holistic.scenarios.loading.common import choice_references, github_raw
from holistic.scenarios.loading.hf_copy import HF_PARQUET_BRANCH, HubCopy, read_parquet_rows, row_where
from holistic.scenarios.loading.hub_fallback import SplitFilesHubScenario
from holistic.scenarios.loading.prompt_format import commonsense_info
from holistic.scenarios.loading.readers import iter_located_jsonl, require
from holistic.scenarios.loading.sources import Download

_REPO = "rowanz/hellaswag"
_COMMIT = "6774d74db0a963013d28bd9323c32de8dd506038"
_HUB = HubCopy("Rowan/hellaswag", HF_PARQUET_BRANCH)
_HF_FILES = ((TRAIN_SPLIT, "default/train/0000.parquet"), (VALID_SPLIT, "default/validation/0000.parquet"))


def _instance(row: dict[str, Any], label: Any, default_ind: int, split: str, where: str) -> Instance:
    endings = require(row, "endings", where)
    if isinstance(label, str) and label.strip().isdigit():
        label = int(label)
    if not isinstance(endings, list) or not isinstance(label, int) or not 0 <= label < len(endings):
        raise DataSourceError(f"{where}: expected a list of endings and an integer label indexing it")
    ctx_a, ctx_b = str(require(row, "ctx_a", where)), str(require(row, "ctx_b", where))
    activity = str(row.get("activity_label") or "")
    ind = row.get("ind")
    texts = [str(e) for e in endings]
    return Instance(
        id=f"{split}-{default_ind if ind is None else ind}",
        input=f"{activity}: {ctx_a} {ctx_b[:1].upper()}{ctx_b[1:]}",
        references=choice_references(texts, [i for i, e in enumerate(texts) if e == texts[label]]),
        split=split,
        metadata={"source_id": row.get("source_id") or "", "split_type": row.get("split_type") or ""},
    )


def _read(path: Path, split: str) -> list[Instance]:
    out = []
    for number, (_, where, row) in enumerate(iter_located_jsonl(path), start=1):
        label = require(row, "label", where)
        if not isinstance(label, int):
            raise DataSourceError(f"{where}: expected a list of endings and an integer label indexing it")
        out.append(_instance(row, label, number - 1, split, where))
    return out


def _read_hf(path: Path, split: str) -> list[Instance]:
    rows = read_parquet_rows(
        path, ("ctx_a", "ctx_b", "endings", "label"), optional=("ind", "activity_label", "source_id", "split_type")
    )
    return [_instance(row, row["label"], index, split, row_where(path, index)) for index, row in enumerate(rows)]


@dataclass(frozen=True, kw_only=True)
class HellaSwagScenario(SplitFilesHubScenario):
    """Commonsense continuation choice."""

    samples_prompts = True

    info = commonsense_info(
        "hellaswag",
        "HellaSwag: choose the most plausible continuation (commonsense reasoning).",
        method="multiple_choice_separate_original",
    )
    num_instances = 10042
    split_files = (("hellaswag_train.jsonl", TRAIN_SPLIT), ("hellaswag_val.jsonl", VALID_SPLIT))
    hint = "https://github.com/rowanz/hellaswag/tree/master/data"
    read = staticmethod(_read)
    hub = _HUB
    hf_revision: str = _HUB.revision_arg()
    hf_files = _HF_FILES
    read_hf = staticmethod(_read_hf)

    def download(self, name: str) -> Download:
        return Download(github_raw(_REPO, _COMMIT, f"data/{name}"))
