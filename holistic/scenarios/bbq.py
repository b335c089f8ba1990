"""BBQ (Parrish et al., 2022): the Bias Benchmark for QA, 9 categories and 2 intersections.

Each question comes in an ambiguous context (the right answer is "unknown") and a
disambiguated one, with a negative or a non-negative wording; one answer is the
group a social stereotype targets, one is not, one is "unknown". HELM's format:
multiple choice (joint), instructions "The following are multiple choice questions
(with answers).", ``Passage: <context>\\nQuestion: <question>``, three lettered
choices, five in-context examples. Accuracy is reported overall and per category
and context condition; :mod:`holistic.metrics.bbq` adds the paper's bias scores.

Data: the authors' ``data/<Category>.jsonl`` (``nyu-mll/BBQ`` at a pinned commit,
CC BY 4.0). Every category file present in the ``bbq/`` folder is loaded (a user
with all 11 gets all 11); ``category`` picks one. The test set is HELM's: the rows of the
categories loaded, in HELM's category order (:data:`HELM_ORDER`; files it does not know
after, by name) and file order, shuffled by Python's ``random`` seeded with 0, then the
last 1,000 are the test set (all of them when there are fewer) and the rest the
in-context example pool; instances come in that shuffled order, as HELM's do. For one
category, and for all 11, this is HELM's split (proved per category against HELM's own
loader by ``tests/conformance/test_conformance_safety.py``); with only some of the
categories present HELM cannot run, so that split has no HELM counterpart.

Which answer is the stereotyped target, the non-target and "unknown" comes from
``answer_info`` and ``additional_metadata.stereotyped_groups`` (kept per instance in
``metadata``: ``target_index``, ``non_target_index``, ``unknown_index``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from holistic.core.arguments import arg
from holistic.core.errors import DataSourceError
from holistic.core.interfaces import ScenarioContext, ScenarioInfo
from holistic.core.types import TEST_SPLIT, TRAIN_SPLIT, Instance
from holistic.scenarios.base import BaseScenario, PlanFacts
from holistic.scenarios.loading.common import check_choice, choice_references
from holistic.scenarios.loading.part_files import collect_parts, github_file, parts_report
from holistic.scenarios.loading.prompt_format import multiple_choice_joint_format
from holistic.scenarios.loading.readers import iter_located_jsonl, require
from holistic.scenarios.loading.sources import DataNeeds

_REPO = "nyu-mll/BBQ"
_COMMIT = "bea11bd97d79217245b5871acd247b9d6eb24598"
_SUFFIX = ".jsonl"
ALL = "all"
TEST_SIZE = 1000

CATEGORIES: tuple[str, ...] = (
    "Age",
    "Disability_status",
    "Gender_identity",
    "Nationality",
    "Physical_appearance",
    "Race_ethnicity",
    "Religion",
    "SES",
    "Sexual_orientation",
    "Race_x_SES",
    "Race_x_gender",
)
"""The 9 categories and the 2 intersections of the release."""

HELM_ORDER: tuple[str, ...] = (*CATEGORIES[:6], "Race_x_SES", "Race_x_gender", "Religion", "SES", "Sexual_orientation")
"""The order HELM 0.5.16's ``BBQScenario`` reads the categories in (before its shuffle)."""

UNKNOWN = "unknown"


def _groups_match(group: str, info: list[str]) -> bool:
    """Whether an answer's ``answer_info`` (``[text, group label]``) names the stereotyped ``group``.

    The release writes some groups differently in the two places (``Black`` vs the
    label ``M-Black``, ``low SES`` vs ``lowSES``, ``lowSES-F-Black``): a group matches
    an entry equal to it, or a label ending with ``-<group>`` (spaces removed).
    """
    wanted = group.replace(" ", "")
    squeezed = [entry.replace(" ", "") for entry in info]
    return wanted in squeezed or (len(squeezed) > 1 and squeezed[-1].endswith("-" + wanted))


def answer_roles(row: dict[str, Any], where: str) -> tuple[int | None, int | None, int | None]:
    """(target, non-target, unknown) answer indices of one BBQ row (``None`` when absent)."""
    info = require(row, "answer_info", where)
    meta = require(row, "additional_metadata", where)
    groups = [str(g) for g in (meta.get("stereotyped_groups") or [])] if isinstance(meta, dict) else []
    target = non_target = unknown = None
    for i in range(3):
        entry = info.get(f"ans{i}") if isinstance(info, dict) else None
        if not isinstance(entry, list):
            raise DataSourceError(f"{where}: answer_info.ans{i} must be a list")
        entry = [str(e) for e in entry]
        if UNKNOWN in entry:
            unknown = i
        elif any(_groups_match(g, entry) for g in groups):
            target = i
        else:
            non_target = i
    return target, non_target, unknown


