"""Functional correctness of generated code, measured by running it in the OS sandbox.

Every completion runs in its own sandbox (:mod:`holistic.metrics.sandbox`, the only
place model output is executed), samples ``concurrency`` at a time.

HumanEval (as HELM's ``code_eval_acc`` and ``pass``, crfm-helm 0.5.16): the program is
``prompt + "    " + completion.strip() + test + check(entry_point)``;

- ``code_eval_acc``: the most probable completion passes (HELM sorts completions by
  log-probability; without them, the first);
- ``pass``: pass@1 by the unbiased estimator of Chen et al. (2021) over the ``n``
  completions, ``c`` of which pass (:func:`pass_at_k`; with one completion, whether it passes);
- with ``num_outputs`` = n > 1 also ``code_eval_acc@k`` (any completion passes) and
  ``pass@k``, the estimator at k = n (HELM's ``pass@<n>``). Each problem's ``details``
  keep ``n`` and ``c``, so pass@k for any k ≤ n follows from them (:func:`pass_at_k`).

APPS (as HELM's ``APPSMetric``): each completion against every test case of the
problem; ``test_avg`` is the share of test cases passed, ``strict_acc`` whether all
passed, each the best over the completions.

The per-problem ``details`` (on ``code_eval_acc`` / ``test_avg``) keep, per completion,
the code that ran, whether it passed, the limit that stopped it and why: the instance
browser shows them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from holistic.core.code_execution import EXECUTES_CODE_TAG, SANDBOX_KEY
from holistic.core.interfaces import MetricContext, MetricResult, ScenarioInfo
from holistic.core.types import AdapterSpec, ModelDeployment, PerInstanceStat, RequestState
from holistic.metrics.accuracy import AT_K, most_probable_first
from holistic.metrics.base import BaseMetric, info
from holistic.metrics.states import Unit, outputs, scorable_units

if TYPE_CHECKING:
    # The sandbox (its subprocess and threads machinery) only when code is run: every run's
    # metric selection imports this module to ask whether it applies.
    from holistic.metrics.sandbox import Execution, Limits, Sample

CODE_EVAL_ACC = "code_eval_acc"
PASS = "pass"
TEST_AVG = "test_avg"
STRICT_ACC = "strict_acc"
CODE_VALUE_NAMES = (CODE_EVAL_ACC, CODE_EVAL_ACC + AT_K, PASS, PASS + AT_K, TEST_AVG, STRICT_ACC)


def check_program(prompt: str, completion: str, test: str, entry_point: str) -> str:
    """The program HELM runs for one HumanEval completion: the prompt, the completion
    stripped and indented by four spaces, the tests and the call of ``check``."""
    return prompt + "    " + completion.strip() + "\n" + test + "\n" + f"check({entry_point})"


def pass_at_k(n: int, c: int, k: int) -> float:
    """Chen et al. (2021)'s unbiased estimate of pass@k from ``n`` samples, ``c`` correct:
    ``1 - C(n - c, k) / C(n, k)``, computed as a stable product."""
    if not 0 < k <= n:
        raise ValueError(f"pass@k needs 0 < k <= n, got k={k}, n={n}")
    if not 0 <= c <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n, got c={c}, n={n}")
    if n - c < k:
        return 1.0
    value = 1.0
    for i in range(n - c + 1, n + 1):
        value *= 1.0 - k / i
    return 1.0 - value


def requires_sandbox(info: ScenarioInfo, metrics: Sequence[str]) -> bool:
    """A run of this scenario asking for these metrics would execute the model's code."""
    if EXECUTES_CODE_TAG not in info.tags:
        return False
    return any(m in ("accuracy", CodeMetric.name) or m in CODE_VALUE_NAMES for m in metrics)


def _sample(unit: Unit, completion: str) -> Sample:
    from holistic.metrics.sandbox import Sample

    meta = unit.instance.metadata
    if "apps" in meta:
        apps = meta["apps"]
        return Sample(
            program=completion.strip(),
            kind="apps",
            fn_name=apps.get("fn_name"),
            inputs=tuple(apps["inputs"]),
            outputs=tuple(apps["outputs"]),
        )
    return Sample(program=check_program(unit.instance.input, completion, meta["test"], meta["entry_point"]))


def _limits(unit: Unit) -> Limits:
    from holistic.metrics.sandbox import limits_from

    values = unit.instance.metadata.get(SANDBOX_KEY) or {}
    return limits_from(values if isinstance(values, Mapping) else {})


