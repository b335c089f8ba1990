"""Synthetic reasoning in natural language (HELM's ``synthetic_reasoning_natural``).

Each problem gives a few rules about one subject (``If a cow is hot, then the cow is
purple.``), then a fact (``The cow is smart and hot.``), and asks what can be
determined about the subject; the answer is the set of attributes the rules imply
in one step (``The cow is purple.``, or ``Nothing.``).

Difficulty, as in HELM:

- ``easy``: every rule names the subject itself and the fact uses the rules' words;
- ``medium``: a rule may name the subject's category instead (``an animal``);
- ``hard``: as medium, and the fact uses synonyms of the rules' attributes
  (``ancient`` for ``old``).

Generation follows HELM's generator step by step with the same vocabulary and the
same draws from a Mersenne-Twister stream seeded with ``seed`` (HELM's is 42), so
the default seed gives HELM's problems: 1,000 train, 5,000 valid and 5,000 test
problems drawn in that order. Rules are two or three attributes (the last is the
consequent; its condition joined by ``and`` or ``or``), at most five per problem,
no attribute in two rules; a fact with nothing to deduce is redrawn nine times in
ten. As in HELM's code, a rule about the category ``person`` reads ``If person is``.

HELM's protocol: instructions ``Please solve the following problem.``, the problem
after ``Rules:`` and a newline, three in-context examples, greedy decoding of up to
20 tokens, stopping at a newline. Scored by ``f1_set_match`` (main),
``iou_set_match`` and ``exact_set_match`` on the set of attributes stated.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from holistic.core.arguments import arg
from holistic.core.interfaces import ScenarioContext, ScenarioInfo
from holistic.core.types import CORRECT_TAG, TEST_SPLIT, TRAIN_SPLIT, VALID_SPLIT, Instance, Reference
from holistic.metrics.accuracy import EMPTY_SET_TEXT
from holistic.scenarios.base import BaseScenario, PlanFacts
from holistic.scenarios.loading.common import check_choice
from holistic.scenarios.loading.prompt_format import prompt_format

DIFFICULTIES = ("easy", "medium", "hard")
HELM_SEED = 42
SPLIT_SIZES: tuple[tuple[str, int], ...] = ((TRAIN_SPLIT, 1000), (VALID_SPLIT, 5000), (TEST_SPLIT, 5000))
MAX_RULES = 5
P_KEEP_CONSEQUENCELESS = 0.1

SUBJECTS: dict[str, tuple[str, ...]] = {
    "person": ("Alice", "Bob", "Carol", "Dan", "Erin", "Frank"),
    "animal": (
        "dog",
        "cat",
        "rabbit",
        "mouse",
        "tiger",
        "lion",
        "bear",
        "squirrel",
        "cow",
        "panda",
        "hedgehog",
        "elephant",
        "giraffe",
        "hippo",
    ),
    "plant": ("poppy", "dandelion", "tree", "rose", "sunflower"),
}
"""Subject categories and their members, in HELM's order (the order drives the draws)."""

ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "young": ("young",),
    "soft": ("soft",),
    "sad": ("sad",),
    "scary": ("scary",),
    "cold": ("cold", "chill", "cool"),
    "hot": ("hot", "warm"),
    "smart": ("smart", "clever", "wise", "intelligent"),
    "clean": ("clean", "tidy"),
    "small": ("small", "little", "tiny"),
    "big": ("big", "enormous", "giant", "huge"),
    "good": ("good", "kind", "nice"),
    "beautiful": ("beautiful", "pretty"),
    "red": ("red", "crimson"),
    "blue": ("blue", "cobalt"),
    "green": ("green", "viridian"),
    "purple": ("purple", "violet"),
    "boring": ("boring", "dull"),
    "old": ("old", "ancient", "antique"),
    "strong": ("strong", "powerful", "muscular"),
    "weak": ("weak", "frail", "fragile"),
    "fast": ("fast", "quick"),
    "slow": ("slow", "sluggish"),
    "bad": ("bad", "evil", "wicked", "mean"),
    "happy": ("happy", "elated", "glad", "cheerful"),
    "round": ("round", "circular", "spherical"),
}
"""Each attribute and the words that may state it in hard problems, in HELM's order."""


@dataclass(frozen=True)
class Named:
    """A subject (``cow``) and its category (``animal``), as the rules and the problems name them."""

    subject: str
    category: str

    def named(self, article: str, *, capital: bool = False) -> str:
        """``a cow`` / ``An elephant`` / ``the cow``; people and the word ``person`` take no article."""
        if self.category == "person" or self.subject == "person":
            return self.subject
        word = "the" if article == "the" else ("an" if self.subject[0].lower() in "aeiou" else "a")
        return f"{word.capitalize() if capital else word} {self.subject}"


@dataclass(frozen=True)
class Rule(Named):
    """``If a cow is big and red, then the cow is round.``: its ``subject`` is the problem's
    subject or its category (``cow`` or ``animal``)."""

    condition: tuple[str, ...]
    conjunction: str
    consequent: str

    def applies(self, attributes: tuple[str, ...]) -> bool:
        if self.conjunction == "and":
            return set(self.condition) <= set(attributes)
        return bool(set(self.condition) & set(attributes))

    def __str__(self) -> str:
        condition = f" {self.conjunction} ".join(self.condition)
        return f"If {self.named('a')} is {condition}, then {self.named('the')} is {self.consequent}."


