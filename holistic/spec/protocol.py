"""Run protocols, resolved once here: ``helm`` reproduces HELM's protocol exactly, ``holistic``
allows holistic's own options.

A run's protocol is written as ``protocol:`` (per run, in ``defaults`` or at the top
of the spec); without one, HELM's core scenarios (scenarios tagged ``core``) run under
``helm`` and every other scenario under ``holistic``. The compiler resolves it into the
run's :class:`~holistic.core.specs.ProtocolBehaviour` (:func:`resolve_protocol`), which is all
the adapter, metrics, perturbations and execution read: ``helm`` through the HELM layer
(:mod:`holistic.helm.protocol`, which also says what a ``helm`` run may not change), ``holistic``
as :data:`HOLISTIC_BEHAVIOUR`. This module and :mod:`holistic.spec.conformance` are the only
doors of the library into :mod:`holistic.helm`.

Under ``holistic`` anything goes, and the defaults become holistic's own: ``eval_sampling:
stable`` (a nested sample) and ``answer_parsing: lenient`` (reported as
``exact_match_lenient`` beside HELM's ``exact_match``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from holistic.core.interfaces import ScenarioInfo
from holistic.core.specs import AdapterSpec, ProtocolBehaviour
from holistic.helm.protocol import HELM_DEFAULTS, helm_behaviour, helm_departure, is_helm_scenario

HELM = "helm"
HOLISTIC = "holistic"

PROTOCOL_DEFAULTS: dict[str, dict[str, Any]] = {
    HELM: HELM_DEFAULTS,
    HOLISTIC: {"eval_sampling": "stable", "answer_parsing": "lenient"},
}
"""Adapter fields each protocol sets before the user's own values."""

HOLISTIC_BEHAVIOUR = ProtocolBehaviour(
    strip_cue_only=False,
    score_after_block=False,
    ranking_generates=False,
    auto_chat=True,
    helm_perturbations=False,
    keep_unchanged_variants=False,
    echoed_scoring_tokens=False,
    request_minimum=False,
    exact_match_at_run_normalization=False,
)
"""What ``protocol: holistic`` means: holistic's own behaviour throughout."""


def default_protocol(info: ScenarioInfo) -> str:
    return HELM if is_helm_scenario(info) else HOLISTIC


def protocol_behaviour(protocol: str, scenario: str, args: Mapping[str, Any]) -> ProtocolBehaviour:
    """The behaviours ``protocol`` means for a run of ``scenario`` with ``args``."""
    return helm_behaviour(scenario, args) if protocol == HELM else HOLISTIC_BEHAVIOUR


def resolve_protocol(adapter: AdapterSpec, scenario: str, args: Mapping[str, Any]) -> AdapterSpec:
    """``adapter`` with the behaviours its ``protocol`` means for ``scenario`` with ``args``."""
    return replace(adapter, behaviour=protocol_behaviour(adapter.protocol, scenario, args))


def check_protocol(
    adapter: AdapterSpec, user: Mapping[str, Any], recommended: Mapping[str, Any], info: ScenarioInfo
) -> tuple[str, str] | None:
    """``(field, message)`` for the first user-set field that departs from the run's protocol, else
    ``None`` (only ``helm`` forbids anything: :func:`holistic.helm.protocol.helm_departure`)."""
    if adapter.protocol != HELM:
        return None
    return helm_departure(adapter, user, recommended, info)
