"""HumanEval (Chen et al., 2021): 164 Python functions to complete, scored by running their tests.

HELM's adaptation (``code:dataset=humaneval`` in crfm-helm 0.5.16): the prompt is the
problem's own text (signature and docstring) with nothing around it, zero-shot;
temperature 0.2, up to 600 tokens, stopping at ``\\nclass``, ``\\ndef``, ``\\nif`` or
``\\nprint``; every problem is a test instance. Scored by the ``code`` metric, which
runs ``prompt + "    " + completion.strip() + test + check(entry_point)`` in the OS
sandbox (:mod:`holistic.metrics.sandbox`): ``code_eval_acc`` and ``pass`` (pass@1),
with ``@k`` values when ``num_outputs`` > 1.

Data: the authors' ``HumanEval.jsonl.gz`` (fields ``task_id``, ``prompt``,
``canonical_solution``, ``test``, ``entry_point``) from ``openai/human-eval`` at a
pinned commit (MIT), checked by sha256. Each problem's test code is parsed (never
run) when it is read; one that does not parse is reported at its line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from holistic.core.code_execution import EXECUTES_CODE_TAG, SANDBOX_KEY, SandboxLimitArgs
from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import CORRECT_TAG, TEST_SPLIT, Instance, Reference
from holistic.scenarios.loading.code_common import check_parses, code_info
from holistic.scenarios.loading.common import FileScenario
from holistic.scenarios.loading.part_files import github_file
from holistic.scenarios.loading.readers import iter_located_jsonl, require
from holistic.scenarios.loading.sources import DataNeeds, ResolvedData

_REPO = "openai/human-eval"
_COMMIT = "6d43fb980f9fee3c892a914eda09951f772ad10d"
_FILE = "HumanEval.jsonl.gz"
STOP_SEQUENCES = ("\nclass", "\ndef", "\nif", "\nprint")
"""HELM's (from the Codex paper): stop before the model starts another top-level block."""


def read_humaneval(path: Path, sandbox: dict[str, Any]) -> list[Instance]:
    out = []
    for _, where, row in iter_located_jsonl(path):
        fields = {k: require(row, k, where) for k in ("task_id", "prompt", "canonical_solution", "test", "entry_point")}
        for key, value in fields.items():
            if not isinstance(value, str):
                raise DataSourceError(f"{where}: field {key!r} must be a string, got {type(value).__name__}")
        task_id = fields["task_id"]
        check_parses(fields["test"], where, f"the test of {task_id}")
        if not fields["entry_point"].isidentifier():
            raise DataSourceError(f"{where}: entry_point {fields['entry_point']!r} of {task_id} is not a Python name")
        out.append(
            Instance(
                id=task_id.replace("/", "_"),
                input=fields["prompt"],
                references=(Reference(fields["canonical_solution"], (CORRECT_TAG,)),),
                split=TEST_SPLIT,
                metadata={
                    "task_id": task_id,
                    "test": fields["test"],
                    "entry_point": fields["entry_point"],
                    SANDBOX_KEY: sandbox,
                },
            )
        )
    if not out:
        raise DataSourceError(f"{path}: no problems")
    return out


@dataclass(frozen=True, kw_only=True)
class HumanEvalScenario(FileScenario, SandboxLimitArgs):
    """Python functions completed from their docstring, scored by their unit tests in the sandbox."""

    samples_prompts = True

    info = ScenarioInfo(
        name="humaneval",
        description="HumanEval: 164 Python functions to complete from a docstring, scored by running their tests "
        "in the OS sandbox.",
        **code_info(
            main_metric="pass",
            max_train_instances=0,
            stop_sequences=STOP_SEQUENCES,
            unperturbed="HELM evaluates HumanEval unperturbed (a perturbed docstring can change the task)",
        ),
        tags=("code", "reasoning", "targeted:reasoning", EXECUTES_CODE_TAG),
    )
    num_instances = 164

    def data_needs(self) -> DataNeeds:
        return DataNeeds(
            "humaneval",
            layouts=((github_file("humaneval", _FILE, _REPO, _COMMIT, f"data/{_FILE}"),),),
            hint=f"https://github.com/{_REPO} (data/{_FILE})",
        )

    def load(self, data: ResolvedData) -> list[Instance]:
        return read_humaneval(data[_FILE], self.sandbox)
