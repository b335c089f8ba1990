"""``protocol: helm``: what HELM 0.5.16's protocol fixes, and the behaviours it resolves into.

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
``max_eval_instances``, ``seed``) are free. :func:`helm_behaviour` is what the protocol means
for the adapter, metrics, perturbations and execution
(:class:`~holistic.core.specs.ProtocolBehaviour`, each behaviour with its HELM reason).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from holistic.core.interfaces import ScenarioInfo
from holistic.core.specs import MULTIPLE_CHOICE_METHODS, AdapterSpec, PromptFormat, ProtocolBehaviour
from holistic.helm.proofs import keeps_unchanged_variants

HELM_DEFAULTS: dict[str, Any] = {"eval_sampling": "helm", "answer_parsing": "helm"}
"""Adapter fields ``helm`` sets before the user's own values."""

HELM_OPTIONS: dict[str, Any] = {
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
    "choice_labels",
    "answer_pattern",
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


def helm_behaviour(scenario: str, args: Mapping[str, Any]) -> ProtocolBehaviour:
    """What ``protocol: helm`` means for a run of ``scenario`` with ``args``: every behaviour HELM's
    (see :class:`~holistic.core.specs.ProtocolBehaviour`), unchanged perturbed variants kept where
    HELM keeps them (:func:`~holistic.helm.proofs.keeps_unchanged_variants`)."""
    return ProtocolBehaviour(
        strip_cue_only=True,
        score_after_block=True,
        ranking_generates=True,
        auto_chat=False,
        helm_perturbations=True,
        keep_unchanged_variants=keeps_unchanged_variants(scenario, args),
        echoed_scoring_tokens=True,
        request_minimum=True,
        exact_match_at_run_normalization=True,
    )


def is_helm_scenario(info: ScenarioInfo) -> bool:
    """One of HELM's core scenarios (its adapter defaults are HELM's run spec)."""
    return "core" in info.tags


def helm_departure(
    adapter: AdapterSpec, user: Mapping[str, Any], recommended: Mapping[str, Any], info: ScenarioInfo
) -> tuple[str, str] | None:
    """``(field, message)`` for the first user-set field that departs from HELM, else ``None``.

    ``user`` holds the fields the spec wrote (only those can depart: the defaults are
    HELM's); ``recommended`` is the scenario's adapter for the run's arguments.
    """
    for field in sorted(user):
        if field.startswith("reasoning."):
            return field, f"{field} departs from HELM's protocol (HELM sends no reasoning setting)"
        value = getattr(adapter, field, None)
        if field in HELM_OPTIONS and _plain(value) != _plain(HELM_OPTIONS[field]):
            return field, f"{field} {_show(value)} departs from HELM's protocol (HELM: {_show(HELM_OPTIONS[field])})"
        if field == "prompt_format" and value == PromptFormat.CHAT:
            return field, "prompt_format 'chat' departs from HELM's protocol (HELM sends the plain prompt)"
        if not is_helm_scenario(info):
            continue
        helm_method = recommended.get("method", "generation")
        both_choice = value in MULTIPLE_CHOICE_METHODS and helm_method in MULTIPLE_CHOICE_METHODS
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
