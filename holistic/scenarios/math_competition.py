"""MATH (Hendrycks et al., 2021): competition mathematics, answers in LaTeX.

HELM's protocol (``math``): instructions "Given a mathematics problem, determine the
answer. Simplify your answer as much as possible.", ``Problem: <problem>`` /
``Answer: $<answer>$`` blocks separated by ``###``, eight in-context examples,
greedy decoding. Without chain of thought the reference is the final answer (the
last ``\\boxed{}`` of the solution), generation stops at ``$`` and ``math_equiv``
compares answers after HELM's LaTeX normalisation. With ``chain_of_thought: true``
the reference is the whole worked solution, up to 400 tokens are generated (stop
``###``) and ``math_equiv_chain_of_thought`` compares the last ``\\boxed{}`` of
each. Every value is also reported per subject and per level.

Data: the authors' tree ``{train,test}/<subject>/<id>.json`` (keys ``problem``,
``level``, ``type``, ``solution``; MIT), from the MATH tarball. Every subject folder
present under ``math/test/`` is loaded for ``subject: all``. HELM's examples come
from ``train/``; when only ``test/`` is present, a fixed seeded set of 100 test
problems (at most half of those of the chosen subject and level, so a single level
such as HELM Lite's ``level: "1"`` keeps problems to evaluate) is the example pool and
is left out of evaluation (not comparable with published numbers).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

from holistic.core.arguments import arg
from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioContext, ScenarioInfo
from holistic.core.latex import boxed_answer
from holistic.core.types import CORRECT_TAG, TEST_SPLIT, TRAIN_SPLIT, AdapterDefaults, Instance, Reference
from holistic.scenarios.base import BaseScenario, PlanFacts
from holistic.scenarios.loading.categories import worked_answer
from holistic.scenarios.loading.common import check_choice, with_train_pool
from holistic.scenarios.loading.part_files import places
from holistic.scenarios.loading.prompt_format import prompt_format
from holistic.scenarios.loading.sources import DataFile, DataNeeds, Download, resolve

_TARBALL = "https://people.eecs.berkeley.edu/~hendrycks/MATH.tar"
ALL = "all"
SUBJECTS: tuple[str, ...] = (
    "algebra",
    "counting_and_probability",
    "geometry",
    "intermediate_algebra",
    "number_theory",
    "prealgebra",
    "precalculus",
)
LEVELS: tuple[str, ...] = ("1", "2", "3", "4", "5")
_POOL_FROM_TEST = 100
_INSTRUCTIONS = "Given a mathematics problem, determine the answer. Simplify your answer as much as possible.\n"


def math_adapter(chain_of_thought: bool) -> AdapterDefaults:
    """HELM's MATH adapter fields, with or without chain of thought."""
    fields = prompt_format(
        instructions=_INSTRUCTIONS,
        input_prefix="Problem: ",
        output_prefix="Answer: " if chain_of_thought else "Answer: $",
        output_suffix="\n" if chain_of_thought else "$\n",
        instance_prefix="###\n",
        max_train_instances=8,
        max_tokens=400 if chain_of_thought else 20,
        stop_sequences=("###",) if chain_of_thought else ("$",),
    )
    return fields


def read_problem(path: Path, subject: str, split: str, chain_of_thought: bool) -> Instance:
    try:
        row = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataSourceError(f"{path}: not a MATH problem file: {exc}") from None
    if not isinstance(row, dict) or not all(isinstance(row.get(k), str) for k in ("problem", "solution")):
        raise DataSourceError(f"{path}: expected an object with 'problem' and 'solution' strings")
    answer = boxed_answer(row["solution"])
    if answer is None:
        raise DataSourceError(f"{path}: the solution has no \\boxed{{...}} final answer")
    level = str(row.get("level", "")).removeprefix("Level ").strip() or "?"
    return Instance(
        id=f"{split}/{subject}/{path.stem}",
        input=row["problem"],
        references=(Reference(row["solution"] if chain_of_thought else answer, (CORRECT_TAG,)),),
        split=split,
        metadata={"subject": subject, "level": level, "answer": answer, "chain_of_thought": chain_of_thought},
    )


@dataclass(frozen=True, kw_only=True)
class MATHScenario(BaseScenario):
    """Competition mathematics with LaTeX answers, with or without chain of thought."""

    info = ScenarioInfo(
        name="math",
        description="MATH: competition mathematics; the final LaTeX answer is compared after normalisation.",
        task="generation",
        default_adapter=math_adapter(False),
        main_metric="math_equiv",
        **worked_answer(
            answer="a LaTeX answer", unperturbed="HELM evaluates MATH unperturbed (a typo changes the mathematics)"
        ),
        tags=("math_latex", "reasoning", "targeted:reasoning"),
        breakdowns=("subject", "level"),
    )

    subject: str = arg(ALL, enum=(ALL, *SUBJECTS))
    level: str = arg(ALL, enum=(ALL, *LEVELS))
    chain_of_thought: bool = False

    def __post_init__(self) -> None:
        check_choice(self.subject, [ALL, *SUBJECTS], "MATH subject")
        object.__setattr__(self, "level", check_choice(str(self.level), [ALL, *LEVELS], "MATH level"))
        if not isinstance(self.chain_of_thought, bool):
            raise ValueError(f"chain_of_thought must be true or false, not {self.chain_of_thought!r}")
        if self.chain_of_thought:
            object.__setattr__(self, "info", replace(type(self).info, main_metric="math_equiv_chain_of_thought"))

    def adapter_defaults(self) -> AdapterDefaults:
        return math_adapter(self.chain_of_thought)

    def plan_facts(self, data_root: Path | None, max_eval_instances: int | None) -> PlanFacts:
        return PlanFacts(num_instances=5000 if self.subject == ALL else 700)

    def _subjects(self) -> list[str]:
        return list(SUBJECTS) if self.subject == ALL else [self.subject]

    def data_needs(self) -> DataNeeds:
        files = tuple(
            DataFile(f"test/{s}", downloads=(Download(_TARBALL, member=f"MATH/test/{s}/"),), is_dir=True)
            for s in self._subjects()
        )
        return DataNeeds("math", layouts=(files,), hint="https://github.com/hendrycks/math (MATH.tar)")

    def _folders(self, ctx: ScenarioContext) -> Path:
        for base in places(ctx, "math"):
            if any((base / "test" / s).is_dir() for s in self._subjects()):
                return base
        resolved = resolve(self.data_needs(), ctx)
        return next(iter(resolved.paths.values())).parent.parent

    def get_instances(self, ctx: ScenarioContext) -> list[Instance]:
        base = self._folders(ctx)
        test: list[Instance] = []
        train: list[Instance] = []
        for subject in self._subjects():
            for split, bucket in (("test", test), ("train", train)):
                folder = base / split / subject
                if folder.is_dir():
                    tag = TEST_SPLIT if split == "test" else TRAIN_SPLIT
                    bucket.extend(
                        read_problem(p, subject, tag, self.chain_of_thought) for p in sorted(folder.glob("*.json"))
                    )
        if self.level != ALL:
            test = [i for i in test if i.metadata["level"] == self.level]
            train = [i for i in train if i.metadata["level"] == self.level]
        if not test:
            raise DataSourceError(
                f"no MATH test problems for subject {self.subject!r}, level {self.level!r} under {base}"
            )
        if not train:
            return with_train_pool(test, min(_POOL_FROM_TEST, len(test) // 2), "math-train-pool")
        return train + test
