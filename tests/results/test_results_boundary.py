"""Only :mod:`holistic.results` spells the store's file names: every other module reads and
writes results through it, so the layout can change in one place."""

from __future__ import annotations

import ast
from pathlib import Path

from holistic.results import layout
from holistic.results.schemas import TABLES

PACKAGE = Path(__file__).resolve().parents[2] / "holistic"
NAMES = (
    layout.SUITE_FILE,
    layout.RUN_SPEC_FILE,
    layout.ARTIFACTS_FILE,
    layout.COMPLETE_MARKER,
    layout.PARTIAL_MARKER,
    *(layout.table_file(t) for t in TABLES),
)


def _docstrings(tree: ast.AST) -> set[int]:
    """Strings standing alone as statements: module, class, function and attribute docstrings."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    }


def test_no_module_outside_results_names_a_results_file() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if (PACKAGE / "results") in path.parents:
            continue
        if path == PACKAGE / "helm" / "imports" / "layout.py":
            continue  # names HELM's own run files (its run_spec.json is not holistic's)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
                found += [f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {n}" for n in NAMES if n in node.value]
    assert found == []
