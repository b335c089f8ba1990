"""design/contracts.md's package layering is the one the import graph has."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "check_structure.py"


def _check_structure() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_structure", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def test_the_contracts_doc_shows_the_package_graph_of_the_code() -> None:
    structure = _check_structure()
    report = structure.check()
    assert structure.documented_block() == structure.graph_block(report), (
        "design/contracts.md is out of date: run python scripts/check_structure.py --update-doc"
    )


def test_the_layers_put_every_package_above_the_packages_it_imports() -> None:
    structure = _check_structure()
    deps = {"holistic.a": set(), "holistic.b": {"holistic.a"}, "holistic.c": {"holistic.a", "holistic.b"}}
    assert structure.package_layers(deps).splitlines() == [
        "0  holistic.a  -> -",
        "1  holistic.b  -> a",
        "2  holistic.c  -> a, b",
    ]
