"""Example plugin: a scenario that makes its instances from its arguments (no data files).

Each instance asks for a word spelled backwards. Load it with
``helm-run SPEC --plugins docs/examples/scenario_reverse_words.py``; a spec then names it
with ``scenario: reverse_words``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from holistic.plugin import (
    CORRECT_TAG,
    TEST_SPLIT,
    TRAIN_SPLIT,
    BaseScenario,
    Instance,
    PlanFacts,
    Reference,
    ScenarioArgError,
    ScenarioContext,
    ScenarioInfo,
    arg,
    register_scenario,
)

WORDS = ("apple", "river", "stone", "cloud", "lemon", "tiger", "piano", "honey", "ocean", "maple", "chair", "light")


@register_scenario
@dataclass(frozen=True, kw_only=True)
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
    )
    # The arguments (a spec's `args`): their JSON schema is derived from these fields.
    num_train: int = arg(4, minimum=0, description="In-context examples to draw from.")
    num_test: int = arg(8, minimum=1, description="Words to spell backwards.")

    def __post_init__(self) -> None:
        # A check the schema cannot express: the two splits share one word list.
        if self.num_train + self.num_test > len(WORDS):
            raise ScenarioArgError("num_test", f"num_train + num_test must be at most {len(WORDS)} (the word list)")

    def plan_facts(self, data_root: Path | None, max_eval_instances: int | None) -> PlanFacts:
        # The instances come from the arguments alone, so --plan builds every prompt exactly.
        return PlanFacts(num_instances=self.num_test, builds_prompts=True)

    def get_instances(self, ctx: ScenarioContext) -> list[Instance]:
        words = list(WORDS)
        random.Random(ctx.seed).shuffle(words)  # deterministic for a given seed
        out = []
        for i, word in enumerate(words[: self.num_train + self.num_test]):
            split = TRAIN_SPLIT if i < self.num_train else TEST_SPLIT
            answer = Reference(output=word[::-1], tags=(CORRECT_TAG,))
            out.append(Instance(id=f"{split}-{word}", input=word, references=(answer,), split=split))
        return out
