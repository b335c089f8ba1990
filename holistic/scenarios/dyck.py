"""Dyck languages (Suzgun et al., 2019), HELM's ``dyck_language``: close the brackets.

An instance is a prefix of a well-nested word over ``n`` bracket pairs (``(``,
``[``, ``{``, ``<``, the first ``n`` of them) that still has one to three brackets
open; the answer is the closing brackets, space-separated (``( [ { } ( )`` ->
``] )``).

Generation follows HELM's generator with HELM's parameters: words from the
probabilistic grammar ``S -> (_i S )_i`` with probability ``p = 0.5`` (the pair
drawn uniformly), ``S -> S S`` with ``q = 0.25``, else empty (recursion capped at
depth 100; a word longer than the length limit is dropped); three training words of
length 4..50 and 500 test words of length 52..100, all inputs distinct and no test
input equal to a training one. The draws come from the same two streams as HELM's
(Python's ``random`` for the grammar and the number of brackets left open, NumPy's
legacy generator for the pair), both seeded with ``seed`` (HELM's is 42).

HELM's protocol: instructions ``Please complete the rest of the following Dyck
sequences, making sure that the parentheses are closed properly.``, ``Input: `` then
the prefix and, for examples, the answer after it on the same line; three in-context
examples; greedy decoding of up to 5 tokens, stopping at a newline. Scored by HELM's
``exact_match_indicator`` (main): only the last space-separated bracket of the answer
and of the reference are compared, as HELM does; ``exact_match`` compares the whole
closing sequence.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from holistic.core.arguments import arg
from holistic.core.interfaces import ScenarioContext, ScenarioInfo
from holistic.core.types import CORRECT_TAG, TEST_SPLIT, TRAIN_SPLIT, Instance, Reference
from holistic.scenarios.base import BaseScenario, PlanFacts
from holistic.scenarios.loading.common import check_count
from holistic.scenarios.loading.prompt_format import prompt_format

PAIRS: tuple[tuple[str, str], ...] = (("(", ")"), ("[", "]"), ("{", "}"), ("<", ">"))
HELM_SEED = 42
PROB_P = 0.5
PROB_Q = 0.25
MAX_DEPTH = 100
MAX_OPEN_AT_END = 3
TRAIN_LENGTHS = (4, 50)
TEST_LENGTHS = (52, 100)
DEFAULT_WORD_LIMIT = 100


class DyckGenerator:
    """HELM's Dyck-n generator over its two seeded random streams."""

    def __init__(self, num_pairs: int, seed: int) -> None:
        if not 1 <= num_pairs <= len(PAIRS):
            raise ValueError(f"num_parenthesis_pairs must be 1..{len(PAIRS)}, got {num_pairs!r}")
        self.num_pairs = num_pairs
        self.opening = [o for o, _ in PAIRS[:num_pairs]]
        self.closing = [c for _, c in PAIRS[:num_pairs]]
        self.rng = random.Random(seed)
        self.pair_rng = np.random.RandomState(seed)

    def word(self, limit: int = DEFAULT_WORD_LIMIT) -> list[str]:
        """One word of the grammar; a sub-word deeper than the cap or longer than its limit is empty.

        The draws are made in the order of HELM's recursive generator (each
        expansion draws its rule, then an opening's pair, then its left part before
        its right part); as there, only the whole word gets the caller's length
        limit and every sub-word the default of 100. Written with an explicit stack
        so that long chains of ``S -> S S`` cannot exhaust Python's recursion limit.
        """
        tasks: list[tuple[str, int, int]] = [("expand", 0, limit)]
        values: list[list[str]] = []
        while tasks:
            kind, arg, bound = tasks.pop()
            if kind == "expand":
                if arg > MAX_DEPTH:
                    values.append([])
                    continue
                draw = self.rng.random()
                if draw < PROB_P:
                    pair = int(self.pair_rng.randint(self.num_pairs))
                    tasks += [("wrap", pair, bound), ("expand", arg + 1, DEFAULT_WORD_LIMIT)]
                elif draw < PROB_P + PROB_Q:
                    tasks += [
                        ("join", 0, bound),
                        ("expand", arg, DEFAULT_WORD_LIMIT),
                        ("expand", arg, DEFAULT_WORD_LIMIT),
                    ]
                else:
                    values.append([])
                continue
            if kind == "wrap":
                out = [self.opening[arg], *values.pop(), self.closing[arg]]
            else:
                right = values.pop()
                out = values.pop() + right
            values.append(out if len(out) <= bound else [])
        return values[0]

    def prefix_leaving_open(self, word: list[str], open_count: int) -> list[str]:
        """The longest prefix of ``word`` whose rest closes exactly ``open_count`` brackets
        (scanning from the end), or ``[]`` when there is none."""
        balance = 0
        for i in range(len(word) - 1, -1, -1):
            balance += -1 if word[i] in self.opening else 1
            if balance == open_count:
                return word[:i]
        return []

    def closing_of(self, prefix: list[str]) -> list[str]:
        """The brackets that close ``prefix``, innermost first."""
        stack: list[str] = []
        for symbol in prefix:
            if symbol in self.opening:
                stack.append(self.closing[self.opening.index(symbol)])
            else:
                stack.pop()
        return stack[::-1]

    def pair(self, lengths: tuple[int, int]) -> tuple[str, str]:
        low, high = lengths
        while True:
            word = self.word(high)
            if len(word) < low:
                continue
            prefix = self.prefix_leaving_open(word, self.rng.randint(1, MAX_OPEN_AT_END))
            if prefix:
                return " ".join(prefix), " ".join(self.closing_of(prefix))

    def corpus(self, size: int, lengths: tuple[int, int], exclude: set[str]) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        seen: set[str] = set()
        while len(out) < size:
            prefix, answer = self.pair(lengths)
            if prefix in seen or prefix in exclude:
                continue
            seen.add(prefix)
            out.append((prefix, answer))
        return out


