"""Which metric categories apply to each kind of scenario, and why the others do not.

HELM measures every category it can on every core scenario; where it cannot, the
coverage table says why. These presets keep the reasons worded the same across
scenarios of one kind (a scenario may still override one).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypedDict

from holistic.core.interfaces import METRIC_CATEGORIES
from holistic.core.types import AdapterDefaults

# Categories for tasks whose answer is a short label or choice.
CLASSIFICATION_CATEGORIES: tuple[str, ...] = ("accuracy", "calibration", "robustness", "fairness", "efficiency")
# Free-form QA: every category (answers are generated text, so bias and toxicity apply).
OPEN_QA_CATEGORIES: tuple[str, ...] = METRIC_CATEGORIES
# Summarization: no calibration; perturbed only on request (see the reasons below).
SUMMARIZATION_CATEGORIES: tuple[str, ...] = ("accuracy", "robustness", "fairness", "bias", "toxicity", "efficiency")
# Ranking: no calibration, no generated text.
RANKING_CATEGORIES: tuple[str, ...] = ("accuracy", "robustness", "fairness", "efficiency")

_SHORT_OUTPUT = (
    "the output is a label or a choice, too short for the bias and toxicity of generated text to be meaningful"
)

CLASSIFICATION_NOT_APPLICABLE: Mapping[str, str] = {"bias": _SHORT_OUTPUT, "toxicity": _SHORT_OUTPUT}

OPEN_QA_NOT_APPLICABLE: Mapping[str, str] = {}

SUMMARIZATION_NOT_APPLICABLE: Mapping[str, str] = {
    "calibration": "a summary has no single correct answer whose probability could be calibrated",
}

_HELM_UNPERTURBED = (
    "HELM's core runs of it are unperturbed (its core run entries carry no data_augmentation); "
    "name the perturbations on the run (perturbations:) to measure it"
)
SUMMARIZATION_UNPERTURBED: Mapping[str, str] = dict.fromkeys(("robustness", "fairness"), _HELM_UNPERTURBED)
"""``ScenarioInfo.unperturbed_by_default`` of HELM's news summarization scenarios."""

RANKING_NOT_APPLICABLE: Mapping[str, str] = {
    "calibration": "ranking scores passages against each other; there is no single answer probability to calibrate",
    "bias": "the output is a yes/no relevance judgement, not generated text",
    "toxicity": "the output is a yes/no relevance judgement, not generated text",
}


class CategoryPreset(TypedDict):
    """The two :class:`~holistic.core.interfaces.ScenarioInfo` fields one kind of scenario
    shares: ``ScenarioInfo(..., **CLASSIFICATION)``."""

    metric_categories: tuple[str, ...]
    not_applicable_reasons: Mapping[str, str]


CLASSIFICATION = CategoryPreset(
    metric_categories=CLASSIFICATION_CATEGORIES, not_applicable_reasons=CLASSIFICATION_NOT_APPLICABLE
)
"""A short label or choice: no bias or toxicity of generated text."""
OPEN_QA = CategoryPreset(metric_categories=OPEN_QA_CATEGORIES, not_applicable_reasons=OPEN_QA_NOT_APPLICABLE)
"""Free-form answers: every category."""
SUMMARIZATION = CategoryPreset(
    metric_categories=SUMMARIZATION_CATEGORIES, not_applicable_reasons=SUMMARIZATION_NOT_APPLICABLE
)
"""Summaries: no calibration; perturbations only where a run names them (``SUMMARIZATION_UNPERTURBED``)."""
RANKING = CategoryPreset(metric_categories=RANKING_CATEGORIES, not_applicable_reasons=RANKING_NOT_APPLICABLE)
"""Passage ranking: no calibration, no generated text."""


class ClassificationF1Preset(CategoryPreset):
    """:data:`CLASSIFICATION` plus the task and HELM's classification F1: ``ScenarioInfo(..., **CLASSIFICATION_F1)``."""

    task: str
    extra_metrics: tuple[str, ...]


CLASSIFICATION_F1 = ClassificationF1Preset(task="classification", extra_metrics=("classification",), **CLASSIFICATION)
"""A label from a fixed set whose HELM run spec adds classification F1 (``classification_macro_f1``,
``classification_micro_f1``) to the accuracy metrics."""


def worked_answer(*, answer: str, unperturbed: str) -> CategoryPreset:
    """Generated text scored on what it arrives at (a final number, a LaTeX answer, a program):
    ``answer`` names it for the calibration reason (``a program``: it "has no single answer
    probability"); ``unperturbed`` says why robustness and fairness are not measured."""
    return CategoryPreset(
        metric_categories=("accuracy", "efficiency", "bias", "toxicity"),
        not_applicable_reasons={
            "calibration": f"{answer} has no single answer probability",
            "robustness": unperturbed,
            "fairness": unperturbed,
        },
    )


_GENERATED = ("bias", "toxicity")
_NOTHING = "nothing is generated"

LM_WINDOWS: AdapterDefaults = {"method": "language_modeling", "max_train_instances": 0, "max_tokens": 0}
"""The adapter of a text scored by log-probability in windows (nothing generated)."""


class BitsPerBytePreset(CategoryPreset):
    """The :class:`~holistic.core.interfaces.ScenarioInfo` fields of a language-modelling
    scenario scored in bits per byte: ``ScenarioInfo(..., **bits_per_byte(...))``."""

    task: str
    default_adapter: AdapterDefaults
    main_metric: str


def bits_per_byte(*, robustness: str, fairness: str | None = None) -> BitsPerBytePreset:
    """A text scored in bits per byte: accuracy and efficiency only; ``robustness`` and
    ``fairness`` (default: the robustness reason) say why those are not measured."""
    unperturbed = {"robustness": robustness, "fairness": robustness if fairness is None else fairness}
    reasons = {"calibration": "the text is scored, not answered", **unperturbed, **dict.fromkeys(_GENERATED, _NOTHING)}
    return BitsPerBytePreset(
        task="language_modeling",
        default_adapter=LM_WINDOWS,
        main_metric="bits_per_byte",
        metric_categories=("accuracy", "efficiency"),
        not_applicable_reasons=reasons,
    )


def not_applicable(preset: Mapping[str, str], **overrides: str) -> dict[str, str]:
    """A copy of ``preset`` with some reasons replaced or added."""
    out = dict(preset)
    out.update(overrides)
    return out
