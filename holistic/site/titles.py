"""Short, readable page titles for runs: the scenario, its key arguments and the system.

A run's full name spells out every argument (paths, field mappings, counts) and can
run to hundreds of characters; pages show this short title and keep the full
name folded beneath it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

_MINOR_ARGS = ("num_", "seed", "revision", "hf_revision", "dataset_splits", "cache")
_MAX_ARGS = 4
_MAX_VALUE = 28


def _short(value: Any) -> str | None:
    if isinstance(value, Mapping) or (isinstance(value, list | tuple) and len(value) > 3):
        return None
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    if "/" in text and isinstance(value, str):
        text = text.rstrip("/").rsplit("/", 1)[-1]  # a path: its file name
    return text if len(text) <= _MAX_VALUE else None


def key_args(args: Mapping[str, Any]) -> list[str]:
    """``name=value`` for the arguments that tell runs of one scenario apart."""
    out = []
    for name in sorted(args):
        if name.startswith(_MINOR_ARGS):
            continue
        text = _short(args[name])
        if text is not None:
            out.append(f"{name}={text}")
    return out[:_MAX_ARGS]


def run_title(scenario: str, args: Mapping[str, Any], system: str) -> str:
    """``scenario (key=value, ...) · system``."""
    shown = key_args(args)
    return f"{scenario}{' (' + ', '.join(shown) + ')' if shown else ''} · {system}"
