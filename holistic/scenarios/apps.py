"""APPS (Hendrycks et al., 2021): programming problems scored by their test cases, run in the sandbox.

HELM's adaptation (``code:dataset=apps``, crfm-helm 0.5.16): the prompt is
``\\nQUESTION:\\n<question>\\n<starter code>\\n\\nUse Call-Based format\\n`` (when the
problem has starter code; else ``Use Standard Input format``) followed by
``\\nANSWER in Python code:\\n``; two in-context examples from the training problems
(their first solution as the answer), temperature 0.2, up to 600 tokens, stopping at
``'''``, ``---``, ``\"\"\"`` or three newlines. Scored by the ``code`` metric in the OS
sandbox: ``test_avg`` (share of test cases passed) and ``strict_acc`` (all passed), each
the best over the completions, with each test case run under ``timeout_s`` (HELM's 3 s).
A problem with ``fn_name`` in its tests is call-based (the function's return value is
compared), else its program reads standard input and its printed output is compared
as the APPS harness compares it (exact, per stripped line, numbers within tolerance,
sets of tokens).

Data: the authors' release, ``APPS.tar.gz`` (the link HELM downloads; not pinned: its
host could not be reached to take a sum), in their layout under the data root's
``apps/`` folder: ``{train,test}/<problem>/`` with ``question.txt``, ``input_output.json``
(``{"inputs": [...], "outputs": [...], "fn_name"?: ...}``), ``solutions.json`` (a list of
programs), ``metadata.json`` (``{"difficulty": ...}``) and, for call-based problems,
``starter_code.py``. ``difficulty`` selects ``introductory``, ``interview`` or
``competition`` problems (default all; every value is also a sub-split). Test cases
that do not parse are reported at their file and line; nothing is run while reading.
Differences from HELM: solutions used as in-context answers have their leading tabs
expanded rather than going through HELM's re-indenter, and a sample's wall time is its
per-test limits summed (plus start-up) rather than HELM's global 11 s.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import Any

from holistic.core.arguments import arg
from holistic.core.code_execution import EXECUTES_CODE_TAG, SANDBOX_KEY, SandboxLimitArgs
from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import CORRECT_TAG, TEST_SPLIT, TRAIN_SPLIT, Instance, Reference
from holistic.scenarios.loading.code_common import code_info
from holistic.scenarios.loading.common import FileScenario, check_choice, with_train_pool
from holistic.scenarios.loading.sources import DataFile, DataNeeds, Download, ResolvedData

_TARBALL = "https://people.eecs.berkeley.edu/~hendrycks/APPS.tar.gz"
DIFFICULTIES = ("introductory", "interview", "competition")
ALL = "all"
_STR_LIMIT = 150_000
"""HELM truncates questions, starter code and solutions to this many characters (as the APPS code)."""
_POOL_FROM_TEST = 10
STOP_SEQUENCES = ("'''", "---", '"""', "\n\n\n")


def apps_prompt(question: str, starter_code: str) -> str:
    """HELM's APPS prompt (the authors' training format, with "in Python" added by HELM)."""
    answer_type = "\nUse Call-Based format\n" if starter_code else "\nUse Standard Input format\n"
    return "\nQUESTION:\n" + question + "\n" + starter_code + "\n" + answer_type + "\nANSWER in Python code:\n"


def _read_json(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataSourceError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg} (column {exc.colno})") from None


def _line_of(text: str, key: str) -> int:
    """The line of ``"key"`` in a JSON text (1 when it does not appear)."""
    at = text.find(f'"{key}"')
    return text.count("\n", 0, at) + 1 if at >= 0 else 1


def read_tests(path: Path) -> dict[str, Any]:
    """A problem's ``input_output.json``: inputs and outputs of equal length, optional ``fn_name``."""
    data = _read_json(path)
    text = path.read_text(encoding="utf-8")
    if not isinstance(data, dict):
        raise DataSourceError(f"{path}:1: expected a JSON object with 'inputs' and 'outputs'")
    for key in ("inputs", "outputs"):
        if not isinstance(data.get(key), list):
            raise DataSourceError(f"{path}:{_line_of(text, key)}: {key!r} must be a list of test cases")
    if len(data["inputs"]) != len(data["outputs"]):
        raise DataSourceError(
            f"{path}:{_line_of(text, 'outputs')}: {len(data['inputs'])} inputs but {len(data['outputs'])} outputs"
        )
    if not data["inputs"]:
        raise DataSourceError(f"{path}:{_line_of(text, 'inputs')}: no test cases")
    fn_name = data.get("fn_name")
    if fn_name is not None and not (isinstance(fn_name, str) and fn_name.isidentifier()):
        raise DataSourceError(f"{path}:{_line_of(text, 'fn_name')}: fn_name {fn_name!r} is not a Python name")
    return {"fn_name": fn_name, "inputs": data["inputs"], "outputs": data["outputs"]}


