"""APPS in the authors' layout (a small copy written here): HELM's prompt, difficulty
levels, test cases that do not parse reported at their line, and scoring in the sandbox."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioContext
from holistic.core.types import Instance
from holistic.metrics.code import CodeMetric
from holistic.scenarios.apps import APPSScenario, read_tests
from tests.metrics.metrics_testkit import ctx, gen_state
from tests.metrics.sandbox_testkit import sandbox

__all__ = ["sandbox"]

SUM_QUESTION = "Read two integers and print their sum.\n\n-----Input-----\nTwo integers a and b.\n"
SUM_SOLUTION = "a, b = map(int, input().split())\nprint(a + b)\n"
STARTER = "def double(x):\n\t"


def _problem(folder: Path, *, question: str, tests: dict[str, object] | None, difficulty: str, **files: str) -> None:
    folder.mkdir(parents=True)
    (folder / "question.txt").write_text(question, encoding="utf-8")
    (folder / "metadata.json").write_text(json.dumps({"difficulty": difficulty, "url": "https://x"}), encoding="utf-8")
    if tests is not None:
        (folder / "input_output.json").write_text(json.dumps(tests), encoding="utf-8")
    for name, text in files.items():
        (folder / name.replace("_py", ".py").replace("_json", ".json")).write_text(text, encoding="utf-8")


@pytest.fixture
def apps_root(tmp_path: Path) -> Path:
    """A data root holding ``apps/{train,test}/<problem>/`` as the authors' archive lays them out."""
    base = tmp_path / "mirror" / "apps"
    solutions = json.dumps([SUM_SOLUTION.replace("    ", "\t")])
    _problem(
        base / "train" / "0000", question=SUM_QUESTION, tests=None, difficulty="interview", solutions_json=solutions
    )
    _problem(
        base / "train" / "0001",
        question="Print hi.\n",
        tests=None,
        difficulty="introductory",
        solutions_json="[\"print('hi')\"]",
    )
    _problem(
        base / "test" / "0000",
        question=SUM_QUESTION,
        tests={"inputs": ["1 2\n", "10 -3\n", "0 0\n"], "outputs": ["3\n", "7\n", "0\n"]},
        difficulty="interview",
        solutions_json=json.dumps([SUM_SOLUTION]),
    )
    _problem(
        base / "test" / "0001",
        question="Return twice x.\n",
        tests={"fn_name": "double", "inputs": [[1], [4], [-2]], "outputs": [[2], [8], [-4]]},
        difficulty="introductory",
        starter_code_py=STARTER,
    )
    _problem(base / "test" / "0002", question="No tests here.\n", tests=None, difficulty="competition")
    return tmp_path / "mirror"


def _load(root: Path, **args: object) -> list[Instance]:
    return APPSScenario(**args).get_instances(ScenarioContext(data_root=root, offline=True))  # type: ignore[arg-type]


def test_the_authors_layout_reads_as_helm_prompts(apps_root: Path) -> None:
    instances = _load(apps_root)
    by_id = {i.id: i for i in instances}
    assert sorted(by_id) == ["apps-test-0000", "apps-test-0001", "apps-train-0000", "apps-train-0001"]
    stdin = by_id["apps-test-0000"]
    assert stdin.input == "\nQUESTION:\n" + SUM_QUESTION + "\n\n\nUse Standard Input format\n\nANSWER in Python code:\n"
    assert stdin.metadata["difficulty"] == "interview" and stdin.metadata["apps"]["fn_name"] is None
    call = by_id["apps-test-0001"]
    assert call.input.endswith(STARTER + "\n\nUse Call-Based format\n\nANSWER in Python code:\n")
    assert call.metadata["apps"]["inputs"] == [[1], [4], [-2]]
    train = by_id["apps-train-0000"]
    assert train.split == "train" and train.references[0].output == SUM_SOLUTION  # tabs expanded
    assert APPSScenario.info.default_adapter["max_train_instances"] == 2
    assert APPSScenario.info.default_adapter["stop_sequences"] == ("'''", "---", '"""', "\n\n\n")
    assert APPSScenario.info.default_adapter["prompt_format"] == "plain"