def statement(subject: str, category: str, words: tuple[str, ...]) -> str:
    """``The cow is big and red.``, or ``Nothing.`` for no attributes."""
    if not words:
        return EMPTY_SET_TEXT
    return f"{Named(subject, category).named('the', capital=True)} is {' and '.join(words)}."


@dataclass(frozen=True)
class Problem(Named):
    rules: tuple[Rule, ...]
    fact: str
    consequents: tuple[str, ...]
    rules_used: tuple[Rule, ...]

    @property
    def question(self) -> str:
        lines = [*(str(r) for r in self.rules), "Fact:", self.fact]
        return "\n".join(lines) + f"\nThe following can be determined about {self.named('the')}:"

    @property
    def answer(self) -> str:
        return statement(self.subject, self.category, self.consequents)


class ProblemGenerator:
    """HELM's generator over one random stream (the draws are made in HELM's order)."""

    def __init__(self, difficulty: str, seed: int) -> None:
        self.rng = random.Random(seed)
        self.subject_rules_only = difficulty == "easy"
        self.synonyms = difficulty == "hard"
        self.attributes = list(ATTRIBUTES)

    def _rules(self, subject: str, category: str) -> tuple[Rule, ...]:
        pool = list(self.attributes)
        self.rng.shuffle(pool)
        rules: list[Rule] = []
        while len(pool) > 2 and len(rules) < MAX_RULES:
            named = subject if self.subject_rules_only else self.rng.choice([category, subject])
            size = self.rng.randint(2, 3)
            words, pool = pool[:size], pool[size:]
            conjunction = self.rng.choice(["and", "or"])
            rules.append(Rule(named, category, tuple(words[:-1]), conjunction, words[-1]))
        return tuple(rules)

    def _fact(
        self, subject: str, category: str, rules: tuple[Rule, ...]
    ) -> tuple[tuple[str, ...], tuple[str, ...], tuple[Rule, ...]]:
        """(stated words, consequents, rules used); redrawn while nothing follows, but kept one time in ten."""
        while True:
            attributes = tuple(self.rng.sample(self.attributes, 2))
            words = tuple(self.rng.choice(ATTRIBUTES[a]) for a in attributes)
            used = tuple(r for r in rules if r.consequent not in attributes and r.applies(attributes))
            if used or self.rng.random() <= P_KEEP_CONSEQUENCELESS:
                return (words if self.synonyms else attributes), tuple(r.consequent for r in used), used

    def problem(self) -> Problem:
        category = self.rng.choice(list(SUBJECTS))
        subject = self.rng.choice(SUBJECTS[category])
        rules = self._rules(subject, category)
        words, consequents, used = self._fact(subject, category, rules)
        return Problem(subject, category, rules, statement(subject, category, words), consequents, used)


def generate(difficulty: str, seed: int = HELM_SEED) -> list[Instance]:
    """Every problem of one difficulty, split as HELM splits them (train, valid, test)."""
    generator = ProblemGenerator(difficulty, seed)
    out: list[Instance] = []
    for split, size in SPLIT_SIZES:
        for _ in range(size):
            problem = generator.problem()
            out.append(
                Instance(
                    id=f"srn-{difficulty}-{len(out)}",
                    input=problem.question,
                    references=(Reference(problem.answer, (CORRECT_TAG,)),),
                    split=split,
                    metadata={"difficulty": difficulty, "num_consequents": len(problem.consequents)},
                )
            )
    return out


@dataclass(frozen=True, kw_only=True)
class SyntheticReasoningNaturalScenario(BaseScenario):
    """Rules and a fact in English: what follows about the subject?"""

    info = ScenarioInfo(
        name="synthetic_reasoning_natural",
        description="Synthetic reasoning in natural language: apply if-then rules to a fact (HELM's generator).",
        task="reasoning",
        default_adapter=prompt_format(
            instructions="Please solve the following problem.",
            input_prefix="Rules:\n",
            max_train_instances=3,
            max_tokens=20,
        ),
        main_metric="f1_set_match",
        metric_categories=("accuracy", "calibration", "efficiency"),
        not_applicable_reasons={
            "robustness": "typos and synonyms change the attribute words the rules are matched on",
            "fairness": "the subjects are placeholders; HELM evaluates the problems unperturbed",
            "bias": "answers list attributes of a made-up subject",
            "toxicity": "answers list attributes of a made-up subject",
        },
        tags=("reasoning", "synthetic", "targeted:reasoning"),
    )

    difficulty: str = arg(enum=DIFFICULTIES)
    seed: int = HELM_SEED

    def __post_init__(self) -> None:
        check_choice(self.difficulty, DIFFICULTIES, "synthetic_reasoning_natural difficulty")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise ValueError(f"seed must be an integer, got {self.seed!r}")

    def plan_facts(self, data_root: Path | None, max_eval_instances: int | None) -> PlanFacts:
        return PlanFacts(num_instances=dict(SPLIT_SIZES)[TEST_SPLIT], builds_prompts=True)

    def get_instances(self, ctx: ScenarioContext) -> list[Instance]:
        return generate(self.difficulty, self.seed)
