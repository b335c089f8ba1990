"""NaturalQuestions (Kwiatkowski et al., 2019): real search questions, short answers.

Reads the authors' JSON Lines (gzipped or not), both the full format
(``document_tokens``) and the simplified one (``document_text``), with
``question_text`` and ``annotations`` (``long_answer`` and ``short_answers`` token
spans). Only questions with a short answer are kept; every annotator's short
answer is a correct reference. Modes (HELM's): ``closedbook`` asks the question
alone; ``openbook_longans`` gives the annotated long answer paragraph as context.
The dev set is evaluated; a fixed seeded set of 100 dev questions is the in-context pool.
"""

from __future__ import annotations

from enum import IntEnum
from pathlib import Path
from typing import Any

from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import CORRECT_TAG, VALID_SPLIT, Instance, Reference
from holistic.scenarios.loading.categories import OPEN_QA
from holistic.scenarios.loading.common import FileScenario, check_choice, object_schema, with_train_pool
from holistic.scenarios.loading.prompt_format import prompt_format
from holistic.scenarios.loading.readers import iter_jsonl, require
from holistic.scenarios.loading.sources import DataFile, DataNeeds, Download, ResolvedData

MODES = ("closedbook", "openbook_longans")
_DEV_SHARDS = tuple(f"nq-dev-0{i}.jsonl.gz" for i in range(5))
_URL = "https://storage.googleapis.com/natural_questions/v1.0/dev/"
_SIMPLIFIED_DEV = "v1.0-simplified_nq-dev-all.jsonl.gz"
_POOL = 100


def _tokens(row: dict[str, Any], where: str) -> list[tuple[str, bool]]:
    """(token, is_html) pairs of the document in either format."""
    if "document_tokens" in row:
        return [(t["token"], bool(t.get("html_token"))) for t in row["document_tokens"]]
    text = str(require(row, "document_text", where))
    return [(t, t.startswith("<") and t.endswith(">")) for t in text.split(" ")]


def _span(tokens: list[tuple[str, bool]], start: int, end: int) -> str:
    return " ".join(tok for tok, html in tokens[start:end] if not html)


def _read(path: Path, mode: str) -> list[Instance]:
    out = []
    for number, row in enumerate(iter_jsonl(path), start=1):
        where = f"{path}:{number}"
        tokens = _tokens(row, where)
        answers: list[str] = []
        long_answer = ""
        for annotation in require(row, "annotations", where):
            for short in annotation.get("short_answers", []):
                text = _span(tokens, short["start_token"], short["end_token"])
                if text and text not in answers:
                    answers.append(text)
            span = annotation.get("long_answer", {})
            if not long_answer and span.get("start_token", -1) >= 0:
                long_answer = _span(tokens, span["start_token"], span["end_token"])
        if not answers or (mode == "openbook_longans" and not long_answer):
            continue
        question = str(require(row, "question_text", where)).strip()
        if question:
            question = question[0].upper() + question[1:] + ("" if question.endswith("?") else "?")
        text = question if mode == "closedbook" else f"{long_answer}\nQuestion: {question}"
        out.append(
            Instance(
                id=str(row.get("example_id", f"{path.name}-{number}")),
                input=text,
                references=tuple(Reference(a, (CORRECT_TAG,)) for a in answers),
                split=VALID_SPLIT,
                metadata={"title": row.get("document_title", "")},
            )
        )
    return out


class _Layout(IntEnum):
    """The layouts of :meth:`data_needs`, by their index in ``DataNeeds.layouts``."""

    DEV_SHARDS = 0
    """The v1.0 dev shards."""
    SIMPLIFIED_DEV = 1
    """The simplified dev file."""


class NaturalQAScenario(FileScenario):
    """Open-domain (closed-book) or long-answer-context question answering."""

    info = ScenarioInfo(
        name="natural_qa",
        description="NaturalQuestions: answer real search-engine questions (closed book or with the long answer).",
        task="qa",
        default_adapter=prompt_format(input_prefix="Question: ", output_prefix="Answer: ", max_tokens=300),
        main_metric="f1_score",
        **OPEN_QA,
        args_schema=object_schema({"mode": {"enum": list(MODES), "default": "closedbook"}}),
        tags=("question_answering", "knowledge", "core"),
    )
    num_instances = 3500

    def __init__(self, mode: str = "closedbook") -> None:
        self.mode = check_choice(mode, MODES, "NaturalQuestions mode")

    def data_needs(self) -> DataNeeds:
        return DataNeeds(
            "natural_qa",
            layouts=(
                tuple(DataFile(name, downloads=(Download(_URL + name),)) for name in _DEV_SHARDS),
                (DataFile(_SIMPLIFIED_DEV),),
            ),
            hint="https://ai.google.com/research/NaturalQuestions/download (v1.0 dev shards)",
        )

    def load(self, data: ResolvedData) -> list[Instance]:
        names = _DEV_SHARDS if data.layout == _Layout.DEV_SHARDS else (_SIMPLIFIED_DEV,)
        instances = [inst for name in names for inst in _read(data[name], self.mode)]
        return with_train_pool(instances, min(_POOL, len(instances) // 2), "natural_qa-train-pool")
