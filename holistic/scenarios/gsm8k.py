"""GSM8K (Cobbe et al., 2021): grade-school maths word problems with worked answers.

HELM's protocol: ``Q: <question>`` / ``A: <answer>``, five in-context examples from
the training set whose answers are the authors' step-by-step reasoning (chain of
thought) with ``#### 72`` rewritten as ``The answer is 72.`` and newlines folded into
spaces; greedy decoding up to 400 tokens, stopping at a blank line. Scored by
``final_number_exact_match``: the last number of the output against the number after
``####`` in the reference.

Data: the authors' ``train.jsonl`` and ``test.jsonl`` (fields ``question`` and
``answer``) from ``openai/grade-school-math`` at a pinned commit (MIT). HELM
evaluates on test. When only ``train.jsonl`` is present, a fixed seeded set of 100
training questions is the example pool and the other training questions are
evaluated (split ``valid``) — not comparable with published test numbers.
"""

from __future__ import annotations

from enum import IntEnum
from pathlib import Path

from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import CORRECT_TAG, TEST_SPLIT, TRAIN_SPLIT, VALID_SPLIT, Instance, Reference
from holistic.scenarios.loading.categories import worked_answer
from holistic.scenarios.loading.common import FileScenario, with_train_pool
from holistic.scenarios.loading.part_files import github_file
from holistic.scenarios.loading.prompt_format import prompt_format
from holistic.scenarios.loading.readers import iter_located_jsonl, require
from holistic.scenarios.loading.sources import DataFile, DataNeeds, ResolvedData

_REPO = "openai/grade-school-math"
_COMMIT = "3101c7d5072418e28b9008a6636bde82a006892c"
_POOL_FROM_TRAIN = 100


def _file(name: str) -> DataFile:
    return github_file("gsm8k", name, _REPO, _COMMIT, f"grade_school_math/data/{name}")


def helm_answer(answer: str) -> str:
    """The reference as HELM writes it: ``####`` -> ``The answer is``, one line, a final period."""
    return answer.replace("####", "The answer is").replace("\n", " ") + "."


def read_gsm8k(path: Path, split: str) -> list[Instance]:
    out = []
    for number, where, row in iter_located_jsonl(path):
        question, answer = require(row, "question", where), require(row, "answer", where)
        if not isinstance(answer, str) or "####" not in answer:
            raise DataSourceError(f"{where}: answer has no '#### <number>' final answer")
        out.append(
            Instance(
                id=f"{path.stem}-{number}",
                input=str(question).strip(),
                references=(Reference(helm_answer(answer), (CORRECT_TAG,)),),
                split=split,
            )
        )
    return out


class _Layout(IntEnum):
    """The layouts of :meth:`data_needs`, by their index in ``DataNeeds.layouts``."""

    TRAIN_AND_TEST = 0
    """``train.jsonl`` and ``test.jsonl``."""
    TRAIN_ONLY = 1
    """``train.jsonl`` alone (evaluated on it)."""


class GSM8KScenario(FileScenario):
    """Maths word problems answered with chain-of-thought reasoning."""

    samples_prompts = True

    info = ScenarioInfo(
        name="gsm8k",
        description="GSM8K: grade-school maths word problems, chain-of-thought examples, final number scored.",
        task="generation",
        default_adapter=prompt_format(
            input_prefix="Q: ",
            output_prefix="A: ",
            max_tokens=400,
            stop_sequences=("\n\n",),
        ),
        main_metric="final_number_exact_match",
        **worked_answer(
            answer="a worked answer", unperturbed="HELM evaluates GSM8K unperturbed (a typo can change a number)"
        ),
        tags=("math", "reasoning", "targeted:reasoning"),
    )
    num_instances = 1319

    def data_needs(self) -> DataNeeds:
        return DataNeeds(
            "gsm8k",
            layouts=((_file("train.jsonl"), _file("test.jsonl")), (_file("train.jsonl"),)),
            hint=f"https://github.com/{_REPO} (grade_school_math/data/)",
        )

    def load(self, data: ResolvedData) -> list[Instance]:
        if data.layout == _Layout.TRAIN_AND_TEST:
            return read_gsm8k(data["train.jsonl"], TRAIN_SPLIT) + read_gsm8k(data["test.jsonl"], TEST_SPLIT)
        return with_train_pool(read_gsm8k(data["train.jsonl"], VALID_SPLIT), _POOL_FROM_TRAIN, "gsm8k-train-pool")
