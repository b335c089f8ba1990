"""NaturalQuestions (Kwiatkowski et al., 2019): real search questions, short answers.

Reads the authors' JSON Lines (gzipped or not), the full format (``document_html``
with byte spans) and the simplified one (``document_text``, token spans), and builds
the instances as HELM 0.5.16's loader does. Only questions with a short answer are
kept. From the full format, every annotator's short answer and its long answer are
the HTML bytes of their spans, a no-break space made a space, entities unescaped and
tags removed (HELM's ``_clean_text``); from the simplified one, the span's tokens
without HTML tokens, joined by spaces. Within each file, the kept questions alternate
between ``train`` (even positions) and ``valid``. The question is capitalised as
Python's ``str.capitalize`` does (the rest lower-cased) and given a final ``?``; one
answer per question is drawn with ``random.Random(0).randint`` over its short answers
(duplicates included), in file order across the five shards. A training question's
reference is that answer; a validation question's are its distinct short answers.
Modes (HELM's): ``closedbook`` asks the question alone; ``openbook_longans`` gives the
drawn answer's long answer: ``Passage: <long answer>\\n\\nQuestion: <question>``.
"""

from __future__ import annotations

import html
import random
import re
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import Any

from holistic.core.arguments import arg
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import CORRECT_TAG, TRAIN_SPLIT, VALID_SPLIT, AdapterDefaults, Instance, Reference
from holistic.scenarios.loading.categories import OPEN_QA
from holistic.scenarios.loading.common import FileScenario, check_choice
from holistic.scenarios.loading.prompt_format import prompt_format
from holistic.scenarios.loading.readers import iter_located_jsonl, require
from holistic.scenarios.loading.sources import DataFile, DataNeeds, Download, ResolvedData

MODES = ("closedbook", "openbook_longans")
_DEV_SHARDS = tuple(f"nq-dev-0{i}.jsonl.gz" for i in range(5))
_URL = "https://storage.googleapis.com/natural_questions/v1.0/dev/"
_SIMPLIFIED_DEV = "v1.0-simplified_nq-dev-all.jsonl.gz"
_TAG = re.compile("<([^>]*)>")


@dataclass(frozen=True)
class _Raw:
    """One kept question: its short answers, each with its annotation's long answer."""

    id: str
    title: str
    question: str
    short_answers: list[str]
    long_answers: list[str]


def _clean_html(raw: bytes) -> str:
    """HTML bytes as text: no-break spaces made spaces, entities unescaped, tags removed."""
    return _TAG.sub("", html.unescape(raw.replace(b"\xc2\xa0", b" ").decode("utf-8")))


def _tokens(row: dict[str, Any], where: str) -> list[tuple[str, bool]]:
    """(token, is_html) pairs of the document in either format."""
    if "document_tokens" in row:
        return [(t["token"], bool(t.get("html_token"))) for t in row["document_tokens"]]
    text = str(require(row, "document_text", where))
    return [(t, t.startswith("<") and t.endswith(">")) for t in text.split(" ")]


def _span_reader(row: dict[str, Any], where: str) -> Any:
    """The text of an answer span: HTML bytes in the full format, tokens in the simplified one."""
    if "document_html" in row:
        page = str(row["document_html"]).encode("utf-8")
        return lambda span: _clean_html(page[span["start_byte"] : span["end_byte"]])
    tokens = _tokens(row, where)
    return lambda span: " ".join(tok for tok, is_html in tokens[span["start_token"] : span["end_token"]] if not is_html)


def _read_raw(path: Path) -> list[_Raw]:
    out = []
    for number, (_, where, row) in enumerate(iter_located_jsonl(path), start=1):
        annotations = require(row, "annotations", where)
        if not any(a.get("short_answers") for a in annotations):
            continue
        text = _span_reader(row, where)
        shorts, longs = [], []
        for annotation in annotations:
            long_answer = text(
                annotation.get("long_answer") or {"start_byte": -1, "end_byte": -1, "start_token": -1, "end_token": -1}
            )
            for short in annotation.get("short_answers", []):
                shorts.append(text(short))
                longs.append(long_answer)
        out.append(
            _Raw(
                id=str(row.get("example_id", f"{path.name}-{number}")),
                title=str(row.get("document_title", "")),
                question=str(require(row, "question_text", where)),
                short_answers=shorts,
                long_answers=longs,
            )
        )
    return out


def _instance(raw: _Raw, split: str, mode: str, rng: random.Random) -> Instance:
    question = raw.question.capitalize()
    if not question.endswith("?"):
        question += "?"
    drawn = rng.randint(0, len(raw.short_answers) - 1)
    text = question if mode == "closedbook" else f"Passage: {raw.long_answers[drawn]}\n\nQuestion: {question}"
    answers = [raw.short_answers[drawn]] if split == TRAIN_SPLIT else list(dict.fromkeys(raw.short_answers))
    return Instance(
        id=raw.id,
        input=text,
        references=tuple(Reference(a, (CORRECT_TAG,)) for a in answers),
        split=split,
        metadata={"title": raw.title},
    )


class _Layout(IntEnum):
    """The layouts of :meth:`data_needs`, by their index in ``DataNeeds.layouts``."""

    DEV_SHARDS = 0
    """The v1.0 dev shards."""
    SIMPLIFIED_DEV = 1
    """The simplified dev file."""


@dataclass(frozen=True, kw_only=True)
class NaturalQAScenario(FileScenario):
    """Open-domain (closed-book) or long-answer-context question answering."""

    info = ScenarioInfo(
        name="natural_qa",
        description="NaturalQuestions: answer real search-engine questions (closed book or with the long answer).",
        task="qa",
        default_adapter=prompt_format(input_prefix="Question: ", output_prefix="Answer: ", max_tokens=300),
        main_metric="f1_score",
        **OPEN_QA,
        tags=("question_answering", "knowledge", "core"),
    )
    num_instances = 3610

    mode: str = arg("closedbook", enum=MODES)

    def __post_init__(self) -> None:
        check_choice(self.mode, MODES, "NaturalQuestions mode")

    def data_needs(self) -> DataNeeds:
        return DataNeeds(
            "natural_qa",
            layouts=(
                tuple(DataFile(name, downloads=(Download(_URL + name),)) for name in _DEV_SHARDS),
                (DataFile(_SIMPLIFIED_DEV),),
            ),
            hint="https://ai.google.com/research/NaturalQuestions/download (v1.0 dev shards)",
        )

    def adapter_defaults(self) -> AdapterDefaults:
        """HELM's: the question is cued ``Question: `` in closed book only."""
        adapter: AdapterDefaults = {**self.info.default_adapter}
        if self.mode != "closedbook":
            adapter["input_prefix"] = ""
        return adapter

    def load(self, data: ResolvedData) -> list[Instance]:
        names = _DEV_SHARDS if data.layout == _Layout.DEV_SHARDS else (_SIMPLIFIED_DEV,)
        rng = random.Random(0)
        instances = []
        for name in names:
            for position, raw in enumerate(_read_raw(data[name])):
                split = TRAIN_SPLIT if position % 2 == 0 else VALID_SPLIT
                instances.append(_instance(raw, split, self.mode, rng))
        return instances
