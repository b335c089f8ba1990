"""LLMeBench's Arabic tasks (Dalvi et al., 2024), read from the datasets' authors' own files.

LLMeBench frames each dataset as a task with its own metric; three of its Arabic tasks:

- ``llmebench_sarcasm``: is a tweet sarcastic? ArSarcasm (Abu Farha & Magdy, 2020;
  ``ArSarcasm_{train,test}.csv``, columns ``dialect,sarcasm,sentiment,original_sentiment,tweet,
  source``, ``sarcasm`` ``True``/``False``) and ArSarcasm-v2 (the WANLP 2021 shared task;
  ``{training,testing}_data.csv``, columns ``tweet,sarcasm,sentiment,dialect``, ``TRUE``/``FALSE``;
  the test file has CRLF line ends, the training file LF). Scored by macro-F1 over the two labels.
- ``llmebench_stance``: does a claim agree or disagree with a reference sentence? The ANS stance
  corpus (Khouja, 2020; ``{train,dev,test}.csv``, columns ``s1,s2,stance``, labels ``agree``,
  ``disagree``, ``other``). Scored by macro-F1.
- ``llmebench_qa``: extractive question answering on Wikipedia paragraphs, in SQuAD v1.1 JSON:
  ARCD (Mozannar et al., 2019; ``arcd-{train,test}.json``) and the Arabic XQuAD
  (``xquad.ar.json``, test only; as in LLMeBench its in-context pool is ARCD's training file).
  Scored by token F1 and exact match after SQuAD's normalisation (LLMeBench's ``exact_match`` is
  this ``quasi_exact_match``).

The prompts follow LLMeBench's published zero-shot assets in spirit (an instruction naming the
labels, the input, a ``label:`` cue; an Arabic instruction for QA that asks for a span of the
context), written afresh. LLMeBench maps a free answer onto a label in each asset's
post-processing; here the answer is scored as HELM scores a label (normalised exact match), so
an answer other than the label counts against every label.

Every row is checked: a row with more or fewer fields than the header, an empty text, or a label
outside the task's labels is an error naming the file, the line and the reason; nothing is
skipped. The files are not downloaded (LLMeBench fetches its own zips): put them under
``<data root>/llmebench/<Dataset>/`` with the authors' names.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from holistic.core.arguments import arg
from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import CORRECT_TAG, TEST_SPLIT, TRAIN_SPLIT, VALID_SPLIT, Instance, Reference
from holistic.scenarios.base import PlanFacts
from holistic.scenarios.loading.categories import CLASSIFICATION_F1, OPEN_QA, not_applicable
from holistic.scenarios.loading.common import FileScenario, check_choice, missing_files_note
from holistic.scenarios.loading.languages import ARABIC, non_english_info
from holistic.scenarios.loading.prompt_format import prompt_format
from holistic.scenarios.loading.readers import open_text, read_json, require
from holistic.scenarios.loading.sources import DataFile, DataNeeds, ResolvedData

FOLDER = "llmebench"
_HINT = (
    "the authors' files, under <data root>/llmebench/<Dataset>/: ArSarcasm (github.com/iabufarha/ArSarcasm, "
    "dataset/), ArSarcasm2 (github.com/iabufarha/ArSarcasm-v2, ArSarcasm-v2/), ANSStance (github.com/latynt/ans, "
    "data/stance/), ARCD (github.com/husseinmozannar/SOQAL, data/), XQuAD (github.com/google-deepmind/xquad)"
)


@dataclass(frozen=True)
class _File:
    path: str
    split: str
    sha256: str


def _needs(files: tuple[_File, ...]) -> DataNeeds:
    return DataNeeds(FOLDER, layouts=(tuple(DataFile(f.path, sha256=f.sha256) for f in files),), hint=_HINT)


def iter_csv_records(path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    """(line where the row starts, row by column) of a CSV file with a header; CRLF and LF line
    ends alike, quoted fields may span lines. A row whose field count is not the header's is an
    error naming its line (a silently shifted row would pair a text with another row's label)."""
    try:
        with open_text(path) as fh:
            reader = csv.reader(fh)
            header = next(reader, None)
            if not header:
                raise DataSourceError(f"{path}:1: empty file, expected a header line")
            start = reader.line_num + 1
            for row in reader:
                if row:
                    if len(row) != len(header):
                        raise DataSourceError(
                            f"{path}:{start}: row has {len(row)} fields, the header ({','.join(header)}) has "
                            f"{len(header)}"
                        )
                    yield start, dict(zip(header, row, strict=True))
                start = reader.line_num + 1
    except (csv.Error, UnicodeDecodeError) as exc:
        raise DataSourceError(f"{path}: cannot read as CSV: {exc}") from None


def _field(row: Mapping[str, str], key: str, where: str) -> str:
    value = require(dict(row), key, where)
    if not value.strip():
        raise DataSourceError(f"{where}: field {key!r} is empty")
    return str(value)


def labelled_instances(
    path: Path,
    split: str,
    *,
    text: tuple[str, ...],
    label: str,
    labels: Mapping[str, str],
    prefix: str,
    joiner: str = "\n",
) -> list[Instance]:
    """One instance per row: ``text`` columns joined by ``joiner``, ``label``'s value (matched
    case-insensitively against ``labels``, which maps it to the answer word) as the correct one
    of the answer words."""
    answers = list(dict.fromkeys(labels.values()))
    lookup = {k.lower(): v for k, v in labels.items()}
    out = []
    for index, (line, row) in enumerate(iter_csv_records(path)):
        where = f"{path}:{line}"
        raw = _field(row, label, where).strip()
        answer = lookup.get(raw.lower())
        if answer is None:
            raise DataSourceError(f"{where}: {label} {raw!r} is not one of {', '.join(labels)}")
        parts = [_field(row, column, where) for column in text]
        out.append(
            Instance(
                id=f"{prefix}-{index:05d}",
                input=joiner.join(parts),
                references=tuple(Reference(a, (CORRECT_TAG,) if a == answer else ()) for a in answers),
                split=split,
                metadata={"label": raw.upper() if answer in ("yes", "no") else raw, "line": str(line)},
            )
        )
    return out


class _LLMeBenchScenario(FileScenario):
    """The files of one dataset, read by :meth:`read`."""

    samples_prompts = True
    notes_missing_files = True
    files: ClassVar[Mapping[str, tuple[_File, ...]]]

    def dataset_files(self) -> tuple[_File, ...]:
        return self.files[getattr(self, "dataset", next(iter(self.files)))]

    def plan_facts(self, data_root: Path | None, max_eval_instances: int | None) -> PlanFacts:
        note = missing_files_note(self.data_needs(), data_root)
        return PlanFacts(notes=(note,) if note else (), samples_prompts=True)

    def data_needs(self) -> DataNeeds:
        return _needs(self.dataset_files())

    def read(self, path: Path, split: str, name: str) -> list[Instance]:
        raise NotImplementedError

    def load(self, data: ResolvedData) -> list[Instance]:
        return [i for f in self.dataset_files() for i in self.read(data[f.path], f.split, Path(f.path).stem)]


# --- sarcasm ------------------------------------------------------------------------------------

SARCASM_FILES: dict[str, tuple[_File, ...]] = {
    "ArSarcasm": (
        _File("ArSarcasm/ArSarcasm_train.csv", TRAIN_SPLIT, "6705a3d11572a6f20d41e32a38abee1462c38aa93eec7d9996db8545a3da5364"),
        _File("ArSarcasm/ArSarcasm_test.csv", TEST_SPLIT, "1a0e0df65d6dde96f7e01ad81c512bf8397cc9b66a7b3ff2fa0318b793883a34"),
    ),
    "ArSarcasm-v2": (
        _File("ArSarcasm2/training_data.csv", TRAIN_SPLIT, "1da727eb763459f436c4e61f52c6a0bc63d5300af8fcc99b5675ae4616dae04a"),
        _File("ArSarcasm2/testing_data.csv", TEST_SPLIT, "0f0a77ba8a4a0a9370846a42a93a63244092f1fb30a909595b70e17e299bcf6c"),
    ),
}  # fmt: skip
_SARCASM_LABELS = {"TRUE": "yes", "FALSE": "no"}


@dataclass(frozen=True, kw_only=True)
class SarcasmScenario(_LLMeBenchScenario):
    """LLMeBench's sarcasm detection on Arabic tweets."""

    info = non_english_info(
        ScenarioInfo(
            name="llmebench_sarcasm",
            description="Arabic sarcasm detection on tweets (ArSarcasm, ArSarcasm-v2), LLMeBench's framing, macro-F1.",
            default_adapter=prompt_format(
                instructions=(
                    "You are given an Arabic tweet. Say whether it is sarcastic: answer yes if it is sarcastic "
                    "and no if it is not. Give only the label."
                ),
                input_prefix="tweet: ",
                output_prefix="label: ",
                max_train_instances=0,
                max_tokens=5,
            ),
            main_metric="classification_macro_f1",
            **CLASSIFICATION_F1,
            tags=("sentiment_analysis", "classification", "arabic", "llmebench"),
            breakdowns=(),
        ),
        ARABIC,
    )
    files = SARCASM_FILES
    dataset: str = arg("ArSarcasm", enum=tuple(SARCASM_FILES))

    def __post_init__(self) -> None:
        check_choice(self.dataset, list(SARCASM_FILES), "sarcasm dataset")

    def read(self, path: Path, split: str, name: str) -> list[Instance]:
        return labelled_instances(path, split, text=("tweet",), label="sarcasm", labels=_SARCASM_LABELS, prefix=name)


# --- stance -------------------------------------------------------------------------------------

STANCE_FILES = (
    _File("ANSStance/train.csv", TRAIN_SPLIT, "48efb4136ed9ba1958664b68be011c5b5f287262c99e5ed552ac7dbee1c1ae4a"),
    _File("ANSStance/dev.csv", VALID_SPLIT, "66e3f4ce64312497d05d42c3435cddd92725e1f8246c90d9bf24e648fb027591"),
    _File("ANSStance/test.csv", TEST_SPLIT, "d47c360122ebb8da6ca52b07b2796ecfb3cf28dea00a4fbfc8f10d32c54f89cd"),
)
_STANCE_LABELS = {"agree": "agree", "disagree": "disagree", "other": "other"}


@dataclass(frozen=True, kw_only=True)
class StanceScenario(_LLMeBenchScenario):
    """LLMeBench's stance detection on the ANS corpus (claim vs reference sentence)."""

    info = non_english_info(
        ScenarioInfo(
            name="llmebench_stance",
            description="Arabic stance detection (ANS): does a claim agree with a reference sentence? Macro-F1.",
            default_adapter=prompt_format(
                instructions=(
                    "Compare the claim with the reference sentence. Answer agree if the claim agrees with it, "
                    "disagree if it contradicts it, or other if the two are unrelated. Give only the label."
                ),
                input_prefix="reference sentence: ",
                output_prefix="label: ",
                max_train_instances=0,
                max_tokens=5,
            ),
            main_metric="classification_macro_f1",
            **CLASSIFICATION_F1,
            tags=("classification", "fact_checking", "arabic", "llmebench"),
        ),
        ARABIC,
    )
    files: ClassVar[Mapping[str, tuple[_File, ...]]] = {"ANSStance": STANCE_FILES}

    def read(self, path: Path, split: str, name: str) -> list[Instance]:
        return labelled_instances(
            path, split, text=("s1", "s2"), label="stance", labels=_STANCE_LABELS, prefix=name, joiner="\nclaim: "
        )


# --- extractive QA ------------------------------------------------------------------------------

_ARCD_TRAIN = _File(
    "ARCD/arcd-train.json", TRAIN_SPLIT, "6a973fda9f0b066e0547a85a3396e7294fa917e24b6efd7ce430769033a6ce15"
)
QA_FILES: dict[str, tuple[_File, ...]] = {
    "ARCD": (
        _ARCD_TRAIN,
        _File("ARCD/arcd-test.json", TEST_SPLIT, "b4ba4fb4227841bbce71e01b3eaecb33e9f17a08cde1ec91e5bc335da2c75135"),
    ),
    "XQuAD": (
        _ARCD_TRAIN,
        _File("XQuAD/xquad.ar.json", TEST_SPLIT, "abdabd7afed5c635d99cca0f3f0d0c9d9ed0bc77451e963c2e4e0638c29e486d"),
    ),
}  # fmt: skip

QA_INSTRUCTIONS = (
    "اقرأ النص ثم أجب عن السؤال بالعربية. انسخ الإجابة من النص كما وردت فيه، وتكفي عبارة قصيرة دون أي شرح أو إضافة."
)
"""Read the context, answer the question in Arabic with a span copied from it, a short phrase
without explanation (LLMeBench's Arabic QA assets ask for the same; the wording is ours)."""


def squad_instances(path: Path, split: str, name: str) -> list[Instance]:
    """One instance per question of a SQuAD v1.1 file: ``السياق: <context>\\nالسؤال: <question>``,
    every given answer a correct reference."""
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise DataSourceError(f"{path}: expected SQuAD v1.1 JSON, an object with a 'data' list of articles")
    out = []
    for a, article in enumerate(data["data"]):
        for p, paragraph in enumerate(require(article, "paragraphs", f"{path}: data[{a}]")):
            where = f"{path}: data[{a}].paragraphs[{p}]"
            context = str(require(paragraph, "context", where))
            for q, qa in enumerate(require(paragraph, "qas", where)):
                out.append(_qa_instance(qa, context, split, f"{where}.qas[{q}]", name))
    return out


def _qa_instance(qa: Any, context: str, split: str, where: str, name: str) -> Instance:
    answers = require(qa, "answers", where)
    texts = (
        [str(x.get("text", "")).strip() for x in answers if isinstance(x, dict)] if isinstance(answers, list) else []
    )
    texts = [t for t in dict.fromkeys(texts) if t]
    if not texts:
        raise DataSourceError(f"{where}: 'answers' must hold at least one answer with a non-empty 'text'")
    question = str(require(qa, "question", where)).strip()
    return Instance(
        id=f"{name}-{require(qa, 'id', where)}",
        input=f"{context}\nالسؤال: {question}",
        references=tuple(Reference(t, (CORRECT_TAG,)) for t in texts),
        split=split,
        metadata={"question_id": str(qa["id"])},
    )


@dataclass(frozen=True, kw_only=True)
class ArabicQAScenario(_LLMeBenchScenario):
    """LLMeBench's extractive question answering in Arabic (ARCD, XQuAD)."""

    info = non_english_info(
        ScenarioInfo(
            name="llmebench_qa",
            description="Arabic extractive question answering (ARCD, XQuAD-ar), LLMeBench's framing, F1 and EM.",
            task="qa",
            default_adapter=prompt_format(
                instructions=QA_INSTRUCTIONS,
                input_prefix="السياق: ",
                output_prefix="الجواب: ",
                max_train_instances=0,
                max_tokens=50,
            ),
            main_metric="f1_score",
            metric_categories=tuple(c for c in OPEN_QA["metric_categories"] if c != "bias"),
            not_applicable_reasons=not_applicable(
                OPEN_QA["not_applicable_reasons"],
                bias="HELM's bias metric counts English gender and race words, absent from Arabic answers",
            ),
            tags=("question_answering", "reading_comprehension", "arabic", "llmebench"),
        ),
        ARABIC,
    )
    files = QA_FILES
    dataset: str = arg("ARCD", enum=tuple(QA_FILES))

    def __post_init__(self) -> None:
        check_choice(self.dataset, list(QA_FILES), "QA dataset")

    def read(self, path: Path, split: str, name: str) -> list[Instance]:
        return squad_instances(path, split, name)