def test_difficulty_selects_the_test_problems(apps_root: Path) -> None:
    tests = [i for i in _load(apps_root, difficulty="introductory") if i.split == "test"]
    assert [i.id for i in tests] == ["apps-test-0001"]
    with pytest.raises(ValueError, match="interview"):
        APPSScenario(difficulty="interviews")


def test_test_cases_that_do_not_parse_are_reported_at_their_line(tmp_path: Path) -> None:
    path = tmp_path / "input_output.json"
    path.write_text('{\n  "inputs": ["1 2\\n"],\n  "outputs": ["3\\n",]\n}\n', encoding="utf-8")
    with pytest.raises(DataSourceError, match=rf"{path}:3: invalid JSON"):
        read_tests(path)
    path.write_text('{\n  "inputs": ["1", "2"],\n  "outputs": ["3"]\n}\n', encoding="utf-8")
    with pytest.raises(DataSourceError, match=rf"{path}:3: 2 inputs but 1 outputs"):
        read_tests(path)
    path.write_text('{\n  "inputs": "1 2",\n  "outputs": ["3"]\n}\n', encoding="utf-8")
    with pytest.raises(DataSourceError, match=rf"{path}:2: 'inputs' must be a list"):
        read_tests(path)


def test_a_broken_test_file_stops_loading_at_its_line(apps_root: Path) -> None:
    bad = apps_root / "apps" / "test" / "0001" / "input_output.json"
    bad.write_text('{"fn_name": "double",\n "inputs": [[1]],\n "outputs": [[2]\n', encoding="utf-8")
    with pytest.raises(DataSourceError, match=rf"{bad}:4: invalid JSON"):  # the object is never closed
        _load(apps_root)


def _scores(instance: Instance, *completions: str) -> dict[str, float]:
    from holistic.scenarios.apps import APPSScenario as Scenario

    result = CodeMetric().evaluate([gen_state(instance, *completions)], ctx(Scenario.info))
    return {s.name.name: s.value for s in result.per_instance}


def test_standard_input_problems_are_scored_in_the_sandbox(apps_root: Path, sandbox: None) -> None:
    problem = next(i for i in _load(apps_root) if i.id == "apps-test-0000")
    assert _scores(problem, SUM_SOLUTION) == {"test_avg": 1.0, "strict_acc": 1.0}
    # a * b is a + b on the last test case alone (0 0).
    assert _scores(problem, "a, b = map(int, input().split())\nprint(a * b)\n") == {
        "test_avg": pytest.approx(1 / 3),
        "strict_acc": 0.0,
    }
    assert _scores(problem, "print(undefined)\n") == {"test_avg": 0.0, "strict_acc": 0.0}
    # The best of several completions counts (HELM's APPS metric).
    assert _scores(problem, "print(0)\n", SUM_SOLUTION) == {"test_avg": 1.0, "strict_acc": 1.0}


def test_call_based_problems_are_scored_in_the_sandbox(apps_root: Path, sandbox: None) -> None:
    problem = next(i for i in _load(apps_root) if i.id == "apps-test-0001")
    assert _scores(problem, "def double(x):\n    return 2 * x\n") == {"test_avg": 1.0, "strict_acc": 1.0}
    assert _scores(problem, "class Solution:\n    def double(self, x):\n        return x + x\n")["strict_acc"] == 1.0
    # Right on the first test case only.
    assert _scores(problem, "def double(x):\n    return 2 if x == 1 else 0\n")["test_avg"] == pytest.approx(1 / 3)
    assert _scores(problem, "def triple(x):\n    return 3 * x\n") == {"test_avg": 0.0, "strict_acc": 0.0}


def test_a_timing_out_apps_program_records_the_limit(apps_root: Path, sandbox: None) -> None:
    problem = next(i for i in _load(apps_root, timeout_s=0.5) if i.id == "apps-test-0000")
    result = CodeMetric().evaluate([gen_state(problem, "while True:\n    pass\n")], ctx(APPSScenario.info))
    details = next(s.details for s in result.per_instance if s.details)
    sample = details["samples"][0]
    assert sample["limit"] == "time" and sample["tests"] == [False, False, False]
