"""CONTRIBUTING.md's table of the one contract per extension kind says what the code does:
each kind's base class is the one its registry checks, every hook it lists is declared on
that base, its decorator is exported by ``holistic.plugin`` and its entry-point group is the
one the registry reads; and every name the four guides tell an author to use is exported
there (the guides' examples run in ``tests/cli/test_cli_plugins.py``)."""

from __future__ import annotations

import builtins
import enum
import re
from pathlib import Path
from typing import Any

import pytest

import holistic.plugin as plugin
from holistic.core.registry import Registry
from holistic.metrics.registry import METRICS
from holistic.models.registry import PROVIDERS
from holistic.perturbations.registry import PERTURBATIONS
from holistic.scenarios.registry import SCENARIOS

REPO = Path(__file__).resolve().parents[2]
REGISTRIES: dict[str, Registry[Any]] = {
    "scenario": SCENARIOS,
    "metric": METRICS,
    "perturbation": PERTURBATIONS,
    "model provider": PROVIDERS,
}


def _plugins_section() -> str:
    text = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    start = text.index("## Extending holistic")
    return text[start : text.index("\n## ", start + 1)]


def _table() -> dict[str, list[str]]:
    """Kind -> its row's cells (subclass, hooks, register, entry-point group)."""
    rows = {}
    for line in _plugins_section().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0] in REGISTRIES:
            rows[cells[0]] = cells[1:]
    return rows


def _names(cell: str) -> list[str]:
    """The identifiers a cell puts in backticks (``evaluate(states, ctx)`` -> ``evaluate``)."""
    return [m.group(1) for code in re.findall(r"`([^`]+)`", cell) if (m := re.match(r"@?([A-Za-z_.]+)", code))]


def _declares(cls: type, name: str) -> bool:
    """Whether ``cls`` defines ``name`` or declares it (a required attribute is annotated only)."""
    return hasattr(cls, name) or any(name in vars(k).get("__annotations__", {}) for k in cls.__mro__)


def test_the_table_has_one_row_per_extension_kind() -> None:
    assert sorted(_table()) == sorted(REGISTRIES)


@pytest.mark.parametrize("kind", sorted(REGISTRIES))
def test_each_row_names_the_base_its_registry_checks_and_hooks_that_base_declares(kind: str) -> None:
    subclass, hooks, register, group = _table()[kind]
    registry = REGISTRIES[kind]
    assert registry.base is not None
    bases = [getattr(plugin, name) for name in _names(subclass)]
    assert bases[0] is registry.base
    assert all(issubclass(b, registry.base) for b in bases)
    missing = [hook for hook in _names(hooks) if not any(_declares(b, hook) for b in bases)]
    assert missing == []
    (decorator,) = _names(register)
    assert decorator in plugin.__all__
    assert _names(group) == [registry.group]


def test_every_name_the_guides_use_is_exported_by_holistic_plugin() -> None:
    named = set(re.findall(r"`([A-Z][A-Za-z_]+)(?:\([^`]*\))?`", _plugins_section()))
    attributes = {name for r in REGISTRIES.values() for name in dir(r.base)}
    known = {*plugin.__all__, *attributes, *dir(builtins), *dir(enum)}
    missing = sorted(n for n in named if n not in known)
    assert {"BaseScenario", "BaseMetric", "BasePerturbation", "Provider", "Client"} <= named
    assert missing == []
