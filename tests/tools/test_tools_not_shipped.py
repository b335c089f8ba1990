"""The wheel ships the package only: neither the tools nor the tests' support code."""

from __future__ import annotations

import tomllib
from pathlib import Path

from setuptools import find_packages

REPO = Path(__file__).resolve().parents[2]


def test_the_package_find_leaves_out_tools_and_tests() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    find = config["tool"]["setuptools"]["packages"]["find"]
    packages = find_packages(str(REPO), include=find.get("include", ["*"]), exclude=find.get("exclude", []))
    assert "holistic" in packages and "holistic.results" in packages
    assert not [p for p in packages if not p.startswith("holistic")], packages
    assert not [p for p in packages if p.startswith("holistic.testing")], packages
