"""A run's reasoning setting (``adaptation.reasoning``) at compile time: folded from its layered
keys (``reasoning.effort``, ``reasoning.budget_tokens``, each of which multiplies like any other
setting) into one :class:`~holistic.core.specs.ReasoningSetting`, and checked against the run's
``max_tokens`` and each model's ``reasoning.style`` (:mod:`holistic.models.reasoning`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from holistic.core.specs import AdapterSpec, ReasoningSetting
from holistic.core.types import ModelDeployment
from holistic.models.reasoning import budget_problem, setting_problem
from holistic.spec.layers import Written
from holistic.spec.source import DocPath

PREFIX = "reasoning."


def fold_reasoning(values: dict[str, Any]) -> None:
    """Replace ``values``' ``reasoning.<key>`` entries by one ``reasoning`` setting (in place)."""
    keys = [k for k in values if k.startswith(PREFIX)]
    if keys:
        given = {k.removeprefix(PREFIX): values.pop(k) for k in keys}
        values["reasoning"] = ReasoningSetting(effort=given.get("effort"), budget_tokens=given.get("budget_tokens"))


def reasoning_error(
    adapter: AdapterSpec, user: Mapping[str, Written], deployment: ModelDeployment
) -> tuple[DocPath, str] | None:
    """Where and why the run's reasoning setting cannot be (``None`` when it can): a budget that is
    negative or larger than ``max_tokens``, a setting the deployment does not take."""
    setting = adapter.reasoning
    if setting is None:
        return None
    if setting.budget_tokens is not None:
        problem = budget_problem(setting.budget_tokens, adapter.max_tokens)
        if problem is not None:
            return user[PREFIX + "budget_tokens"].path, problem
    for key, value in sorted(setting.as_dict().items()):
        problem = setting_problem(deployment, key, value)
        if problem is not None:
            return user[PREFIX + key].path, problem
    return None
