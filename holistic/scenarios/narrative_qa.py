"""NarrativeQA (Kočiský et al., 2018), over story summaries as HELM does.

Authors' files (deepmind/narrativeqa): ``qaps.csv`` (``document_id``, ``set``,
``question``, ``answer1``, ``answer2``) and ``third_party/wikipedia/summaries.csv``
(``document_id``, ``set``, ``summary``). As HELM's loader does: for each split in
turn (train, valid, test) and each story in the order its first question appears,
one of the story's questions is drawn by ``random.choice`` from a generator seeded
with 0 once (HELM's ``random.seed(0)``), and asked about that split's summary of the
story (stripped); the question is stripped and ends with ``?`` (added when missing);
both human answers, as written, are correct references. Ids are
``<document_id>-<n>``, ``n`` the question's place among the story's questions.
"""

from __future__ import annotations

import random

from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import CORRECT_TAG, TEST_SPLIT, TRAIN_SPLIT, VALID_SPLIT, Instance, Reference
from holistic.scenarios.loading.categories import OPEN_QA
from holistic.scenarios.loading.common import FileScenario
from holistic.scenarios.loading.prompt_format import prompt_format
from holistic.scenarios.loading.readers import read_csv_dicts
from holistic.scenarios.loading.sources import DataFile, DataNeeds, Download, ResolvedData

_BASE = "https://raw.githubusercontent.com/deepmind/narrativeqa/master/"
_SPLITS = {"train": TRAIN_SPLIT, "valid": VALID_SPLIT, "test": TEST_SPLIT}
_QAPS = "qaps.csv"
_SUMMARIES = "third_party/wikipedia/summaries.csv"


class NarrativeQAScenario(FileScenario):
    """Reading comprehension of story summaries with free-form answers."""

    info = ScenarioInfo(
        name="narrative_qa",
        extra_metrics=("rouge", "bleu"),
        description="NarrativeQA: answer questions about a story summary (reading comprehension).",
        task="qa",
        default_adapter=prompt_format(input_prefix="Passage: ", output_prefix="Answer: ", max_tokens=100),
        main_metric="f1_score",
        **OPEN_QA,
        tags=("question_answering", "reading_comprehension", "core"),
    )
    num_instances = 1572
    """Stories (one question each): 1,102 train, 115 valid, 355 test."""

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
        summaries_path, qaps = data[_SUMMARIES], data[_QAPS]
        summaries: dict[tuple[str, str], str] = {}
        for row in read_csv_dicts(summaries_path):
            summaries[(row.get("set", ""), row.get("document_id", ""))] = row.get("summary", "")
        questions: dict[str, dict[str, list[tuple[int, int, dict[str, str]]]]] = {name: {} for name in _SPLITS}
        counts: dict[str, int] = {}
        for number, row in enumerate(read_csv_dicts(qaps), start=2):
            doc, name = row.get("document_id", ""), row.get("set", "")
            if name not in _SPLITS:
                raise DataSourceError(f"{qaps}:{number}: set {name!r} is not train, valid or test")
            if (name, doc) not in summaries:
                raise DataSourceError(f"{qaps}:{number}: document_id {doc!r} has no {name} summary in {_SUMMARIES}")
            index = counts.get(doc, 0)
            counts[doc] = index + 1
            questions[name].setdefault(doc, []).append((number, index, row))
        rng = random.Random(0)
        instances = []
        for name, split in _SPLITS.items():
            for doc, rows in questions[name].items():
                number, index, row = rng.choice(rows)
                question = row.get("question", "").strip()
                if not question:
                    raise DataSourceError(f"{qaps}:{number}: the question is empty")
                if not question.endswith("?"):
                    question += "?"
                instances.append(
                    Instance(
                        id=f"{doc}-{index}",
                        input=f"{summaries[(name, doc)].strip()}\nQuestion: {question}",
                        references=tuple(
                            Reference(row.get(column, ""), (CORRECT_TAG,)) for column in ("answer1", "answer2")
                        ),
                        split=split,
                        metadata={"document_id": doc},
                    )
                )
        return instances
