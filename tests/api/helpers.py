"""Helpers shared by the API tests."""

from __future__ import annotations

from pathlib import Path

from holistic.api import RunResult


def folder(result: RunResult) -> Path:
    """The folder of a suite a test wrote to a local output folder (a path, never a URI)."""
    assert isinstance(result.suite_dir, Path)
    return result.suite_dir
