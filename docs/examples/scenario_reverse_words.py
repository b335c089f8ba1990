"""Example plugin: a scenario that makes its instances from its arguments (no data files).

Each instance asks for a word spelled backwards. Load it with
``helm-run SPEC --plugins docs/examples/scenario_reverse_words.py``; a spec then names it
with ``scenario: reverse_words``.
"""

from __future__ import annotations

import random
from typing import Any

from holistic.plugin import (
    CORRECT_TAG,
    TEST_SPLIT,
    TRAIN_SPLIT,
    BaseScenario,
    Instance,
    Reference,
    ScenarioArgError,
    ScenarioContext,
    ScenarioInfo,
    register_scenario,
)

WORDS = ("apple", "river", "stone", "cloud", "lemon", "tiger", "piano", "honey", "ocean", "maple", "chair", "light")


@register_scenario("reverse_words")
class ReverseWordsScenario(BaseScenario):
    """Spell a word backwards: ``apple`` -> ``elppa``."""

    info = ScenarioInfo(
        name="reverse_words",
        description="Spell a common English word backwards.",
        task="generation",
        default_adapter={
            "method": "generation",
            "max_tokens": 8,
            "input_prefix": "Word: ",
            "output_prefix": "Reversed: ",
        },
        main_metric="exact_match",
        metric_categories=("accuracy", "efficiency"),
        args_schema={
            "type": "object",
            "properties": {
                "num_train": {"type": "integer", "minimum": 0, "default": 4},
                "num_test": {"type": "integer", "minimum": 1, "default": 8},
            },
            "additionalProperties": False,
        },
    )
    # The instances come from the arguments alone, so --plan builds every prompt exactly.
    plan_builds_prompts = True

    def __init__(self, num_train: int = 4, num_test: int = 8) -> None:
        self.num_train = num_train
        self.num_test = num_test

    @classmethod
    def check_args(cls, args: dict[str, Any]) -> None:
        # A check the JSON schema cannot express: the two splits share one word list.
        if args.get("num_train", 4) + args.get("num_test", 8) > len(WORDS):
            raise ScenarioArgError("num_test", f"num_train + num_test must be at most {len(WORDS)} (the word list)")

    @classmethod
    def estimate_num_instances(cls, args: dict[str, Any]) -> int | None:
        return int(args.get("num_test", 8))

    def get_instances(self, ctx: ScenarioContext) -> list[Instance]:
        words = list(WORDS)
        random.Random(ctx.seed).shuffle(words)  # deterministic for a given seed
        out = []
        for i, word in enumerate(words[: self.num_train + self.num_test]):
            split = TRAIN_SPLIT if i < self.num_train else TEST_SPLIT
            answer = Reference(output=word[::-1], tags=(CORRECT_TAG,))
            out.append(Instance(id=f"{split}-{word}", input=word, references=(answer,), split=split))
        return out