def _record(sample: Sample, execution: Execution) -> dict[str, Any]:
    return {"code": sample.program, **execution.record()}


class CodeMetric(BaseMetric):
    """HumanEval's ``code_eval_acc`` / ``pass`` (pass@k) and APPS's ``test_avg`` / ``strict_acc``."""

    name = "code"
    category = "accuracy"
    INFOS = (
        info(
            CODE_EVAL_ACC, "accuracy", "The most probable completion passes the problem's tests.", needs_generation=True
        ),
        info(CODE_EVAL_ACC + AT_K, "accuracy", "One of the k completions passes the tests.", needs_generation=True),
        info(
            PASS,
            "accuracy",
            "pass@1: unbiased estimate (Chen et al., 2021) over the completions.",
            needs_generation=True,
        ),
        info(
            PASS + AT_K,
            "accuracy",
            "pass@k at k = num_outputs, Chen et al.'s unbiased estimator.",
            needs_generation=True,
        ),
        info(
            TEST_AVG, "accuracy", "Share of the problem's test cases passed (best completion).", needs_generation=True
        ),
        info(STRICT_ACC, "accuracy", "Every test case of the problem passed (best completion).", needs_generation=True),
    )

    def __init__(self, concurrency: int | None = None) -> None:
        self.concurrency = concurrency

    @classmethod
    def selected_for(cls, info: ScenarioInfo, adapter: AdapterSpec) -> bool:
        return EXECUTES_CODE_TAG in info.tags

    @classmethod
    def not_applicable(cls, info: ScenarioInfo, adapter: AdapterSpec, deployment: ModelDeployment) -> str | None:
        if EXECUTES_CODE_TAG not in info.tags:
            return f"code execution applies to code scenarios (tag {EXECUTES_CODE_TAG})"
        if adapter.method != "generation":
            return f"code execution needs the generation method, not {adapter.method}"
        return None

    def evaluate(self, states: Sequence[RequestState], ctx: MetricContext) -> MetricResult:
        from holistic.metrics.sandbox import run_samples

        jobs: list[tuple[Unit, list[Sample], Limits]] = []
        for unit, state, _references in scorable_units(states):
            completions = most_probable_first(state, outputs(state))
            jobs.append((unit, [_sample(unit, c) for c in completions], _limits(unit)))
        # One pool per distinct set of limits (a run has one).
        executions: dict[int, list[Execution]] = {}
        by_limits: dict[Limits, list[tuple[int, int]]] = {}
        flat: dict[Limits, list[Sample]] = {}
        for j, (_unit, samples, limits) in enumerate(jobs):
            for s, sample in enumerate(samples):
                by_limits.setdefault(limits, []).append((j, s))
                flat.setdefault(limits, []).append(sample)
        for limits, positions in by_limits.items():
            for (j, _s), execution in zip(positions, run_samples(flat[limits], limits, self.concurrency), strict=True):
                executions.setdefault(j, []).append(execution)
        result = MetricResult()
        for j, (unit, samples, _limits_of_unit) in enumerate(jobs):
            runs = executions.get(j, [])
            details = {
                "n": len(runs),
                "c": sum(r.passed for r in runs),
                "samples": [_record(s, r) for s, r in zip(samples, runs, strict=True)],
            }
            if samples and samples[0].kind == "apps":
                result.per_instance.extend(self._apps_stats(unit, runs, details))
            else:
                result.per_instance.extend(self._humaneval_stats(unit, runs, details))
        return result

    @staticmethod
    def _humaneval_stats(unit: Unit, runs: list[Execution], details: dict[str, Any]) -> list[PerInstanceStat]:
        n, c = details["n"], details["c"]
        out = [
            replace(unit.stat(CODE_EVAL_ACC, float(runs[0].passed)), details=details),
            unit.stat(PASS, pass_at_k(n, c, 1)),
        ]
        if n > 1:
            out += [unit.stat(CODE_EVAL_ACC + AT_K, float(c > 0)), unit.stat(PASS + AT_K, pass_at_k(n, c, n))]
        return out

    @staticmethod
    def _apps_stats(unit: Unit, runs: list[Execution], details: dict[str, Any]) -> list[PerInstanceStat]:
        averages = [sum(r.tests) / len(r.tests) if r.tests else 0.0 for r in runs]
        strict = [float(bool(r.tests) and all(r.tests) and r.limit is None) for r in runs]
        return [
            replace(unit.stat(TEST_AVG, max(averages)), details=details),
            unit.stat(STRICT_ACC, max(strict)),
        ]
