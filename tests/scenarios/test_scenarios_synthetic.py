"""The procedural scenarios: deterministic, disjoint splits, correct answers."""

from __future__ import annotations

import re

import pytest

from holistic.core.interfaces import ScenarioContext
from holistic.core.types import ScenarioSpec
from holistic.scenarios.registry import create_scenario, scenario_info
from holistic.scenarios.synthetic import ArithmeticScenario, SyntheticReasoningScenario, _rule_matches

CTX = ScenarioContext(offline=True)


@pytest.mark.parametrize("mode", ["pattern_match", "variable_substitution", "induction"])
def test_synthetic_reasoning_is_deterministic_with_disjoint_splits(mode: str) -> None:
    spec = ScenarioSpec.make("synthetic_reasoning", {"mode": mode, "num_train": 20, "num_test": 50})
    first = create_scenario(spec).get_instances(CTX)
    again = create_scenario(spec).get_instances(ScenarioContext(seed=123))
    assert first == again
    train = [i for i in first if i.split == "train"]
    test = [i for i in first if i.split == "test"]
    assert (len(train), len(test)) == (20, 50)
    assert len({i.id for i in first}) == 70
    assert not {i.input for i in train} & {i.input for i in test}
    # The test set does not move when more training examples are asked for.
    more_train = SyntheticReasoningScenario(mode=mode, num_train=40, num_test=50).get_instances(CTX)
    assert [i.input for i in more_train if i.split == "test"] == [i.input for i in test]
    other_seed = SyntheticReasoningScenario(mode=mode, num_train=20, num_test=50, seed=1).get_instances(CTX)
    assert [i.input for i in other_seed] != [i.input for i in first]


def _parse_substitution(text: str) -> dict[str, list[str]]:
    line = next(ln for ln in text.splitlines() if ln.startswith("Substitution: "))
    out = {}
    for part in line.removeprefix("Substitution: ").split(", "):
        var, vals = part.split(" -> ")
        out[var] = vals.split()
    return out


def test_synthetic_reasoning_answers_are_correct() -> None:
    for inst in SyntheticReasoningScenario(mode="variable_substitution", num_test=100).get_instances(CTX):
        rule = re.search(r"^Rule: (.*)$", inst.input, re.M).group(1).split()  # type: ignore[union-attr]
        subst = _parse_substitution(inst.input)
        expected = [s for tok in rule for s in subst.get(tok, [tok])]
        assert inst.references[0].output == " ".join(expected)
    for inst in SyntheticReasoningScenario(mode="induction", num_test=100).get_instances(CTX):
        string = re.search(r"^String: (.*)$", inst.input, re.M).group(1)  # type: ignore[union-attr]
        subst = _parse_substitution(inst.input)
        rule = inst.references[0].output.split()
        assert " ".join(s for tok in rule for s in subst.get(tok, [tok])) == string
    for inst in SyntheticReasoningScenario(mode="pattern_match", num_test=100).get_instances(CTX):
        lines = inst.input.splitlines()
        rules = lines[1 : lines.index(next(ln for ln in lines if ln.startswith("String: ")))]
        string = next(ln for ln in lines if ln.startswith("String: ")).removeprefix("String: ").split()
        matching = [r for r in rules if _rule_matches(tuple(r.split()), tuple(string))]
        assert matching == [inst.references[0].output]
        assert len(rules) == 3


@pytest.mark.parametrize(
    ("operation", "fn"), [("add", int.__add__), ("subtract", int.__sub__), ("multiply", int.__mul__)]
)
def test_arithmetic_answers_digits_and_splits(operation: str, fn: object) -> None:
    instances = ArithmeticScenario(digits=3, operation=operation, num_train=10, num_test=40).get_instances(CTX)
    assert [i.split for i in instances].count("test") == 40
    for inst in instances:
        a, b = inst.metadata["a"], inst.metadata["b"]
        assert 100 <= a <= 999 and 100 <= b <= 999
        assert inst.references[0].output == str(fn(a, b))  # type: ignore[operator]
        assert str(a) in inst.input and str(b) in inst.input
    assert len({(i.metadata["a"], i.metadata["b"]) for i in instances}) == 50


def test_arithmetic_one_digit_caps_test_at_the_problems_that_exist() -> None:
    instances = ArithmeticScenario(digits=1, num_train=5, num_test=1000).get_instances(CTX)
    assert len(instances) == 100
    facts = ArithmeticScenario(digits=1, num_train=5, num_test=1000).plan_facts(None, None)
    assert facts.num_instances == 95 and facts.builds_prompts
    with pytest.raises(ValueError, match="only 100 distinct"):
        ArithmeticScenario(digits=1, num_train=100)


def test_bad_arguments_are_named() -> None:
    with pytest.raises(ValueError, match="mode must be one of"):
        SyntheticReasoningScenario(mode="deduction")
    with pytest.raises(ValueError, match="digits must be an integer from 1 to 5"):
        ArithmeticScenario(digits=6)
    with pytest.raises(ValueError, match="operation must be one of"):
        ArithmeticScenario(operation="divide")


def test_infos_describe_generation_with_exact_match() -> None:
    for name in ("synthetic_reasoning", "arithmetic"):
        info = scenario_info(name)
        assert info.main_metric == "exact_match"
        assert info.default_adapter["stop_sequences"] == ("\n",)
        assert set(info.not_applicable_reasons) >= {"robustness", "fairness", "bias", "toxicity"}
        assert not set(info.metric_categories) & set(info.not_applicable_reasons)
