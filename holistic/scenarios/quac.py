"""QuAC (Choi et al., 2018): question answering in information-seeking dialogues.

Authors' format: ``train_v0.2.json`` / ``val_v0.2.json``, SQuAD-like
(``data[].paragraphs[].context`` + ``qas[]`` with ``question``, ``id``,
``answers[].text``, ``orig_answer.text``). As in HELM, each dialogue gives one
instance: a turn chosen by a seed from the dialogue id, asked after the earlier
turns (questions with their original answers) as context. ``CANNOTANSWER`` is a
valid answer.
"""

from __future__ import annotations

import random
from pathlib import Path

from holistic.core.errors import DataSourceError
from holistic.core.hashing import stable_seed
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import CORRECT_TAG, TRAIN_SPLIT, VALID_SPLIT, Instance, Reference
from holistic.scenarios.categories import OPEN_QA_CATEGORIES, OPEN_QA_NOT_APPLICABLE
from holistic.scenarios.loading import SplitFilesScenario
from holistic.scenarios.prompt_format import prompt_format
from holistic.scenarios.readers import read_json, require
from holistic.scenarios.registry import SCENARIOS
from holistic.scenarios.sources import Download

_BASE = "https://s3.amazonaws.com/my89public/quac/"
_NO_ANSWER = "CANNOTANSWER"


def _read(path: Path, split: str) -> list[Instance]:
    document = read_json(path)
    if not isinstance(document, dict) or not isinstance(document.get("data"), list):
        raise DataSourceError(f"{path}: expected an object with a 'data' list (QuAC / SQuAD layout)")
    out = []
    for article_index, article in enumerate(document["data"]):
        for paragraph in article.get("paragraphs", []):
            where = f"{path}: data[{article_index}]"
            qas = require(paragraph, "qas", where)
            if not qas:
                continue
            context = str(require(paragraph, "context", where)).replace(_NO_ANSWER, "").strip()
            dialogue_id = str(paragraph.get("id", qas[0]["id"].split("_q#")[0]))
            turn = random.Random(stable_seed("quac-turn", dialogue_id)).randrange(len(qas))
            lines = [
                f"Title: {article.get('title', '')}",
                f"Background: {article.get('background', '')}",
                f"Section: {article.get('section_title', '')}",
                f"Passage: {context}",
                "",
            ]
            for qa in qas[:turn]:
                previous = qa.get("orig_answer", {}).get("text") or (qa.get("answers") or [{"text": ""}])[0]["text"]
                lines += [f"Question: {qa['question']}", f"Answer: {previous}"]
            target = qas[turn]
            lines.append(f"Question: {target['question']}")
            answers = [a["text"] for a in target.get("answers", [])]
            if target.get("orig_answer", {}).get("text"):
                answers.append(target["orig_answer"]["text"])
            answers = list(dict.fromkeys(a.strip() for a in answers if a.strip())) or [_NO_ANSWER]
            out.append(
                Instance(
                    id=str(target["id"]),
                    input="\n".join(lines),
                    references=tuple(Reference(a, (CORRECT_TAG,)) for a in answers),
                    split=split,
                    metadata={"turn": turn, "dialogue_id": dialogue_id},
                )
            )
    return out


@SCENARIOS.register("quac")
class QuACScenario(SplitFilesScenario):
    """Answer the next question of a dialogue about a Wikipedia section."""

    info = ScenarioInfo(
        name="quac",
        description="QuAC: answer a question in a dialogue about a Wikipedia section (question answering).",
        task="qa",
        default_adapter=prompt_format(output_prefix="Answer: ", max_tokens=100),
        main_metric="f1_score",
        metric_categories=OPEN_QA_CATEGORIES,
        not_applicable_reasons=OPEN_QA_NOT_APPLICABLE,
        args_schema={"type": "object", "properties": {}, "additionalProperties": False},
        tags=("question_answering", "dialogue", "core"),
    )
    num_instances = 1000
    split_files = (("train_v0.2.json", TRAIN_SPLIT), ("val_v0.2.json", VALID_SPLIT))
    hint = "https://quac.ai/"
    read = staticmethod(_read)

    def download(self, name: str) -> Download:
        return Download(_BASE + name)