def read_category(path: Path, category: str) -> list[Instance]:
    out = []
    for _, where, row in iter_located_jsonl(path):
        answers = [str(require(row, f"ans{i}", where)) for i in range(3)]
        label = require(row, "label", where)
        condition = require(row, "context_condition", where)
        polarity = require(row, "question_polarity", where)
        if type(label) is not int or not 0 <= label <= 2:
            raise DataSourceError(f"{where}: label {label!r} is not 0, 1 or 2")
        if condition not in ("ambig", "disambig"):
            raise DataSourceError(f"{where}: context_condition {condition!r} is neither 'ambig' nor 'disambig'")
        if polarity not in ("neg", "nonneg"):
            raise DataSourceError(f"{where}: question_polarity {polarity!r} is neither 'neg' nor 'nonneg'")
        target, non_target, unknown = answer_roles(row, where)
        context, question = str(require(row, "context", where)), str(require(row, "question", where))
        out.append(
            Instance(
                id=f"{category}-{require(row, 'example_id', where)}",
                input=f"{context}\nQuestion: {question}",
                references=choice_references(answers, label),
                split=TEST_SPLIT,
                metadata={
                    "category": category,
                    "context_condition": condition,
                    "question_polarity": polarity,
                    "target_index": target,
                    "non_target_index": non_target,
                    "unknown_index": unknown,
                },
            )
        )
    return out


@dataclass(frozen=True, kw_only=True)
class BBQScenario(BaseScenario):
    """Social bias in question answering, in ambiguous and disambiguated contexts."""

    info = ScenarioInfo(
        name="bbq",
        description="BBQ: questions probing social stereotypes, with ambiguous and disambiguated contexts.",
        task="multiple_choice",
        default_adapter={
            **multiple_choice_joint_format("The following are multiple choice questions (with answers)."),
            "input_prefix": "Passage: ",
        },
        main_metric="exact_match",
        metric_categories=("accuracy", "calibration", "efficiency", "bias"),
        not_applicable_reasons={
            "robustness": "HELM measures BBQ unperturbed; a typo can change which group a context names",
            "fairness": "HELM measures BBQ unperturbed; a typo can change which group a context names",
            "toxicity": "the output is a choice letter",
        },
        tags=("bias", "bbq", "targeted:bias"),
        breakdowns=("category", "context_condition"),
    )

    category: str = arg(ALL, enum=(ALL, *CATEGORIES))

    def __post_init__(self) -> None:
        check_choice(self.category, [ALL, *CATEGORIES], "BBQ category")

    def _wanted(self) -> list[str]:
        return list(CATEGORIES) if self.category == ALL else [self.category]

    def plan_facts(self, data_root: Path | None, max_eval_instances: int | None) -> PlanFacts:
        note = parts_report(data_root, "bbq", self._wanted(), _SUFFIX, "categories")
        return PlanFacts(num_instances=TEST_SIZE, notes=(note,) if note else (), samples_prompts=True)

    def data_needs(self) -> DataNeeds:
        files = tuple(github_file("bbq", f"{c}{_SUFFIX}", _REPO, _COMMIT, f"data/{c}{_SUFFIX}") for c in CATEGORIES)
        return DataNeeds("bbq", layouts=(files,), hint=f"https://github.com/{_REPO} (data/*.jsonl)")

    def get_instances(self, ctx: ScenarioContext) -> list[Instance]:
        parts = collect_parts(
            ctx, self.data_needs(), self._wanted(), suffix=_SUFFIX, accept_unknown=self.category == ALL
        )
        order = sorted(parts.paths, key=lambda n: (HELM_ORDER.index(n) if n in HELM_ORDER else len(HELM_ORDER), n))
        instances = [inst for name in order for inst in read_category(parts.paths[name], name)]
        random.Random(0).shuffle(instances)  # HELM's random.seed(0); random.shuffle(...)
        train = max(len(instances) - TEST_SIZE, 0)
        return [replace(i, split=TRAIN_SPLIT) if n < train else i for n, i in enumerate(instances)]
