"""OpenBookQA (Mihaylov et al., 2018): elementary science questions with four choices.

Authors' format (``Data/Main/{train,dev,test}.jsonl`` of the release, kept here as
``train.jsonl``, ``dev.jsonl``, ``test.jsonl``): ``id``, ``question.stem``,
``question.choices`` (``text`` and ``label`` A-D) and ``answerKey``. As HELM's loader
does, the training file is the in-context pool and the test file is evaluated; the
dev file is not read.

The release's TSV files (``Data/Main/{train,test}.tsv``, kept here as
``train.tsv`` and ``test.tsv``; read when the JSONL files are absent) hold
one question per line: the id, the stem with every choice in the same string
(``The sun is responsible for (A) … (B) … (C) … (D) …``) and the answer key. A
first line whose last field is not a choice letter is a header. The choices are
split out at each ``(A)``..``(Z)`` marker; ids, inputs and answers equal the JSONL's.

Hugging Face copy (used when the authors' files are absent): ``allenai/openbookqa``,
``hf/main/{train,validation,test}-00000-of-00001.parquet`` with columns ``id``,
``question_stem``, ``choices`` (``{"text": [...], "label": [...]}``) and
``answerKey`` (train and test only, as from the authors' files). Ids, inputs,
references and splits are the same as from the authors' files. The ``hf_revision`` arg (default ``main``, not pinned) should be
pinned to a commit of that repo.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from holistic.core.errors import DataSourceError
from holistic.core.types import TEST_SPLIT, TRAIN_SPLIT, Instance
from holistic.scenarios.loading.common import choice_references
from holistic.scenarios.loading.hf_copy import AuthorsOrHub, HubCopy, read_parquet_rows, row_where
from holistic.scenarios.loading.hub_fallback import SplitFilesHubScenario
from holistic.scenarios.loading.prompt_format import commonsense_info
from holistic.scenarios.loading.readers import iter_located_jsonl, open_text, require
from holistic.scenarios.loading.sources import DataFile, DataNeeds, Download, ResolvedData

_ZIP = "https://ai2-public-datasets.s3.amazonaws.com/open_book_qa/OpenBookQA-V1-Sep2018.zip"
_HUB = HubCopy("allenai/openbookqa")
_HF_FILES = (
    (TRAIN_SPLIT, "main/train-00000-of-00001.parquet"),
    (TEST_SPLIT, "main/test-00000-of-00001.parquet"),
)


def _instance(
    instance_id: str, stem: str, texts: list[str], labels: list[str], answer: str, split: str, where: str
) -> Instance:
    if answer not in labels:
        raise DataSourceError(f"{where}: answerKey {answer!r} is not among the choice labels {labels}")
    right = texts[labels.index(answer)]
    # as HELM: every choice whose text is the right one's is correct
    return Instance(
        id=instance_id,
        input=stem,
        references=choice_references(texts, [i for i, t in enumerate(texts) if t == right]),
        split=split,
    )


def _read(path: Path, split: str) -> list[Instance]:
    out = []
    for number, (_, where, row) in enumerate(iter_located_jsonl(path), start=1):
        question = require(row, "question", where)
        if not isinstance(question, dict):
            raise DataSourceError(f"{where}: 'question' must be an object with stem and choices")
        choices = require(question, "choices", where)
        labels = [str(c.get("label")) for c in choices]
        texts = [str(c.get("text", "")) for c in choices]
        answer = str(require(row, "answerKey", where))
        stem = str(require(question, "stem", where))
        out.append(_instance(str(row.get("id", f"{split}-{number}")), stem, texts, labels, answer, split, where))
    return out


_TSV_FILES = ((TRAIN_SPLIT, "train.tsv"), (TEST_SPLIT, "test.tsv"))  # as HELM reads the JSONL: train and test
_CHOICE_MARK = re.compile(r"\s*\(([A-Z])\)\s*")


def _read_tsv(path: Path, split: str) -> list[Instance]:
    out = []
    with open_text(path) as fh:
        for number, line in enumerate(fh, start=1):
            fields = line.rstrip("\r\n").split("\t")
            if not line.strip():
                continue
            where = f"{path}:{number}"
            if len(fields) != 3:
                raise DataSourceError(
                    f"{where}: expected 3 tab-separated fields (id, question, answer key), got {len(fields)}"
                )
            instance_id, question, answer = (f.strip() for f in fields)
            if number == 1 and not re.fullmatch(r"[A-Z]", answer):
                continue  # a header line
            parts = _CHOICE_MARK.split(question)
            stem, labels, texts = parts[0].strip(), parts[1::2], [t.strip() for t in parts[2::2]]
            if len(labels) < 2 or not stem:
                raise DataSourceError(f"{where}: the question should read 'stem (A) choice (B) choice ...'")
            out.append(_instance(instance_id, stem, texts, labels, answer, split, where))
    return out


def _read_hf(path: Path, split: str) -> list[Instance]:
    out = []
    for index, row in enumerate(read_parquet_rows(path, ("question_stem", "choices", "answerKey"), optional=("id",))):
        where = row_where(path, index)
        choices: Any = row["choices"]
        if (
            not isinstance(choices, dict)
            or not isinstance(choices.get("text"), list)
            or not isinstance(choices.get("label"), list)
        ):
            raise DataSourceError(f"{where}: 'choices' must be {{'text': [...], 'label': [...]}}, got {choices!r}")
        texts, labels = [str(t) for t in choices["text"]], [str(k) for k in choices["label"]]
        instance_id = str(row.get("id") or f"{split}-{index + 1}")
        out.append(
            _instance(instance_id, str(row["question_stem"]), texts, labels, str(row["answerKey"]), split, where)
        )
    return out


_TSV_LAYOUT = len(AuthorsOrHub)
"""The layout of the TSV files in :meth:`OpenBookQAScenario.data_needs`: after the authors' JSON
Lines and the Hugging Face Parquet copy (:class:`AuthorsOrHub`)."""


@dataclass(frozen=True, kw_only=True)
class OpenBookQAScenario(SplitFilesHubScenario):
    """Science questions needing a fact plus common knowledge."""

    samples_prompts = True

    info = commonsense_info(
        "openbookqa",
        "OpenBookQA: four-choice elementary science questions (commonsense knowledge).",
        method="multiple_choice_separate_calibrated",
    )
    num_instances = 1000
    split_files = (("train.jsonl", TRAIN_SPLIT), ("test.jsonl", TEST_SPLIT))
    """HELM's: the training file and the test file (``dev.jsonl`` is not read)."""
    hint = _ZIP
    read = staticmethod(_read)
    hub = _HUB
    hf_revision: str = _HUB.revision_arg()
    hf_files = _HF_FILES
    read_hf = staticmethod(_read_hf)

    def download(self, name: str) -> Download:
        return Download(_ZIP, member=f"OpenBookQA-V1-Sep2018/Data/Main/{name}")

    def data_needs(self) -> DataNeeds:
        needs = super().data_needs()
        tsv = tuple(DataFile(name, downloads=(self.download(name),)) for _, name in _TSV_FILES)
        return DataNeeds(needs.scenario, (*needs.layouts, tsv), hint=needs.hint)

    def load(self, data: ResolvedData) -> list[Instance]:
        if data.layout == _TSV_LAYOUT:
            return [inst for split, name in _TSV_FILES for inst in _read_tsv(data[name], split)]
        return super().load(data)
