"""HELM's ``schema_*.yaml`` given to ``helm-summarize --schema``: its run groups, as HELM's site groups them.

HELM's schema lists run groups: leaves, one per benchmark (``mmlu``, ``natural_qa_closedbook``,
``summarization_cnndm``), and parents whose ``subgroups`` name other groups (``core_scenarios``
-> ``question_answering`` -> ``mmlu``, ...). :func:`translate` turns each into a holistic run group
of the scenarios its leaves are (parents flattened, in HELM's order), keeping holistic's metric
groups (HELM's metric groups name HELM's stat names per split, which holistic's leaderboards
already read), so the site's leaderboards are grouped as HELM's site groups them. A leaf holistic
has no scenario for is left out and named in its group's description.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from holistic.helm.entry_table import DISPATCH, FUNCTIONS

_LEAVES: dict[str, str] = {
    "natural_qa_closedbook": "natural_qa",
    "natural_qa_openbook_longans": "natural_qa",
    "msmarco_regular": "msmarco",
    "msmarco_trec": "msmarco",
    "summarization_cnndm": "cnn_dailymail",
    "summarization_xsum": "xsum",
    "gsm": "gsm8k",
    "wikitext_103": "wikitext",
    "code": "humaneval",
    "commonsense": "hellaswag",
}
"""HELM's leaf run groups whose name is not a holistic scenario's or a HELM run-spec function's."""
MAX_GROUPS = 10_000


def is_helm_schema(data: object) -> bool:
    """Whether a schema file is HELM's (run groups with ``subgroups``/``display_name``/``metric_groups``
    as lists of names, or HELM's top-level ``metrics``/``perturbations``/``adapter``)."""
    if not isinstance(data, Mapping):
        return False
    if any(key in data for key in ("adapter", "perturbations", "metrics")):
        return True
    groups = data.get("run_groups")
    return isinstance(groups, list) and any(
        isinstance(g, Mapping) and ("subgroups" in g or "display_name" in g or "environment" in g) for g in groups
    )


def leaf_scenario(name: str) -> str | None:
    """The holistic scenario of HELM's leaf run group ``name`` (``None``: holistic has none)."""
    from holistic.scenarios.registry import BUILTIN_SCENARIOS

    if name in _LEAVES:
        return _LEAVES[name]
    if name in BUILTIN_SCENARIOS:
        return name
    if name in FUNCTIONS:
        return FUNCTIONS[name].scenario
    for _, choices in DISPATCH.values():
        if name in choices:
            return choices[name].scenario
    return None


def translate(data: Mapping[str, Any], builtin: Mapping[str, Any]) -> dict[str, Any]:
    """HELM's schema -> a holistic summary schema: ``builtin``'s metric groups and medians, HELM's run groups."""
    groups = [g for g in (data.get("run_groups") or []) if isinstance(g, Mapping) and isinstance(g.get("name"), str)]
    by_name = {str(g["name"]): g for g in groups[:MAX_GROUPS]}

    def leaves(name: str, seen: frozenset[str]) -> list[str]:
        group = by_name.get(name)
        subgroups = group.get("subgroups") if group is not None else None
        if not isinstance(subgroups, list) or not subgroups:
            return [name]
        out: list[str] = []
        for sub in subgroups:
            if isinstance(sub, str) and sub not in seen:  # a cycle is cut, never followed
                out.extend(leaves(sub, seen | {sub}))
        return out

    run_groups = []
    for name, group in by_name.items():
        names = list(dict.fromkeys(leaves(name, frozenset({name}))))
        scenarios = list(dict.fromkeys(s for s in (leaf_scenario(n) for n in names) if s is not None))
        if not scenarios:
            continue
        missing = [n for n in names if leaf_scenario(n) is None]
        text = str(group.get("description") or group.get("display_name") or name).strip()
        if missing:
            text += f" (HELM's {', '.join(missing[:10])}{' ...' if len(missing) > 10 else ''}: no holistic scenario)"
        run_groups.append({"name": name, "description": text, "scenarios": scenarios})
    return {
        "metric_groups": list(builtin.get("metric_groups") or []),
        "run_groups": run_groups,
        "medians": dict(builtin.get("medians") or {}),
    }
