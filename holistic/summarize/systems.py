"""Systems: what a leaderboard row stands for.

A row is a model deployment *under one adaptation*. When a suite runs the same
scenario arguments on the same model with different adaptation settings (two
prompt formats, zero- and few-shot, two temperatures...), those runs are different
systems, compared side by side rather than averaged together. The adaptation fields
that vary in this way anywhere in the suite name the systems, e.g.
``embedded/smollm2-135m-instruct [prompt_format=chat]``; a suite without such
variation has one system per model, named by the model alone.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from holistic.summarize.load import RunInfo

_IGNORED = frozenset({"method"})
"""Adaptation fields that never name a system (the method already splits columns)."""


def _value_text(value: Any, limit: int = 32) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def varying_fields(runs: list[RunInfo]) -> list[str]:
    """Adaptation fields whose value differs between runs of one model on the same scenario arguments."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for run in runs:
        key = json.dumps(
            [run.model, run.scenario, run.scenario_args, run.method, run.groups], sort_keys=True, default=str
        )
        groups[key].append(dict(run.spec.get("adapter") or {}))
    fields: set[str] = set()
    for adapters in groups.values():
        if len(adapters) < 2:
            continue
        for name in set().union(*adapters):
            if name in _IGNORED:
                continue
            values = {json.dumps(a.get(name), sort_keys=True, default=str) for a in adapters}
            if len(values) > 1:
                fields.add(name)
    return sorted(fields)


def system_names(runs: list[RunInfo]) -> dict[str, str]:
    """run_id -> the name of the system the run belongs to."""
    fields = varying_fields(runs)
    out: dict[str, str] = {}
    for run in runs:
        if not fields:
            out[run.run_id] = run.model
            continue
        adapter = run.spec.get("adapter") or {}
        settings = ", ".join(f"{f}={_value_text(adapter.get(f))}" for f in fields)
        out[run.run_id] = f"{run.model} [{settings}]"
    return out
