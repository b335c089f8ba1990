"""HELM's ``chain_of_thought_correctness``: the answer letter read from a reasoned response.

HELM 0.5.16 (``helm/benchmark/metrics/gpqa_chain_of_thought_metric.py``, used by its
GPQA and MMLU-Pro chain-of-thought run specs) takes the letter from the first of four
patterns that matches the response, in this order:

1. ``answer is (X)`` or ``answer is X``;
2. HELM's second pattern, ``\\.*\\[aA\\]nswer:\\s*\\(?([A-J])\\)?``, which (its brackets
   being escaped) only matches the literal text ``[aA]nswer:`` — kept as HELM has it;
3. ``correct answer is`` followed by non-letters, then the letter;
4. ``correct answer is`` followed by anything but capitals, then the letter;

and scores 1 when it is the letter of the instance's first correct choice (``A`` for
the first choice), else 0 (no match is wrong). The patterns are HELM's, verbatim.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from holistic.core.interfaces import MetricContext, MetricResult, ScenarioInfo
from holistic.core.types import AdapterSpec, ModelDeployment, RequestState
from holistic.metrics.base import BaseMetric, info
from holistic.metrics.states import first_main, group_units

COT_CORRECTNESS = "chain_of_thought_correctness"
PATTERNS = (
    re.compile(r"answer is \(?([A-J])\)?"),
    re.compile(r"\.*\[aA\]nswer:\s*\(?([A-J])\)?"),
    re.compile(r"correct answer is [^A-Za-z]*([A-J])"),
    re.compile(r"correct answer is [^A-Z]*([A-J])"),
)


def extract_answer(text: str) -> str | None:
    """The answer letter HELM reads from ``text`` (``None`` when no pattern matches)."""
    for pattern in PATTERNS:
        match = pattern.search(text)
        if match:
            return match.group(1)
    return None


class ChainOfThoughtCorrectness(BaseMetric):
    """Is the letter stated at the end of the reasoning the correct choice's? (HELM's parsing)."""

    name = "chain_of_thought"
    category = "accuracy"
    INFOS = (
        info(
            COT_CORRECTNESS,
            "accuracy",
            "The answer letter parsed from the reasoned response (HELM's patterns) is the correct choice's.",
            needs_generation=True,
        ),
    )

    @classmethod
    def not_applicable(cls, info: ScenarioInfo, adapter: AdapterSpec, deployment: ModelDeployment) -> str | None:
        if "chain_of_thought_mc" not in info.tags:
            return "chain-of-thought answer parsing applies to reasoned multiple choice (tag chain_of_thought_mc)"
        if adapter.method != "multiple_choice_joint":
            return f"chain-of-thought answer parsing needs multiple_choice_joint, not {adapter.method}"
        return None

    def evaluate(self, states: Sequence[RequestState], ctx: MetricContext) -> MetricResult:
        result = MetricResult()
        for unit in group_units(states):
            state = first_main(unit)
            correct = next((i for i, r in enumerate(unit.instance.references) if r.is_correct), None)
            if state is None or correct is None:
                continue
            text = state.result.completions[0].text if state.result and state.result.completions else ""
            parsed = extract_answer(text)
            stat = unit.stat(COT_CORRECTNESS, float(parsed == chr(ord("A") + correct)))
            result.per_instance.append(stat)
        return result
