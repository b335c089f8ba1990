"""Layering of run-spec values: ``defaults`` under each run, shorthands folded in.

Every value keeps the document path it was written at, so errors found after
layering (an unknown model, a bad scenario argument) still point at the line the
user wrote.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from holistic.spec.source import DocPath, Locations

SHORTHAND_FIELDS = ("max_eval_instances", "num_train_trials")
"""Run/default-level keys that are shorthands for ``adaptation.<key>``."""

NON_MULTIPLYING_FIELDS = ("stop_sequences", "post_processing", "choice_labels")
"""Adaptation fields whose value is itself a list (a list does not multiply them)."""

NESTED_FIELDS = ("reasoning",)
"""Adaptation fields written as a mapping whose keys layer and multiply one by one, as
``reasoning.effort`` and ``reasoning.budget_tokens`` (a run's ``reasoning: {effort: high}`` over
``defaults``' ``reasoning: {budget_tokens: 2048}`` gives both)."""


@dataclass(frozen=True)
class Written:
    """A value and the document path it was written at."""

    value: Any
    path: DocPath


def adaptation_layer(block: Mapping[str, Any], at: DocPath, locations: Locations) -> dict[str, Written]:
    """The adaptation values of one level (``defaults`` or a run), shorthands included.

    A shorthand given both ways at the same level is an error.
    """
    out: dict[str, Written] = {}
    adaptation = block.get("adaptation") or {}
    for key, value in adaptation.items():
        if key in NESTED_FIELDS and isinstance(value, Mapping):
            for sub, item in value.items():
                out[f"{key}.{sub}"] = Written(item, (*at, "adaptation", key, sub))
            continue
        out[key] = Written(value, (*at, "adaptation", key))
    for key in SHORTHAND_FIELDS:
        if key in block:
            if key in out:
                raise locations.error(
                    (*at, key), f"{key} is given twice at this level (here and in adaptation.{key}); keep one"
                )
            out[key] = Written(block[key], (*at, key))
    return out


def layered(run: Mapping[str, Any], defaults: Mapping[str, Any], key: str, run_at: DocPath) -> Written | None:
    """``run[key]`` if the run sets it, else ``defaults[key]``, else ``None``."""
    if key in run:
        return Written(run[key], (*run_at, key))
    if key in defaults:
        return Written(defaults[key], ("defaults", key))
    return None


def axes(layer: Mapping[str, Written], *, multiplies: Any) -> list[tuple[str, list[Written]]]:
    """Split values into multiplication axes, in sorted key order.

    A list value becomes one axis entry per item (with the item's own path) when
    ``multiplies(key)`` is true; anything else is a single-valued axis.
    """
    out: list[tuple[str, list[Written]]] = []
    for key in sorted(layer):
        written = layer[key]
        if isinstance(written.value, list) and multiplies(key):
            out.append((key, [Written(v, (*written.path, i)) for i, v in enumerate(written.value)]))
        else:
            out.append((key, [written]))
    return out
