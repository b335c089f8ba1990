"""EXAMS (Hardalov et al., 2020): high-school exam questions, as HELM 0.5.16 reads them.

Two of HELM's scenarios read EXAMS:

- ``arabic_exams`` (HELM's Arabic leaderboard): the 562 Arabic questions in the AceGPT files
  that the Open Arabic LLM Leaderboard mirrors (``OALL/Arabic_EXAMS``). JSON Lines with the
  keys ``id`` (``"<Subject>-<n>"``), ``question``, ``A``-``D`` and ``answer``; ``exam_dev.jsonl``
  is HELM's ``validation`` split (its in-context pool, ``train``) and ``exam_test.jsonl`` its
  ``test``. The subject is the part of the id before the first ``-``.
- ``exams_multilingual``: the multilingual release, ``{train,dev,test}.jsonl.tar.gz`` (the
  archives the Hub loader downloads), one JSON object a line:
  ``{"id", "question": {"stem", "choices": [{"text", "label"}, ...]}, "answerKey", "info":
  {"grade", "subject", "language"}}``. Questions have three to five choices.

An answer key outside the choices: HELM skips a row whose key is no choice letter at all
(EXAMS multilingual has three rows with ``@``) and so does this loader, logging the file, the
line and the reason; a key that is a letter but names no choice of its row (``E`` on a
four-choice question) would give HELM an instance without a correct reference, and is an error
here naming file and line.
"""

from __future__ import annotations

import io
import logging
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from holistic.core.arguments import arg
from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.jsonl import numbered_json_objects
from holistic.core.types import TEST_SPLIT, TRAIN_SPLIT, VALID_SPLIT, AdapterDefaults, Instance
from holistic.scenarios.base import PlanFacts
from holistic.scenarios.loading.categories import CLASSIFICATION
from holistic.scenarios.loading.common import FileScenario, check_choice, choice_references, github_raw
from holistic.scenarios.loading.languages import ARABIC, MULTILINGUAL, non_english_info
from holistic.scenarios.loading.prompt_format import multiple_choice_joint_format
from holistic.scenarios.loading.readers import iter_located_jsonl, require, require_text
from holistic.scenarios.loading.sources import DataFile, DataNeeds, Download, ResolvedData

logger = logging.getLogger(__name__)

ALL = "all"

# --- Arabic EXAMS -------------------------------------------------------------------------------

_ACEGPT = "FreedomIntelligence/AceGPT"
_ACEGPT_COMMIT = "061a656497168edd8f01ce6c03d6a4c7fa1d42d5"
_ACEGPT_DIR = "eval/benchmark_eval/benchmarks/EXAMS_Arabic"
ARABIC_SUBJECTS: dict[str, tuple[int, int]] = {
    "Biology": (5, 35),
    "Islamic Studies": (5, 73),
    "Physics": (5, 42),
    "Science": (5, 115),
    "Social": (5, 272),
}
"""Subject -> (dev, test) rows."""
_ARABIC_FILES = (
    ("exam_dev.jsonl", TRAIN_SPLIT, "4384ee610f1179b1576b741758122d07d1ff8554c4f11d59e894b0c4487a2431"),
    ("exam_test.jsonl", TEST_SPLIT, "8e9d92e76882ba63adcd7f53443f0ee0f2bd1718f3ade3ce3c190abdc2af37ce"),
)
_LETTERS = ("A", "B", "C", "D")

ARABIC_MCQA_INSTRUCTIONS = "السؤال التالي هو سؤال متعدد الإختيارات. اختر الإجابة الصحيحة"
"""HELM's instructions for its Arabic multiple-choice scenarios (``arabic_run_specs.py``)."""
ARABIC_MCQA_OUTPUT_FORMAT = "اكتب حرف الإجابة فقط، دون أي إضافات أخرى."
"""HELM's ``output_format_instructions=arabic_mcqa``, which its Arabic run entries add before them."""
ARABIC_CHOICE_LABELS = ("أ", "ب", "ج", "د", "هـ")
"""HELM's ``reference_prefix_characters`` for its Arabic multiple-choice run specs."""
ARABIC_ANSWER_PATTERN = "(أ|ب|ج|د|هـ)"
"""HELM's ``output_mapping_pattern`` for them: the first Arabic choice letter in the answer."""


def _arabic_exams_adapter() -> AdapterDefaults:
    """HELM's ``arabic_exams`` run entry: its run spec (Arabic nouns, the choices lettered أ ب ج د
    and the answer read with its pattern, ``max_tokens=100``) with ``output_format_instructions=
    arabic_mcqa`` and ``max_train_instances=0``."""
    return {
        **multiple_choice_joint_format(f"{ARABIC_MCQA_OUTPUT_FORMAT}\n\n{ARABIC_MCQA_INSTRUCTIONS}"),
        "input_prefix": "السؤال: ",
        "output_prefix": "الإجابة: ",
        "choice_labels": ARABIC_CHOICE_LABELS,
        "answer_pattern": ARABIC_ANSWER_PATTERN,
        "max_train_instances": 0,
        "max_tokens": 100,
    }


