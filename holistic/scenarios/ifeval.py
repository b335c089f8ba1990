"""IFEval (Zhou et al., 2023): prompts with verifiable instructions.

Each of the 541 prompts carries one to three instructions ("answer in fewer than 200
words", "wrap the whole response in double quotes") that a program can check; the
checkers are in ``holistic.metrics.ifeval_checks`` and the scores in
:mod:`holistic.metrics.ifeval`.

HELM's run spec (HELM 0.5.16 ``capabilities_run_specs.get_ifeval_spec``; ids, prompts and
request parameters of all 541 instances checked against HELM's own code by
``tests/conformance/test_conformance_capabilities.py``):
zero-shot, the prompt stripped of surrounding whitespace followed by a newline (HELM's
default ``input_suffix``), no prefixes, greedy decoding up to 4096 tokens, no stop
sequence. Instance ids are HELM's (``id<key>``).

Data: the authors' ``input_data.jsonl`` (``google-research/google-research``,
``instruction_following_eval/data/``, pinned by commit and sha256; Apache-2.0), one
object per line with ``key``, ``prompt``, ``instruction_id_list`` and ``kwargs``.
HELM reads the Hugging Face copy ``google/IFEval``, which holds the same rows. Every
row's instructions and arguments are checked when the data is loaded; a bad row is an
error naming the file and line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from holistic.core.errors import DataSourceError, UnknownNameError
from holistic.core.ifeval import IFEvalArgumentError, instruction_args
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import TEST_SPLIT, Instance
from holistic.scenarios.loading.common import FileScenario
from holistic.scenarios.loading.part_files import github_file
from holistic.scenarios.loading.readers import iter_located_jsonl, require
from holistic.scenarios.loading.sources import DataFile, DataNeeds, ResolvedData

_REPO = "google-research/google-research"
_COMMIT = "19638399cc9e03623c5b9087a1d6fa8813974ce9"
FILE = "input_data.jsonl"


def _file() -> DataFile:
    return github_file("ifeval", FILE, _REPO, _COMMIT, f"instruction_following_eval/data/{FILE}")


def read_row(row: dict[str, Any], where: str) -> Instance:
    """One IFEval row as an instance (its instructions and arguments checked)."""
    key, prompt = require(row, "key", where), require(row, "prompt", where)
    ids, kwargs = require(row, "instruction_id_list", where), require(row, "kwargs", where)
    if not isinstance(prompt, str) or not prompt.strip():
        raise DataSourceError(f"{where}: prompt must be a non-empty string")
    if not isinstance(ids, list) or not ids or not isinstance(kwargs, list) or len(kwargs) != len(ids):
        raise DataSourceError(f"{where}: instruction_id_list and kwargs must be lists of the same, non-zero length")
    checked = []
    for index, (instruction_id, given) in enumerate(zip(ids, kwargs, strict=True)):
        if not isinstance(instruction_id, str) or not isinstance(given, dict):
            raise DataSourceError(f"{where}: instruction {index} must be a string id with an object of arguments")
        try:
            checked.append(instruction_args(instruction_id, given))
        except (UnknownNameError, IFEvalArgumentError) as exc:
            raise DataSourceError(f"{where}: kwargs[{index}]: {exc}") from None
    return Instance(
        id=f"id{key}",
        input=prompt.strip(),
        split=TEST_SPLIT,
        metadata={"instruction_ids": list(ids), "instruction_kwargs": checked},
    )


def read_ifeval(path: Path) -> list[Instance]:
    return [read_row(row, where) for _, where, row in iter_located_jsonl(path)]


class IFEvalScenario(FileScenario):
    """Instruction following, verified by program: IFEval's 541 prompts."""

    samples_prompts = True

    info = ScenarioInfo(
        name="ifeval",
        description="IFEval: prompts with verifiable instructions (length, format, keywords, case...), checked by program.",
        task="instruction_following",
        default_adapter={
            "method": "generation",
            "instructions": "",
            "input_prefix": "",
            "input_suffix": "\n",
            "output_prefix": "",
            "output_suffix": "\n",
            "max_train_instances": 0,
            "temperature": 0.0,
            "max_tokens": 4096,
            "stop_sequences": (),
        },
        main_metric="ifeval_strict_accuracy",
        metric_categories=("accuracy", "efficiency"),
        not_applicable_reasons={
            "calibration": "a free-form response has no answer probability",
            "robustness": "HELM evaluates IFEval unperturbed (a perturbation can break the instruction itself)",
            "fairness": "HELM evaluates IFEval unperturbed (a perturbation can break the instruction itself)",
            "bias": "HELM Capabilities measures no bias here (its run spec has the basic metrics only)",
            "toxicity": "HELM Capabilities measures no toxicity here (its run spec has the basic metrics only)",
        },
        tags=("ifeval", "instruction_following", "capabilities"),
    )
    num_instances = 541

    def data_needs(self) -> DataNeeds:
        return DataNeeds(
            "ifeval",
            layouts=((_file(),),),
            hint=f"https://github.com/{_REPO} (instruction_following_eval/data/{FILE})",
        )

    def load(self, data: ResolvedData) -> list[Instance]:
        return read_ifeval(data[FILE])
