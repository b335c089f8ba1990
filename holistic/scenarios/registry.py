"""The scenario registry: names -> scenario classes (built-ins plus entry points)."""

from __future__ import annotations

import importlib
from typing import Any

from holistic.core.interfaces import Scenario, ScenarioInfo
from holistic.core.registry import Registry
from holistic.core.types import ScenarioSpec

SCENARIOS: Registry[type[Scenario]] = Registry("scenario", group="holistic.scenarios")

# Modules that register built-in scenarios when imported.
_BUILTIN_MODULES: tuple[str, ...] = (
    "holistic.scenarios.synthetic",
    "holistic.scenarios.mmlu",
    "holistic.scenarios.boolq",
    "holistic.scenarios.imdb",
    "holistic.scenarios.raft",
    "holistic.scenarios.hellaswag",
    "holistic.scenarios.openbookqa",
    "holistic.scenarios.truthful_qa",
    "holistic.scenarios.narrative_qa",
    "holistic.scenarios.natural_qa",
    "holistic.scenarios.quac",
    "holistic.scenarios.msmarco",
    "holistic.scenarios.cnn_dailymail",
    "holistic.scenarios.xsum",
    "holistic.scenarios.civil_comments",
    "holistic.scenarios.user_file",
    "holistic.scenarios.user_huggingface",
    "holistic.scenarios.haystack",
    "holistic.scenarios.blimp",
    "holistic.scenarios.bbq",
    "holistic.scenarios.gsm8k",
    "holistic.scenarios.wikitext",
    "holistic.scenarios.real_toxicity_prompts",
    "holistic.scenarios.bold",
    "holistic.scenarios.babi",
    "holistic.scenarios.lsat",
    "holistic.scenarios.math_competition",
    "holistic.scenarios.copyright",
    "holistic.scenarios.the_pile",
    "holistic.scenarios.twitter_aae",
    "holistic.scenarios.ice",
    "holistic.scenarios.disinformation",
    "holistic.scenarios.wikifact",
    "holistic.scenarios.synthetic_reasoning_natural",
    "holistic.scenarios.dyck",
    "holistic.scenarios.legal_support",
    "holistic.scenarios.entity_matching",
    "holistic.scenarios.entity_data_imputation",
)
_loaded = False


def load_builtin() -> None:
    """Import every built-in scenario module (idempotent)."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    for module in _BUILTIN_MODULES:
        importlib.import_module(module)


def scenario_info(name: str) -> ScenarioInfo:
    load_builtin()
    return SCENARIOS.get(name).info


def create_scenario(spec: ScenarioSpec) -> Scenario:
    load_builtin()
    cls = SCENARIOS.get(spec.name)
    args: dict[str, Any] = spec.args_dict
    return cls(**args)
