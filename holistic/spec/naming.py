"""Readable run names: ``scenario:arg=v,...,method=...,model=...``.

The name is for people (tables, logs, the site); identity is the run id, which
hashes the whole canonical spec. The name shows every scenario argument, the
method, the adaptation fields the run entry sets itself or multiplies over
(when short enough to read), and the model.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from holistic.core.specs import ADAPTER_FIELDS
from holistic.core.types import AdapterSpec, ScenarioSpec

_MAX_SHOWN_CHARS = 24
_ADAPTER_FIELDS = frozenset(ADAPTER_FIELDS)


def run_name(
    label: str, scenario: ScenarioSpec, adapter: AdapterSpec, model: str, shown_fields: Collection[str]
) -> str:
    """The readable name of one run (``label`` is the entry's ``name`` or the scenario name)."""
    parts = [f"{key}={format_value(value)}" for key, value in scenario.args]
    parts.append(f"method={adapter.method}")
    for key in sorted(shown_fields):
        if key == "method" or key not in _ADAPTER_FIELDS:
            continue
        text = format_value(getattr(adapter, key))
        if len(text) <= _MAX_SHOWN_CHARS and "," not in text:
            parts.append(f"{key}={text}")
    parts.append(f"model={model}")
    return f"{label}:{','.join(parts)}"


def format_value(value: Any) -> str:
    """A short text form of a spec value (booleans and null as in YAML, lists joined by ``|``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "|".join(format_value(v) for v in value)
    if isinstance(value, dict):
        return "|".join(f"{k}:{format_value(v)}" for k, v in sorted(value.items()))
    if isinstance(value, str) and (not value.isprintable() or " " in value):
        return json.dumps(value, ensure_ascii=False)
    return str(value)
