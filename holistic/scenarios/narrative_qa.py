"""NarrativeQA (Kočiský et al., 2018), over story summaries as HELM does.

Authors' files (deepmind/narrativeqa): ``qaps.csv`` (``document_id``, ``set``,
``question``, ``answer1``, ``answer2``) and ``third_party/wikipedia/summaries.csv``
(``document_id``, ``set``, ``summary``). Each question is asked about its story's
summary; both human answers are correct references.
"""

from __future__ import annotations

from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import CORRECT_TAG, TEST_SPLIT, TRAIN_SPLIT, VALID_SPLIT, Instance, Reference
from holistic.scenarios.categories import OPEN_QA_CATEGORIES, OPEN_QA_NOT_APPLICABLE
from holistic.scenarios.loading import FileScenario
from holistic.scenarios.prompt_format import prompt_format
from holistic.scenarios.readers import read_csv_dicts
from holistic.scenarios.sources import DataFile, DataNeeds, Download, ResolvedData

_BASE = "https://raw.githubusercontent.com/deepmind/narrativeqa/master/"
_SPLITS = {"train": TRAIN_SPLIT, "valid": VALID_SPLIT, "test": TEST_SPLIT}
_QAPS = "qaps.csv"
_SUMMARIES = "third_party/wikipedia/summaries.csv"


class NarrativeQAScenario(FileScenario):
    """Reading comprehension of story summaries with free-form answers."""

    info = ScenarioInfo(
        name="narrative_qa",
        description="NarrativeQA: answer questions about a story summary (reading comprehension).",
        task="qa",
        default_adapter=prompt_format(input_prefix="Passage: ", output_prefix="Answer: ", max_tokens=100),
        main_metric="f1_score",
        metric_categories=OPEN_QA_CATEGORIES,
        not_applicable_reasons=OPEN_QA_NOT_APPLICABLE,
        args_schema={"type": "object", "properties": {}, "additionalProperties": False},
        tags=("question_answering", "reading_comprehension", "core"),
    )
    num_instances = 14000

    def data_needs(self) -> DataNeeds:
        return DataNeeds(
            "narrative_qa",
            layouts=(
                (
                    DataFile(_QAPS, downloads=(Download(_BASE + _QAPS),)),
                    DataFile(_SUMMARIES, downloads=(Download(_BASE + _SUMMARIES),)),
                ),
            ),
            hint="https://github.com/deepmind/narrativeqa",
        )

    def load(self, data: ResolvedData) -> list[Instance]:
        summaries = {row["document_id"]: row["summary"].strip() for row in read_csv_dicts(data[_SUMMARIES])}
        instances = []
        per_document: dict[str, int] = {}
        qaps = data[_QAPS]
        for number, row in enumerate(read_csv_dicts(qaps), start=2):
            doc = row.get("document_id", "")
            if doc not in summaries:
                raise DataSourceError(f"{qaps}:{number}: document_id {doc!r} has no summary in {_SUMMARIES}")
            split = _SPLITS.get(row.get("set", ""))
            if split is None:
                raise DataSourceError(f"{qaps}:{number}: set {row.get('set')!r} is not train, valid or test")
            index = per_document.get(doc, 0)
            per_document[doc] = index + 1
            answers = list(
                dict.fromkeys(a.strip() for a in (row.get("answer1", ""), row.get("answer2", "")) if a.strip())
            )
            instances.append(
                Instance(
                    id=f"{doc}-{index}",
                    input=f"{summaries[doc]}\nQuestion: {row['question'].strip()}",
                    references=tuple(Reference(a, (CORRECT_TAG,)) for a in answers),
                    split=split,
                    metadata={"document_id": doc},
                )
            )
        return instances
