"""TruthfulQA (Lin et al., 2022), multiple-choice form: pick the true answer.

Reads the authors' ``data/v1/TruthfulQA.csv`` at the commit HELM 0.5.16 pins
(``sylinrl/TruthfulQA@d71c1108``; the download is checked by sha256) and builds the
instances as HELM's loader does: the question stripped; each answer stripped and
given a final period when it lacks one; the incorrect answers (``; ``-separated,
empty ones dropped) followed by the best answer, the list rotated left by
``ord(best_answer[0]) % len(list)`` so that the correct letter varies; the first
``int(817 * 0.2)`` = 163 rows of the file are the in-context pool (``train``), the
other 654 are ``valid``, in file order. Ids are ``q<row>`` (0-based data rows).

Hugging Face copy (used when the authors' file is absent): ``truthfulqa/truthful_qa``,
configuration ``generation``: ``hf/generation/validation-00000-of-00001.parquet``
with columns ``question``, ``best_answer``, ``incorrect_answers`` (a list),
``category`` and ``type``, read the same way. That copy is not the file HELM pins
(its rows may differ in wording or order), so a run on it is not HELM's TruthfulQA;
the ``hf_revision`` arg (default ``main``, not pinned) should be pinned to a commit
of that repo.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import TRAIN_SPLIT, VALID_SPLIT, Instance
from holistic.scenarios.loading.categories import CLASSIFICATION
from holistic.scenarios.loading.common import choice_references, github_raw
from holistic.scenarios.loading.hf_copy import AuthorsOrHub, HubCopy, read_parquet_rows, row_where
from holistic.scenarios.loading.hub_fallback import HubFallbackScenario
from holistic.scenarios.loading.prompt_format import multiple_choice_joint_format
from holistic.scenarios.loading.readers import read_csv_dicts
from holistic.scenarios.loading.sources import DataFile, DataNeeds, Download, ResolvedData

_URL = github_raw("sylinrl/TruthfulQA", "d71c110897f5d31c5d7f309e7bc316c152f6f031", "data/v1/TruthfulQA.csv")
"""The file HELM 0.5.16 downloads (``truthful_qa_scenario.py``)."""
_SHA256 = "f9bd9e859cc102cb1f647f1064da7e009be752c416845cf9fa56e6eaae403a7d"
_TRAIN_FRACTION = 0.2
_SIZE = 817
_HUB = HubCopy("truthfulqa/truthful_qa")
_HF_FILE = "generation/validation-00000-of-00001.parquet"


def _with_period(answer: str) -> str:
    """HELM's answer text: stripped, with a final period added when it has none."""
    text = answer.strip()
    return text if text.endswith(".") else text + "."


def _instance(
    number: int, question: str, best: str, wrong: list[str], metadata: dict[str, str], where: str
) -> Instance:
    """HELM's choices: the incorrect answers, then the best one, rotated left by
    ``ord(best[0]) % n`` (its first character's code point)."""
    if not best.strip():
        raise DataSourceError(f"{where}: the best answer is empty")
    best_text = _with_period(best)
    choices = [_with_period(w) for w in wrong if w.strip()] + [best_text]
    k = ord(best_text[0]) % len(choices)
    rotated = choices[k:] + choices[:k]
    return Instance(
        id=f"q{number:04d}",
        input=question.strip(),
        references=choice_references(rotated, (len(choices) - 1 - k) % len(choices)),
        split=VALID_SPLIT,
        metadata=metadata,
    )


def _with_train_split(instances: list[Instance]) -> list[Instance]:
    """HELM's split: the first 20% of the file (rounded down) is ``train``."""
    k = int(len(instances) * _TRAIN_FRACTION)
    return [replace(i, split=TRAIN_SPLIT) for i in instances[:k]] + instances[k:]


def _read_hf(path: Path) -> list[Instance]:
    rows = read_parquet_rows(path, ("question", "best_answer", "incorrect_answers"), optional=("category", "type"))
    instances = []
    for index, row in enumerate(rows):
        wrong = row["incorrect_answers"]
        if not isinstance(wrong, list):
            raise DataSourceError(f"{row_where(path, index)}: 'incorrect_answers' must be a list, got {wrong!r}")
        metadata = {"category": row.get("category") or "", "type": row.get("type") or ""}
        instances.append(
            _instance(
                index,
                str(row["question"]),
                str(row["best_answer"]),
                [str(w) for w in wrong],
                metadata,
                row_where(path, index),
            )
        )
    return instances


@dataclass(frozen=True, kw_only=True)
class TruthfulQAScenario(HubFallbackScenario):
    """Questions that some humans answer falsely because of misconceptions."""

    info = ScenarioInfo(
        name="truthful_qa",
        description="TruthfulQA (multiple choice): pick the true answer among common misconceptions.",
        task="multiple_choice",
        default_adapter=multiple_choice_joint_format(),
        main_metric="exact_match",
        **CLASSIFICATION,
        tags=("knowledge", "harms", "multiple_choice", "core"),
    )
    hub = _HUB
    hf_revision: str = _HUB.revision_arg()
    num_instances = _SIZE - int(_SIZE * _TRAIN_FRACTION)
    samples_prompts = True

    def data_needs(self) -> DataNeeds:
        return DataNeeds(
            "truthful_qa",
            layouts=(
                (DataFile("TruthfulQA.csv", downloads=(Download(_URL, sha256=_SHA256),)),),
                _HUB.layout(self.hf_revision, [_HF_FILE]),
            ),
            hint=f"{_URL} (the file HELM reads); {_HUB.hint}",
        )

    def load(self, data: ResolvedData) -> list[Instance]:
        instances = (
            _read_hf(data[f"hf/{_HF_FILE}"])
            if data.layout == AuthorsOrHub.HUB_COPY
            else self._read_csv(data["TruthfulQA.csv"])
        )
        return _with_train_split(instances)

    def _read_csv(self, path: Path) -> list[Instance]:
        instances = []
        for number, row in enumerate(read_csv_dicts(path), start=2):
            where = f"{path}:{number}"
            try:
                question, best, wrong = row["Question"], row["Best Answer"], row["Incorrect Answers"]
            except KeyError as exc:
                raise DataSourceError(f"{where}: missing column {exc.args[0]!r}; columns: {sorted(row)}") from None
            metadata = {"category": row.get("Category", ""), "type": row.get("Type", "")}
            instances.append(_instance(number - 2, question, best, wrong.split(";"), metadata, where))
        return instances
