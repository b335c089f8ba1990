"""The ``code`` metric: HumanEval's canonical solutions pass in the sandbox, broken ones
fail with their reason recorded, pass@k follows Chen et al.'s estimator."""

from __future__ import annotations

import itertools
import json
import math
import time
from pathlib import Path

import pytest

from holistic.core.code_execution import SANDBOX_KEY
from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import Instance, Reference
from holistic.metrics.code import CodeMetric, check_program, pass_at_k
from holistic.metrics.sandbox import Limits, Sample, run_samples
from holistic.scenarios.humaneval import HumanEvalScenario, read_humaneval
from tests.metrics.metrics_testkit import ctx, gen_state
from tests.metrics.sandbox_testkit import sandbox
from tests.support.data import find_data_root, skip_without_data

__all__ = ["sandbox"]

PROMPT = 'def add(a: int, b: int) -> int:\n    """The sum of a and b."""\n'
TEST = "def check(candidate):\n    assert candidate(2, 3) == 5\n    assert candidate(-1, 1) == 0\n"


def _problem(limits: dict[str, object] | None = None) -> Instance:
    return Instance(
        id="HumanEval_add",
        input=PROMPT,
        references=(Reference("    return a + b\n", ("correct",)),),
        metadata={"test": TEST, "entry_point": "add", SANDBOX_KEY: limits or {"timeout_s": 1.0, "memory_mb": 256}},
    )


def _humaneval_path() -> Path:
    root = find_data_root()
    path = root / "humaneval" / "HumanEval.jsonl.gz" if root is not None else None
    if path is None or not path.exists():
        skip_without_data("humaneval/HumanEval.jsonl.gz")
    return path


@pytest.mark.parametrize("n", range(1, 7))
def test_pass_at_k_is_the_share_of_k_subsets_with_a_pass(n: int) -> None:
    # Chen et al.'s estimator equals the exact share of size-k subsets of the n samples
    # that contain at least one correct sample.
    for c in range(n + 1):
        samples = [True] * c + [False] * (n - c)
        for k in range(1, n + 1):
            subsets = list(itertools.combinations(samples, k))
            exact = sum(any(s) for s in subsets) / len(subsets)
            assert pass_at_k(n, c, k) == pytest.approx(exact)


def test_pass_at_k_closed_forms_and_bad_arguments() -> None:
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)
    assert pass_at_k(200, 0, 100) == 0.0
    assert pass_at_k(200, 150, 100) == 1.0
    assert pass_at_k(20, 5, 10) == pytest.approx(1 - math.comb(15, 10) / math.comb(20, 10))
    for bad in ((5, 1, 6), (5, 1, 0), (5, 6, 1)):
        with pytest.raises(ValueError):
            pass_at_k(*bad)


def test_the_check_program_is_helms() -> None:
    # HELM strips the completion and indents its first line by four spaces.
    assert check_program(PROMPT, "  return a + b\n\n", TEST, "add") == (
        PROMPT + "    return a + b\n" + TEST + "\ncheck(add)"
    )


def test_broken_solutions_fail_with_their_reason(sandbox: None) -> None:
    inst = _problem()
    completions = {
        "right": "    return a + b\n",
        "wrong": "    return a - b\n",
        "crash": "    return a + undefined_name\n",
        "slow": "    while True:\n        pass\n",
        "syntax": "    return a +\n",
    }
    # One state per completion: each its own unit (same instance, so one trial each).
    states = [gen_state(inst, text, trial=i) for i, text in enumerate(completions.values())]
    result = CodeMetric().evaluate(states, ctx(HumanEvalScenario.info))
    by_trial = {(s.trial, s.name.name): s for s in result.per_instance}
    outcome = {}
    for i, name in enumerate(completions):
        stat = by_trial[(i, "code_eval_acc")]
        assert stat.details is not None
        sample = stat.details["samples"][0]
        outcome[name] = (stat.value, by_trial[(i, "pass")].value, sample["limit"], sample["reason"])
        assert sample["code"].startswith(PROMPT) and sample["code"].endswith("check(add)")
    assert outcome["right"] == (1.0, 1.0, None, "passed")
    assert outcome["wrong"][:3] == (0.0, 0.0, None) and outcome["wrong"][3] == "AssertionError"
    assert outcome["crash"][:3] == (0.0, 0.0, None) and "NameError" in outcome["crash"][3]
    assert outcome["slow"][:3] == (0.0, 0.0, "time") and "timed out" in outcome["slow"][3]
    assert outcome["syntax"][:3] == (0.0, 0.0, None) and "SyntaxError" in outcome["syntax"][3]
    json.dumps([s.details for s in result.per_instance if s.details])  # stored as JSON


