"""QuAC (Choi et al., 2018): question answering in information-seeking dialogues.

Authors' format: ``train_v0.2.json`` / ``val_v0.2.json``, SQuAD-like
(``data[].paragraphs[].context`` + ``qas[]`` with ``question``, ``id``,
``answers[].text``, ``orig_answer.text``). As HELM's loader does, each dialogue
(the first paragraph of each ``data`` entry) gives one instance: the passage loses
its trailing `` CANNOTANSWER``; the asked turn ``k`` is ``randint(3, turns) - 1``
from one generator seeded with 0 for the train file and then the validation file
(HELM's ``random.seed(0)``); the prompt is ``Title: ...`` / ``Background: ...`` /
``Section: ...`` / ``Passage: ...``, then the first ``k - 1`` turns (question and
original answer; HELM leaves out turn ``k - 1``) and the asked question. The
references are the turn's distinct answers; an answer of ``CANNOTANSWER`` alone also
accepts "Not enough information", "Cannot answer" and "Do not know".

Hugging Face copy (used when the authors' files are absent): ``allenai/quac`` in the
Hub's Parquet conversion (revision ``refs/convert/parquet``),
``hf/plain_text/{train,validation}/0000.parquet``, one row per dialogue with
``dialogue_id``, ``wikipedia_page_title``, ``background``, ``section_title``,
``context``, ``turn_ids``, ``questions``, ``answers`` (``{"texts": [[...]], ...}``)
and ``orig_answers`` (``{"texts": [...], ...}``). Ids (the turn id), the chosen
turn, inputs, references and splits are the same as from the authors' files. The
``hf_revision`` arg defaults to that branch, which is not pinned: pin a commit of
it for reproducible runs.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import CORRECT_TAG, TRAIN_SPLIT, VALID_SPLIT, Instance, Reference
from holistic.scenarios.loading.categories import OPEN_QA
from holistic.scenarios.loading.hf_copy import HF_PARQUET_BRANCH, AuthorsOrHub, HubCopy, read_parquet_rows, row_where
from holistic.scenarios.loading.hub_fallback import SplitFilesHubScenario
from holistic.scenarios.loading.prompt_format import prompt_format
from holistic.scenarios.loading.readers import read_json, require
from holistic.scenarios.loading.sources import Download, ResolvedData

_BASE = "https://s3.amazonaws.com/my89public/quac/"
_NO_ANSWER = "CANNOTANSWER"
_HUB = HubCopy("allenai/quac", HF_PARQUET_BRANCH)
_HF_FILES = ((TRAIN_SPLIT, "plain_text/train/0000.parquet"), (VALID_SPLIT, "plain_text/validation/0000.parquet"))


_UNANSWERABLE = ("Not enough information", "Cannot answer", "Do not know")
_SUFFIX = " " + _NO_ANSWER


def _dialogue_instance(
    header: tuple[str, str, str],
    context: str,
    dialogue_id: str,
    turns: list[dict[str, Any]],
    split: str,
    rng: random.Random,
    where: str,
) -> Instance:
    """One instance from a dialogue; each turn holds ``id``, ``question``, ``answers`` (list) and ``orig`` (str)."""
    if not context.endswith(_SUFFIX):
        raise DataSourceError(f"{where}: the passage does not end with {_SUFFIX!r}, as QuAC's passages do")
    if len(turns) < 3:
        raise DataSourceError(f"{where}: the dialogue has {len(turns)} turns; HELM's QuAC needs at least 3")
    turn = rng.randint(3, len(turns)) - 1
    title, background, section = header
    prompt = f"Title: {title}\n\nBackground: {background}\n\nSection: {section}\n"
    prompt += f"Passage: {context[: -len(_SUFFIX)]}\n\n"
    for qa in turns[: turn - 1]:
        prompt += f"Question: {qa['question']}\nAnswer: {qa['orig']}\n\n"
    target = turns[turn]
    prompt += f"Question: {target['question']}"
    answers = list(dict.fromkeys(target["answers"]))
    if answers == [_NO_ANSWER]:
        answers.extend(_UNANSWERABLE)
    return Instance(
        id=str(target["id"]),
        input=prompt,
        references=tuple(Reference(a, (CORRECT_TAG,)) for a in answers),
        split=split,
        metadata={"turn": turn, "dialogue_id": dialogue_id},
    )


def _read(path: Path, split: str, rng: random.Random) -> list[Instance]:
    document = read_json(path)
    if not isinstance(document, dict) or not isinstance(document.get("data"), list):
        raise DataSourceError(f"{path}: expected an object with a 'data' list (QuAC / SQuAD layout)")
    out = []
    for article_index, article in enumerate(document["data"]):
        where = f"{path}: data[{article_index}]"
        paragraphs = require(article, "paragraphs", where)
        if not paragraphs:
            raise DataSourceError(f"{where}: no paragraphs")
        paragraph = paragraphs[0]  # HELM reads the first (QuAC has one per entry)
        qas = require(paragraph, "qas", where)
        context = str(require(paragraph, "context", where))
        dialogue_id = str(paragraph.get("id", qas[0]["id"].split("_q#")[0] if qas else article_index))
        turns = [
            {
                "id": qa["id"],
                "question": qa["question"],
                "answers": [a["text"] for a in qa.get("answers", [])],
                "orig": qa.get("orig_answer", {}).get("text") or "",
            }
            for qa in qas
        ]
        header = (
            str(article.get("title", "")),
            str(article.get("background", "")),
            str(article.get("section_title", "")),
        )
        out.append(_dialogue_instance(header, context, dialogue_id, turns, split, rng, where))
    return out


def _read_hf(path: Path, split: str, rng: random.Random) -> list[Instance]:
    columns = ("dialogue_id", "context", "turn_ids", "questions", "answers", "orig_answers")
    rows = read_parquet_rows(path, columns, optional=("wikipedia_page_title", "background", "section_title"))
    out = []
    for index, row in enumerate(rows):
        where = row_where(path, index)
        ids, questions = row["turn_ids"] or [], row["questions"] or []
        answers, orig = (row["answers"] or {}).get("texts") or [], (row["orig_answers"] or {}).get("texts") or []
        if not len(ids) == len(questions) == len(answers) == len(orig):
            raise DataSourceError(
                f"{where}: turn_ids, questions, answers.texts and orig_answers.texts differ in length "
                f"({len(ids)}, {len(questions)}, {len(answers)}, {len(orig)})"
            )
        turns = [
            {"id": t, "question": q, "answers": [str(x) for x in a or []], "orig": str(o or "")}
            for t, q, a, o in zip(ids, questions, answers, orig, strict=True)
        ]
        header = (
            str(row.get("wikipedia_page_title") or ""),
            str(row.get("background") or ""),
            str(row.get("section_title") or ""),
        )
        context = str(row["context"] or "")
        out.append(_dialogue_instance(header, context, str(row["dialogue_id"]), turns, split, rng, where))
    return out


@dataclass(frozen=True, kw_only=True)
class QuACScenario(SplitFilesHubScenario):
    """Answer the next question of a dialogue about a Wikipedia section."""

    info = ScenarioInfo(
        name="quac",
        description="QuAC: answer a question in a dialogue about a Wikipedia section (question answering).",
        task="qa",
        default_adapter=prompt_format(output_prefix="Answer: ", max_tokens=100),
        main_metric="f1_score",
        **OPEN_QA,
        tags=("question_answering", "dialogue", "core"),
    )
    num_instances = 1000
    split_files = (("train_v0.2.json", TRAIN_SPLIT), ("val_v0.2.json", VALID_SPLIT))
    hint = "https://quac.ai/"
    hub = _HUB
    hf_revision: str = _HUB.revision_arg()
    hf_files = _HF_FILES

    def download(self, name: str) -> Download:
        return Download(_BASE + name)

    def load(self, data: ResolvedData) -> list[Instance]:
        rng = random.Random(0)  # one draw per dialogue, train file first, as HELM's random.seed(0)
        if data.layout == AuthorsOrHub.HUB_COPY:
            return [inst for split, p in self.hf_files for inst in _read_hf(data[f"hf/{p}"], split, rng)]
        return [inst for name, split in self.split_files for inst in _read(data[name], split, rng)]
