"""Run protocols: ``helm`` reproduces HELM's protocol exactly, ``holistic`` allows holistic's own options.

A run's protocol is written as ``protocol:`` (per run, in ``defaults`` or at the top
of the spec); without one, HELM's core scenarios (scenarios tagged ``core``) run under
``helm`` and every other scenario under ``holistic``.

Under ``helm`` the adaptation must be HELM's, so the run's prompts, requests, sampled
instances and scores are HELM's own:

- behaviour options must keep HELM's value: ``selection: helm``, ``eval_sampling:
  helm``, ``answer_parsing: helm``, ``instruction_placement: before``, no
  ``template``, no ``post_processing``, and no ``prompt_format: chat`` (``auto`` sends
  plain prompts under ``helm``);
- on a HELM scenario, the prompt and decoding fields (instructions, prefixes and
  suffixes, ``max_tokens``, ``temperature``, ``stop_sequences``, ``num_outputs``,
  ``top_k_logprobs``) must keep the scenario's HELM values, and ``method`` may only
  switch between multiple-choice methods where the scenario is multiple choice (HELM's
  ``method=`` run-spec argument); ``temperature`` is free on the summarization scenarios,
  whose HELM run specs take it as an argument (``summarization_cnndm:temperature=0.3``).

Sizes HELM also lets a user choose (``max_train_instances``, ``num_train_trials``,
``max_eval_instances``, ``seed``) are free. Under ``holistic`` anything goes, and the
defaults become holistic's own: ``eval_sampling: stable`` (a nested sample) and
``answer_parsing: lenient`` (reported as ``exact_match_lenient`` beside HELM's
``exact_match``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from holistic.core.interfaces import ScenarioInfo
from holistic.core.types import AdapterSpec, PromptFormat

HELM = "helm"
HOLISTIC = "holistic"

PROTOCOL_DEFAULTS: dict[str, dict[str, Any]] = {
    HELM: {"eval_sampling": "helm", "answer_parsing": "helm"},
    HOLISTIC: {"eval_sampling": "stable", "answer_parsing": "lenient"},
}
"""Adapter fields each protocol sets before the user's own values."""

HELM_BEHAVIOUR: dict[str, Any] = {
    "selection": "helm",
    "eval_sampling": "helm",
    "answer_parsing": "helm",
    "instruction_placement": "before",
    "template": None,
    "post_processing": (),
}
"""Adaptation options whose value under ``helm`` must be HELM's (field -> HELM's value)."""

HELM_PROMPT_FIELDS = (
    "instructions",
    "global_prefix",
    "global_suffix",
    "input_prefix",
    "input_suffix",
    "reference_prefix",
    "reference_suffix",
    "output_prefix",
    "output_suffix",
    "instance_prefix",
    "max_tokens",
    "temperature",
    "stop_sequences",
    "num_outputs",
    "top_k_logprobs",
)
"""Fields a HELM scenario's own adapter fixes under ``helm``."""

HELM_TEMPERATURE_ARG_TASKS = ("summarization",)
"""Tasks whose HELM run specs take ``temperature`` as an argument: free under ``helm``."""

_MULTIPLE_CHOICE = ("multiple_choice_joint", "multiple_choice_separate_original", "multiple_choice_separate_calibrated")


def is_helm_scenario(info: ScenarioInfo) -> bool:
    """One of HELM's core scenarios (its adapter defaults are HELM's run spec)."""
    return "core" in info.tags


def default_protocol(info: ScenarioInfo) -> str:
    return HELM if is_helm_scenario(info) else HOLISTIC


def check_protocol(
    adapter: AdapterSpec, user: Mapping[str, Any], recommended: Mapping[str, Any], info: ScenarioInfo
) -> tuple[str, str] | None:
    """``(field, message)`` for the first user-set field that departs from HELM, else ``None``.

    ``user`` holds the fields the spec wrote (only those can depart: the defaults are
    HELM's); ``recommended`` is the scenario's adapter for the run's arguments.
    """
    if adapter.protocol != HELM:
        return None
    for field in sorted(user):
        value = getattr(adapter, field, None)
        if field in HELM_BEHAVIOUR and _plain(value) != _plain(HELM_BEHAVIOUR[field]):
            return field, f"{field} {_show(value)} departs from HELM's protocol (HELM: {_show(HELM_BEHAVIOUR[field])})"
        if field == "prompt_format" and value == PromptFormat.CHAT:
            return field, "prompt_format 'chat' departs from HELM's protocol (HELM sends the plain prompt)"
        if not is_helm_scenario(info):
            continue
        helm_method = recommended.get("method", "generation")
        both_choice = value in _MULTIPLE_CHOICE and helm_method in _MULTIPLE_CHOICE
        if field == "method" and value != helm_method and not both_choice:
            return field, f"method {_show(value)} departs from HELM's run spec (HELM: {_show(helm_method)})"
        if field == "temperature" and info.task in HELM_TEMPERATURE_ARG_TASKS:
            continue
        if field in HELM_PROMPT_FIELDS:
            helm_value = recommended.get(field, getattr(AdapterSpec(), field))
            if _plain(value) != _plain(helm_value):
                return field, f"{field} {_show(value)} departs from HELM's run spec (HELM: {_show(helm_value)})"
    return None


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _show(value: Any) -> str:
    return repr(_plain(value))