def test_several_samples_give_pass_at_k(sandbox: None) -> None:
    inst = _problem()
    texts = ("    return a + b\n", "    return a - b\n", "    return b + a\n", "    return 0\n")
    result = CodeMetric().evaluate([gen_state(inst, *texts)], ctx(HumanEvalScenario.info))
    values = {s.name.name: s.value for s in result.per_instance}
    assert values == {
        "code_eval_acc": 1.0,  # the first completion (no log-probabilities: as given) passes
        "pass": pytest.approx(0.5),  # pass@1 = c / n = 2 / 4
        "code_eval_acc@k": 1.0,
        "pass@k": 1.0,  # k = n = 4 with two passing
    }
    details = next(s.details for s in result.per_instance if s.details)
    assert (details["n"], details["c"]) == (4, 2)
    assert [s["passed"] for s in details["samples"]] == [True, False, True, False]


@pytest.mark.needs_data
def test_all_164_canonical_solutions_pass_in_the_sandbox(sandbox: None) -> None:
    problems = read_humaneval(_humaneval_path(), {})
    assert len(problems) == 164
    samples = [
        Sample(program=check_program(p.input, p.references[0].output, p.metadata["test"], p.metadata["entry_point"]))
        for p in problems
    ]
    start = time.monotonic()
    executions = run_samples(samples, Limits())
    elapsed = time.monotonic() - start
    failed = {p.metadata["task_id"]: e.reason for p, e in zip(problems, executions, strict=True) if not e.passed}
    assert failed == {}
    print(f"164 canonical solutions in {elapsed:.1f} s")


@pytest.mark.needs_data
def test_a_wrong_solution_to_every_problem_fails(sandbox: None) -> None:
    # The first 40 checks with the body replaced by ``return None``: the tests do test.
    problems = read_humaneval(_humaneval_path(), {})[:40]
    samples = [
        Sample(program=check_program(p.input, "return None", p.metadata["test"], p.metadata["entry_point"]))
        for p in problems
    ]
    passed = [p.metadata["task_id"] for p, e in zip(problems, run_samples(samples, Limits()), strict=True) if e.passed]
    assert passed == []


def test_code_metric_refuses_without_the_sandbox(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from holistic.metrics import sandbox as sandbox_module

    monkeypatch.setenv("PATH", str(tmp_path))
    sandbox_module.sandbox_problem.cache_clear()
    try:
        with pytest.raises(sandbox_module.SandboxUnavailable, match=r"bubblewrap \('bwrap'\) is not on PATH"):
            CodeMetric().evaluate([gen_state(_problem(), "    return a + b\n")], ctx(HumanEvalScenario.info))
    finally:
        sandbox_module.sandbox_problem.cache_clear()


def test_not_applicable_outside_code_scenarios() -> None:
    from holistic.core.types import AdapterSpec
    from tests.metrics.metrics_testkit import DEPLOYMENT

    assert CodeMetric.not_applicable(ScenarioInfo(name="x"), AdapterSpec(), DEPLOYMENT) is not None
    assert CodeMetric.not_applicable(HumanEvalScenario.info, AdapterSpec(), DEPLOYMENT) is None


@pytest.mark.needs_data
@pytest.mark.real_model
@pytest.mark.sandbox
def test_the_embedded_model_is_scored_in_the_sandbox(tmp_path: Path, sandbox: None) -> None:
    # targeted.yaml's HumanEval run on the real embedded model, cut to one problem.
    import pyarrow.parquet as pq

    from holistic.cli.run import main as helm_run

    root = _humaneval_path().parent.parent
    spec = Path(__file__).resolve().parents[2] / "runspecs" / "targeted.yaml"
    out = tmp_path / "out"
    args = [str(spec), "--scenarios", "humaneval", "--limit", "1", "--output-dir", str(out), "--data-root", str(root)]
    assert helm_run([*args, "--quiet"]) == 0
    (run_dir,) = (out / "targeted" / "runs").iterdir()
    stats = {r["metric"]: r for r in pq.read_table(run_dir / "stats.parquet").to_pylist() if r["split"] == "test"}
    assert stats["pass"]["count"] == 1 and stats["code_eval_acc"]["count"] == 1
    rows = pq.read_table(run_dir / "per_instance_stats.parquet").to_pylist()
    (details,) = [json.loads(r["details"]) for r in rows if r["metric"] == "code_eval_acc"]
    (sample,) = details["samples"]
    assert sample["code"].startswith("from typing import List") and sample["code"].endswith("check(has_close_elements)")
    assert sample["reason"]  # passed, or why not
    # HELM's completion prompt: the problem's text as it is, not a chat turn.
    (request,) = pq.read_table(run_dir / "requests.parquet").to_pylist()
    (problem,) = [r for r in pq.read_table(run_dir / "instances.parquet").to_pylist() if r["role"] in (None, "eval")]
    assert request["prompt"] == problem["input"] and not request["messages"]