def read_arabic_exams(path: Path, split: str, subject: str) -> list[Instance]:
    """The rows of one AceGPT EXAMS file of ``subject`` (``all``: every subject)."""
    out = []
    for _, where, row in iter_located_jsonl(path):
        row_id = require_text(row, "id", where)
        row_subject = row_id.split("-")[0]
        if subject != ALL and row_subject != subject:
            continue
        answer = require(row, "answer", where)
        if answer not in _LETTERS:
            logger.warning("%s: answer %r is not one of A, B, C, D; row skipped, as HELM skips it", where, answer)
            continue
        choices = [str(require(row, letter, where)) for letter in _LETTERS]
        out.append(
            Instance(
                id=row_id,
                input=require_text(row, "question", where),
                references=choice_references(choices, _LETTERS.index(answer)),
                split=split,
                metadata={"subject": row_subject},
            )
        )
    return out


@dataclass(frozen=True, kw_only=True)
class ArabicEXAMSScenario(FileScenario):
    """HELM's Arabic EXAMS: four-choice high-school exam questions in Arabic."""

    info = non_english_info(
        ScenarioInfo(
            name="arabic_exams",
            description="Arabic EXAMS: four-choice high-school exam questions in Arabic (HELM Arabic).",
            task="multiple_choice",
            default_adapter=_arabic_exams_adapter(),
            main_metric="exact_match",
            **CLASSIFICATION,
            tags=("knowledge", "multiple_choice", "arabic"),
            breakdowns=("subject",),
        ),
        ARABIC,
    )
    samples_prompts = True
    subject: str = arg(ALL, enum=(ALL, *ARABIC_SUBJECTS, "Islamic_Studies"))
    """One subject (HELM writes ``Islamic_Studies``; both spellings are read) or ``all``."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "subject", self.subject.replace("_", " "))
        check_choice(self.subject, [ALL, *ARABIC_SUBJECTS], "Arabic EXAMS subject")

    def plan_facts(self, data_root: Path | None, max_eval_instances: int | None) -> PlanFacts:
        sizes = ARABIC_SUBJECTS.values() if self.subject == ALL else [ARABIC_SUBJECTS[self.subject]]
        return PlanFacts(num_instances=sum(sum(s) for s in sizes), samples_prompts=True)

    def data_needs(self) -> DataNeeds:
        files = tuple(
            DataFile(
                name, downloads=(Download(github_raw(_ACEGPT, _ACEGPT_COMMIT, f"{_ACEGPT_DIR}/{name}")),), sha256=sha
            )
            for name, _, sha in _ARABIC_FILES
        )
        return DataNeeds("arabic_exams", layouts=(files,), hint=f"https://github.com/{_ACEGPT} ({_ACEGPT_DIR}/)")

    def load(self, data: ResolvedData) -> list[Instance]:
        return [inst for name, split, _ in _ARABIC_FILES for inst in read_arabic_exams(data[name], split, self.subject)]


# --- EXAMS multilingual -------------------------------------------------------------------------

_EXAMS_REPO = "mhardalov/exams-qa"
_EXAMS_COMMIT = "f859e665de6c370f6214ca5f36a34ace36ada6cb"
_MULTI_FILES = (
    ("train", TRAIN_SPLIT, "13ad2961f5a776b7e4cceba8076d51501ef0547911a3634db47e53af3493a46b"),
    ("dev", VALID_SPLIT, "0a6850d000319f748ab6d36c57568c2db41fb5bc0ed7f0cad01fd4c5d1945334"),
    ("test", TEST_SPLIT, "404fd7db164bd9bd91669228c264ddb594b8586dae3d4b745be5de869d72c985"),
)
_MULTI_KEYS = ("A", "B", "C", "D", "E")
"""HELM's ``CHOICES``: an ``answerKey`` outside these is skipped."""
LANGUAGES = (
    "Albanian", "Arabic", "Bulgarian", "Croatian", "French", "German", "Hungarian", "Italian", "Lithuanian",
    "North Macedonian", "Polish", "Portuguese", "Serbian", "Spanish", "Turkish", "Vietnamese",
)  # fmt: skip
SUBJECTS = (
    "Agriculture", "Agriculture (Mechanical knowledge)", "Biology", "Business", "Chemistry", "Citizenship",
    "Economics", "Economics & Marketing", "Economics Basics (Business)", "Economics Basics (Theoretical)", "Ethics",
    "Fine Arts", "Forestry", "Geography", "Geology", "History", "Informatics", "Islamic Studies", "Landscaping",
    "Philosophy", "Physics", "Politics", "Professional", "Psychology", "Religion", "Science", "Social", "Sociology",
    "Tourism",
)  # fmt: skip


