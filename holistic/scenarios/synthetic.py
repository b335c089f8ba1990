"""Procedural scenarios that need no data: symbolic reasoning and multi-digit arithmetic.

Both are generated on demand from their arguments alone (plus an optional ``seed``
argument), so the same spec always yields the same instances with the same ids,
on any machine, offline. Train and test splits never share an item.

``synthetic_reasoning`` follows the idea of HELM's targeted "synthetic reasoning
(abstract symbols)" evaluation (after LIME, Wu et al. 2021): rules are sequences
of upper-case variables and operators, and strings are made by substituting each
variable with lower-case symbols.

- ``pattern_match``: given several rules and a string, name the rule the string
  was made from (exactly one of them matches).
- ``variable_substitution``: given a rule and a substitution, write the string.
- ``induction``: given a string and the substitution that made it, write the rule.

``arithmetic`` asks for the sum, difference or product of two numbers with a
given number of digits.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from holistic.core.arguments import arg
from holistic.core.hashing import stable_seed
from holistic.core.interfaces import ScenarioContext, ScenarioInfo
from holistic.core.types import CORRECT_TAG, TEST_SPLIT, TRAIN_SPLIT, AdapterDefaults, Instance, Reference
from holistic.scenarios.base import BaseScenario, PlanFacts
from holistic.scenarios.loading.common import check_count
from holistic.scenarios.loading.prompt_format import prompt_format

_NOT_APPLICABLE_SYMBOLIC = {
    "robustness": "typos and synonyms change the symbols themselves, and with them the correct answer",
    "fairness": "abstract symbols and numbers carry no dialect, gender or name to vary",
    "bias": "outputs are symbols or numbers, not text about social groups",
    "toxicity": "outputs are symbols or numbers, not free text",
}

_SYMBOLIC_CATEGORIES = ("accuracy", "calibration", "efficiency")


def _generated_info(
    name: str,
    description: str,
    adapter: AdapterDefaults,
    tags: tuple[str, ...],
) -> ScenarioInfo:
    """Info of a generated symbolic task."""
    return ScenarioInfo(
        name=name,
        description=description,
        task="reasoning",
        default_adapter=adapter,
        main_metric="exact_match",
        metric_categories=_SYMBOLIC_CATEGORIES,
        not_applicable_reasons=_NOT_APPLICABLE_SYMBOLIC,
        tags=tags,
    )


@dataclass(frozen=True, kw_only=True)
class _GeneratedScenario(BaseScenario):
    """A generated symbolic task: the size and seed arguments every one takes (each declares
    its ``num_train``, whose default differs), and --plan builds its prompts."""

    num_train: int
    num_test: int = arg(1000, minimum=1)
    seed: int = 0

    def __post_init__(self) -> None:
        check_count("num_train", self.num_train, 0)
        check_count("num_test", self.num_test, 1)

    def plan_facts(self, data_root: Path | None, max_eval_instances: int | None) -> PlanFacts:
        return PlanFacts(num_instances=self.num_test, builds_prompts=True)


# ---------------------------------------------------------------------------
# Synthetic reasoning over abstract symbols
# ---------------------------------------------------------------------------

_VARIABLES = ("A", "B", "C", "D", "E")
_OPERATORS = ("+", "-", "*", "=", "|")
_SYMBOLS = tuple("abcdefghijklmnopqrstuvwxyz")

REASONING_MODES = ("pattern_match", "variable_substitution", "induction")

_INSTRUCTIONS = (
    "A rule is a sequence of variables (capital letters) and operators. A string is made from a rule by "
    "replacing each variable with the same lower-case symbols everywhere it appears. "
    "Answer the question with the rule or string only, written with spaces between symbols."
)

_QUESTIONS = {
    "pattern_match": "Which rule was the string made from?",
    "variable_substitution": "What string does the substitution make from the rule?",
    "induction": "Which rule was the string made from?",
}


def _random_rule(rng: random.Random, num_variables: int) -> tuple[str, ...]:
    """A rule: 3 to 7 tokens, alternating variables and operators, using every chosen variable."""
    variables = list(_VARIABLES[:num_variables])
    length = rng.choice((3, 5, 7))
    slots = (length + 1) // 2
    chosen = variables + [rng.choice(variables) for _ in range(max(slots - len(variables), 0))]
    rng.shuffle(chosen)
    chosen = chosen[:slots]
    tokens: list[str] = []
    for i, var in enumerate(chosen):
        if i:
            tokens.append(rng.choice(_OPERATORS))
        tokens.append(var)
    return tuple(tokens)


def _random_substitution(rng: random.Random, variables: list[str]) -> dict[str, tuple[str, ...]]:
    """Each variable gets 1 or 2 lower-case symbols; no symbol is shared between variables."""
    pool = list(_SYMBOLS)
    rng.shuffle(pool)
    out: dict[str, tuple[str, ...]] = {}
    for var in variables:
        size = rng.choice((1, 2))
        out[var] = tuple(pool[:size])
        del pool[:size]
    return out


def _apply(rule: tuple[str, ...], substitution: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    out: list[str] = []
    for token in rule:
        out.extend(substitution.get(token, (token,)))
    return tuple(out)


def _rule_matches(rule: tuple[str, ...], string: tuple[str, ...]) -> bool:
    """Whether some substitution (1+ symbols per variable, consistent) turns ``rule`` into ``string``."""
    groups: dict[str, int] = {}
    parts: list[str] = []
    for token in rule:
        if token in _VARIABLES:
            if token in groups:
                parts.append(f"(?P={token})")
            else:
                groups[token] = len(groups)
                parts.append(f"(?P<{token}>[a-z](?: [a-z])*)")
        else:
            parts.append(re.escape(token))
    return re.fullmatch(" ".join(parts), " ".join(string)) is not None


def _variables_of(rule: tuple[str, ...]) -> list[str]:
    return sorted({t for t in rule if t in _VARIABLES})


def _format_substitution(substitution: dict[str, tuple[str, ...]]) -> str:
    return ", ".join(f"{var} -> {' '.join(vals)}" for var, vals in sorted(substitution.items()))


def _reasoning_item(mode: str, rng: random.Random) -> tuple[str, str, dict[str, Any]] | None:
    """One (input, answer, metadata) item, or ``None`` when the draw must be redone."""
    num_variables = rng.choice((1, 2, 3))
    rule = _random_rule(rng, num_variables)
    substitution = _random_substitution(rng, _variables_of(rule))
    string = _apply(rule, substitution)
    rule_text, string_text = " ".join(rule), " ".join(string)
    if mode == "pattern_match":
        candidates = {rule}
        attempts = 0
        while len(candidates) < 3 and attempts < 50:
            attempts += 1
            other = _random_rule(rng, rng.choice((1, 2, 3)))
            if other not in candidates and not _rule_matches(other, string):
                candidates.add(other)
        if len(candidates) < 3:
            return None
        ordered = sorted(candidates)
        rng.shuffle(ordered)
        rules_text = "\n".join(" ".join(c) for c in ordered)
        text = f"Rules:\n{rules_text}\nString: {string_text}\n{_QUESTIONS[mode]}"
        return text, rule_text, {"rule": rule_text, "string": string_text, "num_rules": len(ordered)}
    subst_text = _format_substitution(substitution)
    if mode == "variable_substitution":
        text = f"Rule: {rule_text}\nSubstitution: {subst_text}\n{_QUESTIONS[mode]}"
        return text, string_text, {"rule": rule_text, "substitution": subst_text}
    text = f"String: {string_text}\nSubstitution: {subst_text}\n{_QUESTIONS[mode]}"
    return text, rule_text, {"string": string_text, "substitution": subst_text}


def _unique_items(seed: int, count: int, make: Any, exclude: set[str]) -> list[tuple[str, str, dict[str, Any]]]:
    """``count`` items whose inputs are distinct and not in ``exclude`` (which is extended)."""
    rng = random.Random(seed)
    out: list[tuple[str, str, dict[str, Any]]] = []
    while len(out) < count:
        item = make(rng)
        if item is None or item[0] in exclude:
            continue
        exclude.add(item[0])
        out.append(item)
    return out


def _make_instances(prefix: str, split: str, items: list[tuple[str, str, dict[str, Any]]]) -> list[Instance]:
    return [
        Instance(
            id=f"{prefix}-{split}-{index:05d}",
            input=text,
            references=(Reference(answer, (CORRECT_TAG,)),),
            split=split,
            metadata=metadata,
        )
        for index, (text, answer, metadata) in enumerate(items)
    ]


@dataclass(frozen=True, kw_only=True)
class SyntheticReasoningScenario(_GeneratedScenario):
    """Reasoning over abstract symbols: pattern matching, variable substitution, rule induction."""

    info = _generated_info(
        "synthetic_reasoning",
        "Procedurally generated reasoning over abstract symbols (HELM targeted evaluation).",
        prompt_format(instructions=_INSTRUCTIONS, output_prefix="Answer: ", instance_prefix="\n", max_tokens=50),
        tags=("reasoning", "synthetic", "targeted"),
    )
    mode: str = arg("pattern_match", enum=REASONING_MODES)
    num_train: int = arg(100, minimum=0)

    def __post_init__(self) -> None:
        if self.mode not in REASONING_MODES:
            raise ValueError(f"mode must be one of {', '.join(REASONING_MODES)}; got {self.mode!r}")
        super().__post_init__()

    def get_instances(self, ctx: ScenarioContext) -> list[Instance]:
        # Test items are drawn first from their own stream, so the test set does not
        # change with num_train; train items then skip anything already in the test set.
        def make(rng: random.Random) -> tuple[str, str, dict[str, Any]] | None:
            return _reasoning_item(self.mode, rng)

        seen: set[str] = set()
        test = _unique_items(
            stable_seed("synthetic_reasoning", self.mode, self.seed, TEST_SPLIT), self.num_test, make, seen
        )
        train = _unique_items(
            stable_seed("synthetic_reasoning", self.mode, self.seed, TRAIN_SPLIT), self.num_train, make, seen
        )
        return _make_instances(self.mode, TRAIN_SPLIT, train) + _make_instances(self.mode, TEST_SPLIT, test)


# ---------------------------------------------------------------------------
# Arithmetic
# ---------------------------------------------------------------------------

ARITHMETIC_OPERATIONS = {"add": "+", "subtract": "-", "multiply": "*"}


def _number_range(digits: int) -> tuple[int, int]:
    """Inclusive range of numbers with exactly ``digits`` digits (0-9 for one digit)."""
    return (0 if digits == 1 else 10 ** (digits - 1), 10**digits - 1)


def _pair_capacity(digits: int) -> int:
    low, high = _number_range(digits)
    return (high - low + 1) ** 2


@dataclass(frozen=True, kw_only=True)
class ArithmeticScenario(_GeneratedScenario):
    """Multi-digit addition, subtraction or multiplication of two numbers.

    With few digits the number of distinct problems is small (100 for one digit);
    train examples are drawn first and the test split holds at most the rest.
    """

    info = _generated_info(
        "arithmetic",
        "Two-operand arithmetic with numbers of a given number of digits.",
        prompt_format(
            instructions="Compute the result. Answer with the number only.",
            input_prefix="Question: ",
            output_prefix="Answer: ",
            instance_prefix="\n",
            max_tokens=16,
        ),
        tags=("reasoning", "synthetic", "math"),
    )
    digits: int = arg(2, minimum=1, maximum=5)
    operation: str = arg("add", enum=tuple(ARITHMETIC_OPERATIONS))
    num_train: int = arg(50, minimum=0)

    def __post_init__(self) -> None:
        digits = self.digits
        if isinstance(digits, bool) or not isinstance(digits, int) or not 1 <= digits <= 5:
            raise ValueError(f"digits must be an integer from 1 to 5, got {digits!r}")
        if self.operation not in ARITHMETIC_OPERATIONS:
            raise ValueError(f"operation must be one of {', '.join(ARITHMETIC_OPERATIONS)}; got {self.operation!r}")
        super().__post_init__()
        capacity = _pair_capacity(digits)
        if self.num_train >= capacity:
            raise ValueError(
                f"num_train={self.num_train} leaves no test problems: only {capacity} distinct {digits}-digit "
                "problems exist"
            )

    def plan_facts(self, data_root: Path | None, max_eval_instances: int | None) -> PlanFacts:
        capacity = _pair_capacity(self.digits)
        return PlanFacts(num_instances=max(min(self.num_test, capacity - self.num_train), 0), builds_prompts=True)

    def _pairs(self) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        """Distinct operand pairs (train, test). Test pairs come first in the draw, so the
        test set does not depend on num_train unless the problem space is too small."""
        rng = random.Random(
            stable_seed("arithmetic", {"digits": self.digits, "operation": self.operation, "seed": self.seed})
        )
        low, high = _number_range(self.digits)
        capacity = _pair_capacity(self.digits)
        num_test = min(self.num_test, capacity - self.num_train)
        wanted = num_test + self.num_train
        if wanted * 4 >= capacity:
            pairs = [(a, b) for a in range(low, high + 1) for b in range(low, high + 1)]
            rng.shuffle(pairs)
        else:
            seen: set[tuple[int, int]] = set()
            pairs = []
            while len(pairs) < wanted:
                pair = (rng.randint(low, high), rng.randint(low, high))
                if pair not in seen:
                    seen.add(pair)
                    pairs.append(pair)
        return pairs[num_test:wanted], pairs[:num_test]

    def _item(self, a: int, b: int) -> tuple[str, str, dict[str, Any]]:
        """(input, answer, metadata) of the problem ``a <operation> b``."""
        result = a + b if self.operation == "add" else a - b if self.operation == "subtract" else a * b
        metadata = {"a": a, "b": b, "operation": self.operation, "digits": self.digits}
        return f"What is {a} {ARITHMETIC_OPERATIONS[self.operation]} {b}?", str(result), metadata

    def get_instances(self, ctx: ScenarioContext) -> list[Instance]:
        prefix = f"{self.operation}{self.digits}"
        train, test = self._pairs()
        return _make_instances(prefix, TRAIN_SPLIT, [self._item(a, b) for a, b in train]) + _make_instances(
            prefix, TEST_SPLIT, [self._item(a, b) for a, b in test]
        )