def _solutions(path: Path) -> list[str]:
    data = _read_json(path)
    if not isinstance(data, list) or not all(isinstance(s, str) for s in data):
        raise DataSourceError(f"{path}:1: expected a JSON list of programs")
    return [_expand_tabs(s)[:_STR_LIMIT] for s in data]


def _expand_tabs(code: str) -> str:
    lines = []
    for line in code.split("\n"):
        body = line.lstrip("\t")
        lines.append("    " * (len(line) - len(body)) + body)
    return "\n".join(lines)


def read_problem(folder: Path, split: str, sandbox: dict[str, Any]) -> Instance | None:
    """One problem folder (``None`` when it lacks what its split needs, as HELM skips it)."""
    question_path = folder / "question.txt"
    tests_path, solutions_path = folder / "input_output.json", folder / "solutions.json"
    if not question_path.is_file():
        return None
    if split == TRAIN_SPLIT and not solutions_path.is_file():
        return None
    if split == TEST_SPLIT and not tests_path.is_file():
        return None
    starter_path = folder / "starter_code.py"
    starter = starter_path.read_text(encoding="utf-8")[:_STR_LIMIT] if starter_path.is_file() else ""
    question = question_path.read_text(encoding="utf-8")[:_STR_LIMIT]
    solutions = _solutions(solutions_path) if solutions_path.is_file() else []
    meta_path = folder / "metadata.json"
    meta = _read_json(meta_path) if meta_path.is_file() else {}
    difficulty = meta.get("difficulty") if isinstance(meta, dict) else None
    metadata: dict[str, Any] = {"problem": f"{split}/{folder.name}", "difficulty": difficulty or "unknown"}
    if split == TEST_SPLIT:
        metadata["apps"] = read_tests(tests_path)
        metadata[SANDBOX_KEY] = sandbox
    return Instance(
        id=f"apps-{split}-{folder.name}",
        input=apps_prompt(question, starter),
        references=tuple(Reference(s, (CORRECT_TAG,)) for s in (solutions or [""])),
        split=split,
        metadata=metadata,
    )


def read_split(folder: Path, split: str, sandbox: dict[str, Any]) -> list[Instance]:
    out = []
    for problem in sorted(p for p in folder.iterdir() if p.is_dir()):
        instance = read_problem(problem, split, sandbox)
        if instance is not None:
            out.append(instance)
    return out


class _Layout(IntEnum):
    """The layouts of :meth:`data_needs`, by their index in ``DataNeeds.layouts``."""

    TRAIN_AND_TEST = 0
    """``train`` and ``test``."""
    TEST_ONLY = 1
    """``test`` alone (in-context examples come from it)."""


@dataclass(frozen=True, kw_only=True)
class APPSScenario(FileScenario, SandboxLimitArgs):
    """Programming-contest problems (three difficulty levels), scored by their test cases in the sandbox."""

    notes_missing_files = True

    info = ScenarioInfo(
        name="apps",
        description="APPS: programming problems (introductory, interview, competition) scored by running "
        "their test cases in the OS sandbox.",
        **code_info(
            main_metric="test_avg",
            max_train_instances=2,
            stop_sequences=STOP_SEQUENCES,
            unperturbed="HELM evaluates APPS unperturbed",
        ),
        tags=("code", "reasoning", "targeted:reasoning", EXECUTES_CODE_TAG),
        breakdowns=("difficulty",),
    )
    num_instances = 5000

    difficulty: str = arg(ALL, enum=(ALL, *DIFFICULTIES))

    def __post_init__(self) -> None:
        check_choice(self.difficulty, [ALL, *DIFFICULTIES], "APPS difficulty")

    def data_needs(self) -> DataNeeds:
        test = DataFile("test", downloads=(Download(_TARBALL, member="APPS/test/"),), is_dir=True)
        train = DataFile("train", downloads=(Download(_TARBALL, member="APPS/train/"),), is_dir=True)
        return DataNeeds("apps", layouts=((test, train), (test,)), hint=f"{_TARBALL} (APPS/train/, APPS/test/)")

    def load(self, data: ResolvedData) -> list[Instance]:
        test = read_split(data["test"], TEST_SPLIT, self.sandbox)
        if self.difficulty != ALL:
            test = [i for i in test if i.metadata["difficulty"] == self.difficulty]
        if not test:
            raise DataSourceError(f"{data['test']}: no {self.difficulty} test problems with input_output.json")
        if data.layout == _Layout.TRAIN_AND_TEST:
            return read_split(data["train"], TRAIN_SPLIT, self.sandbox) + test
        return with_train_pool(test, _POOL_FROM_TEST, "apps-test-pool")