def iter_tar_jsonl(path: Path, member: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """(``archive:member:line`` for messages, object) of each line of a JSON Lines member of a tarball,
    read in memory."""
    try:
        with tarfile.open(path, "r:gz") as tar:
            try:
                handle = tar.extractfile(member)
            except KeyError:
                names = ", ".join(tar.getnames()[:5])
                raise DataSourceError(f"{path}: no member {member!r} in the archive (it holds {names})") from None
            if handle is None:
                raise DataSourceError(f"{path}: member {member!r} is not a file")
            text = io.TextIOWrapper(handle, encoding="utf-8-sig", newline="")
            label = f"{path}:{member}"
            for number, value in numbered_json_objects(text, Path(label), DataSourceError):
                yield f"{label}:{number}", value
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise DataSourceError(f"{path}: cannot read as a .tar.gz archive: {exc}") from None


def exams_instance(where: str, row: dict[str, Any], split: str) -> Instance | None:
    """One EXAMS multilingual row as HELM reads it; ``None`` (logged) for a key HELM skips."""
    question = require(row, "question", where)
    if not isinstance(question, dict):
        raise DataSourceError(f"{where}: 'question' must be an object with 'stem' and 'choices'")
    key = require(row, "answerKey", where)
    if key not in _MULTI_KEYS:
        logger.warning("%s: answerKey %r is not one of A-E; row skipped, as HELM skips it", where, key)
        return None
    choices = require(question, "choices", f"{where}: question")
    if not isinstance(choices, list) or not all(isinstance(c, dict) and "text" in c for c in choices):
        raise DataSourceError(f"{where}: 'question.choices' must be a list of objects with 'text'")
    index = _MULTI_KEYS.index(key)
    if index >= len(choices):
        raise DataSourceError(
            f"{where}: answerKey {key!r} names no choice: the row has {len(choices)} choices "
            f"({', '.join(_MULTI_KEYS[: len(choices)])}); HELM would keep it with no correct answer"
        )
    info = require(row, "info", where)
    return Instance(
        id=str(require(row, "id", where)),
        input=str(require(question, "stem", f"{where}: question")),
        references=choice_references([str(c["text"]) for c in choices], index),
        split=split,
        metadata={"subject": str(info.get("subject", "")), "language": str(info.get("language", ""))},
    )


def _multilingual_info() -> ScenarioInfo:
    info = ScenarioInfo(
        name="exams_multilingual",
        description="EXAMS multilingual: high-school exam questions in 16 languages, three to five choices.",
        task="multiple_choice",
        default_adapter=multiple_choice_joint_format(),
        main_metric="exact_match",
        **CLASSIFICATION,
        tags=("knowledge", "multiple_choice", "multilingual"),
        breakdowns=("language",),
    )
    return non_english_info(info, MULTILINGUAL)


@dataclass(frozen=True, kw_only=True)
class EXAMSMultilingualScenario(FileScenario):
    """HELM's ``exams_multilingual``: one language and subject (or ``all``) per run."""

    info = _multilingual_info()
    language: str = arg(enum=(ALL, *LANGUAGES))
    subject: str = arg(enum=(ALL, *SUBJECTS))

    def __post_init__(self) -> None:
        check_choice(self.language, [ALL, *LANGUAGES], "EXAMS language")
        check_choice(self.subject, [ALL, *SUBJECTS], "EXAMS subject")

    def adapter_defaults(self) -> AdapterDefaults:
        """HELM's run spec: English instructions naming the subject (as HELM writes it)."""
        return {
            **self.info.default_adapter,
            "instructions": (
                f"The following are multiple choice questions (with answers) about {self.subject.replace('_', ' ')}. "
                "Answer the last question. Respond only with only a single letter corresponding to your choice."
            ),
        }

    def plan_facts(self, data_root: Path | None, max_eval_instances: int | None) -> PlanFacts:
        return PlanFacts(
            num_instances=24143 if self.language == ALL and self.subject == ALL else None,
            notes=(
                "exams_multilingual: rows whose answerKey is no letter A-E (4 in the release, '@': 1 train, 3 test) "
                "are skipped with a warning naming file and line, as HELM skips them",
            ),
        )

    def data_needs(self) -> DataNeeds:
        files = tuple(
            DataFile(
                f"{name}.jsonl.tar.gz",
                downloads=(
                    Download(
                        github_raw(_EXAMS_REPO, _EXAMS_COMMIT, f"data/exams/multilingual/{name}.jsonl.tar.gz"),
                        sha256=sha,
                    ),
                ),
                sha256=sha,
            )
            for name, _, sha in _MULTI_FILES
        )
        return DataNeeds(
            "exams_multilingual", layouts=(files,), hint=f"https://github.com/{_EXAMS_REPO} (data/exams/multilingual/)"
        )

    def load(self, data: ResolvedData) -> list[Instance]:
        out = []
        for name, split, _ in _MULTI_FILES:
            for where, row in iter_tar_jsonl(data[f"{name}.jsonl.tar.gz"], f"{name}.jsonl"):
                info = row.get("info")
                if not isinstance(info, dict):
                    raise DataSourceError(f"{where}: 'info' must be an object with 'subject' and 'language'")
                if self.subject != ALL and info.get("subject") != self.subject:
                    continue
                if self.language != ALL and info.get("language") != self.language:
                    continue
                instance = exams_instance(where, row, split)
                if instance is not None:
                    out.append(instance)
        return out