def generate(num_pairs: int, num_train: int = 3, num_test: int = 500, seed: int = HELM_SEED) -> list[Instance]:
    """HELM's training then test words for Dyck-``num_pairs``."""
    generator = DyckGenerator(num_pairs, seed)
    train = generator.corpus(num_train, TRAIN_LENGTHS, set())
    test = generator.corpus(num_test, TEST_LENGTHS, {p for p, _ in train})
    out: list[Instance] = []
    for split, items in ((TRAIN_SPLIT, train), (TEST_SPLIT, test)):
        for prefix, answer in items:
            out.append(
                Instance(
                    id=f"dyck{num_pairs}-{split}-{len(out)}",
                    input=prefix,
                    # HELM's reference starts with a space: examples read "<prefix> <answer>".
                    references=(Reference(" " + answer, (CORRECT_TAG,)),),
                    split=split,
                    metadata={"num_parenthesis_pairs": num_pairs, "open_at_end": len(answer.split())},
                )
            )
    return out


@dataclass(frozen=True, kw_only=True)
class DyckLanguageScenario(BaseScenario):
    """Complete the closing brackets of a Dyck-n prefix."""

    info = ScenarioInfo(
        name="dyck_language",
        description="Dyck languages: write the closing brackets of a well-nested prefix (HELM's generator).",
        task="reasoning",
        default_adapter=prompt_format(
            instructions=(
                "Please complete the rest of the following Dyck sequences, "
                "making sure that the parentheses are closed properly."
            ),
            input_prefix="Input: ",
            input_suffix="",
            output_suffix="",
            max_train_instances=3,
            max_tokens=5,
        ),
        main_metric="exact_match_indicator",
        metric_categories=("accuracy", "calibration", "efficiency"),
        not_applicable_reasons={
            "robustness": "typos and synonyms would change the brackets, and with them the answer",
            "fairness": "brackets carry no dialect, gender or name to vary",
            "bias": "outputs are brackets, not text about social groups",
            "toxicity": "outputs are brackets, not free text",
        },
        tags=("reasoning", "synthetic", "targeted:reasoning"),
    )

    num_parenthesis_pairs: int = arg(minimum=1, maximum=len(PAIRS))
    num_train: int = arg(3, minimum=0)
    num_test: int = arg(500, minimum=1)
    seed: int = HELM_SEED

    def __post_init__(self) -> None:
        if check_count("num_parenthesis_pairs", self.num_parenthesis_pairs, 1) > len(PAIRS):
            raise ValueError(f"num_parenthesis_pairs must be 1..{len(PAIRS)}, got {self.num_parenthesis_pairs!r}")
        check_count("num_train", self.num_train, 0)
        check_count("num_test", self.num_test, 1)
        check_count("seed", self.seed, 0)

    @property
    def num_pairs(self) -> int:
        return self.num_parenthesis_pairs

    def plan_facts(self, data_root: Path | None, max_eval_instances: int | None) -> PlanFacts:
        return PlanFacts(num_instances=self.num_test, builds_prompts=True)

    def get_instances(self, ctx: ScenarioContext) -> list[Instance]:
        return generate(self.num_pairs, self.num_train, self.num_test, self.seed)
